"""What a deterministic memory retrieves for a challenge's prompt: the reference provisioner, a real subprocess
through the real adapter, names the documents of each context it would inject, in the context's order, and the
runner keeps them beside the challenge's oracle; a refusal or a system that names nothing is not measured."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

from bench.agent.retrieval_score import score_retrieval
from bench.agent.treatment_memory import LiveMemory, live_memory
from bench.analysis.retrieval import recall_precision
from bench.provision import Provisioner
from bench.provision.fixture import verify_artifact
from bench.provision.messages import HookEvent, HookEventName, RetrieveResponse
from bench.provision.pool import pool_documents, seed_corpus
from bench.provision.protocol_call import CallRecord
from bench.suite.suite import open_suite

REPO = Path(__file__).resolve().parents[2]
SUITE = open_suite(REPO / "challenges" / "example")
HOLDS = SUITE.challenge("harbor-holds")
_NAMED = re.compile(r"^- (?:\[[a-z]+\] )?(\S+\.md): ", re.M)


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveMemory]:
    """The reference memory restored from the example's evidence with its 500 distractors beside it."""
    scratch = tmp_path_factory.mktemp("noisy")
    assert SUITE.fixture.distractors is not None
    for path, data in pool_documents(SUITE.fixture.distractors, 500):
        (scratch / "pool" / path).parent.mkdir(parents=True, exist_ok=True)
        (scratch / "pool" / path).write_bytes(data)
    corpus = seed_corpus(verify_artifact(SUITE.fixture_root, SUITE.fixture.evidence_corpus), scratch / "pool",
                         scratch / "evidence")  # fmt: skip
    provisioner = Provisioner(
        (sys.executable, "-m", "bench.memory", "--home", str(scratch / "home")), SUITE.fixture_root
    )
    with live_memory(provisioner, SUITE.fixture, "backfilled", "score.1", corpus) as live:
        yield live


def test_retrieve_names_the_documents_of_each_context_in_the_context_s_order(noisy: LiveMemory) -> None:
    events = (
        HookEvent(hook_event_name=HookEventName.USER_PROMPT_SUBMIT, cwd="/workspace", prompt=HOLDS.manifest.prompt),
        HookEvent(hook_event_name=HookEventName.USER_PROMPT_SUBMIT, cwd="/workspace", prompt="zzz qqq"),
        HookEvent(
            hook_event_name=HookEventName.POST_TOOL_USE,
            cwd="/workspace",
            tool_name="Read",
            tool_input={"file_path": "/workspace/tallybook/importer.py"},
        ),
    )
    answer = noisy.answer(events, [])
    assert answer.sources is not None and len(answer.sources) == len(answer.contexts) == 3
    for context, sources in zip(answer.contexts, answer.sources, strict=True):
        assert list(sources) == ([] if context is None else _NAMED.findall(context))
    assert answer.contexts[1] is None and answer.sources[1] == ()
    assert "adr/0002-drop-card-holds.md" in answer.sources[2]  # anchored on the importer, noise or not


def test_the_score_keeps_what_the_prompt_retrieves_beside_the_oracle(noisy: LiveMemory) -> None:
    oracle, depths = HOLDS.entry.oracle, SUITE.fixture.retrieval_k
    score = score_retrieval("reference", HOLDS.manifest.prompt, oracle, depths, noisy.answer)
    assert score.note == "" and [call.verb.value for call in score.calls] == ["retrieve"]
    assert set(score.oracle) == set(oracle) and score.depths == depths
    (sources,) = noisy.answer((score.query,), []).sources or [()]
    assert score.retrieved == sources  # what the prompt hook would inject, in its order
    assert score.retrieved[0] == "adr/0002-drop-card-holds.md"  # the decision still ranks first among the noise


def test_a_distractor_retrieved_first_counts_as_a_miss_never_as_the_oracle() -> None:
    def answer(events: tuple[HookEvent, ...], log: list[CallRecord]) -> RetrieveResponse:
        ranked = ("notes/budgetbee-1007-pending-rows-are-skipped-at.md", "issues/0014-groceries-counted-twice.md")
        return RetrieveResponse(contexts=("notes",), sources=(ranked,), retrieve_seconds=0.0)

    score = score_retrieval("x", HOLDS.manifest.prompt, HOLDS.entry.oracle, (1, 3), answer)
    assert score.retrieved is not None
    assert recall_precision(score.oracle, score.retrieved, 1) == (Fraction(0), Fraction(0))
    assert recall_precision(score.oracle, score.retrieved, 3) == (Fraction(1, 2), Fraction(1, 3))


def test_a_refused_retrieve_or_one_that_names_nothing_is_recorded_as_not_measured() -> None:
    def refused(events: tuple[HookEvent, ...], log: list[CallRecord]) -> RetrieveResponse:
        from bench.provision.errors import ProvisionRefused, RefusalReason

        raise ProvisionRefused(RefusalReason.NONZERO_EXIT, "retrieve exited 1", verb="retrieve")

    def silent(events: tuple[HookEvent, ...], log: list[CallRecord]) -> RetrieveResponse:
        return RetrieveResponse(contexts=(None,) * len(events), retrieve_seconds=0.0)

    gone = score_retrieval("x", "prompt", ("a.md",), (3,), refused)
    assert gone.retrieved is None and gone.note.startswith("retrieve was refused (nonzero-exit)")
    quiet = score_retrieval("x", "prompt", ("a.md",), (3,), silent)
    assert quiet.retrieved is None and quiet.note == "retrieve names no documents, only contexts"
