"""The report's section on memory under noise: effect per pool size, cost per pass with its paired test, and
recall@k beside delivery, with a system that has no deterministic retrieval shown as not measured, never zero."""

from __future__ import annotations

import random
import re
from decimal import Decimal
from html import unescape

from bench.analysis import Build, PairedAttempt, summarize
from bench.analysis.retrieval import RetrievalResult
from bench.contracts import Digest
from bench.gateway import Mode
from bench.publish.noise import noise_section
from tests.analysis.attempt_factory import arm, attempt, key, record_digest

ORACLE = ("adr/0002.md", "issues/0014.md")


def _records(mode: Mode) -> list[PairedAttempt]:
    rng = random.Random(11)
    records = []
    for system, retrieval in (("reference", ("adr/0002.md", "notes/x-1001.md", "issues/0014.md")), ("static", None)):
        for size in (0, 500):
            changes = {"treatment_condition": f"{system}:g", "distractors": size, "fixture": Digest.of(b"f")}
            the_key = key("alpha", mode=mode).model_copy(update=changes)
            for number in range(1, 7):
                control = arm(rng.random() < 0.4, 40_000).model_copy(update={"spent_usd": Decimal("0.12")})
                treatment = arm(True, 30_000 + size * 100, delivered=True).model_copy(
                    update={"spent_usd": Decimal("0.10")}
                )
                found = (
                    None if retrieval is None else RetrievalResult(oracle=ORACLE, depths=(1, 3), retrieved=retrieval)
                )
                made = attempt(number, control, treatment, the_key, Build(label=system, sequence=1))
                records.append(made.model_copy(update={"retrieval": found}))
    return records


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


def test_the_section_shows_each_pool_size_cost_per_pass_and_recall_beside_delivery() -> None:
    summary = summarize({record_digest(r): r for r in _records(Mode.FORWARD)})
    html = noise_section(summary)
    text = " ".join(_text(html).split())
    assert "Each memory system's effect against the size of its distractor pool" in text
    for size in ("none", "500 distractors"):
        assert f"{size}:" in text  # one separation paragraph per pool size
    assert "30,000 tokens, 0.100000 USD over 6 pass(es) of 6" in text  # reference at no pool: 180,000 / 6
    assert "80,000 tokens" in text  # at 500 distractors: 30,000 + 50,000 per arm
    assert "0.50 / 1.00" in text and "1.00 / 0.67" in text  # recall / precision: 1 of 2 at 1, 2 of 2 (of 3) at 3
    assert text.count("not measured: the memory system declares no deterministic retrieval") == 2 * 2  # cells, depths
    assert "0.00 / 0.00" not in text  # the static system is not measured, never scored zero
    assert "exact sign test p" in text or "exploratory" in text


def test_in_policy_mode_the_section_says_the_costs_are_estimates_and_tests_nothing() -> None:
    summary = summarize({record_digest(r): r for r in _records(Mode.POLICY)})
    text = " ".join(_text(noise_section(summary)).split())
    assert "estimated (policy mode)" in text
    assert "not tested: policy mode, estimated tokens" in text
    assert "USD" not in text.replace("USD)", "")
