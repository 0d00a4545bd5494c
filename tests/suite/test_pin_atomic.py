"""`pin` writes nothing unless every pin succeeds: a stale pin computed before a pin that cannot be is not written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from demo_runs import REPO, bench_command

from bench.scaffold import pin_suite

EXAMPLE = REPO / "challenges" / "example"


def test_a_failing_pin_leaves_every_pinned_document_byte_identical(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(EXAMPLE, suite, symlinks=True)
    evidence = next(path for path in sorted((suite / "fixture" / "evidence").rglob("*.md")))
    evidence.write_text(evidence.read_text() + "\nAn edit made on purpose.\n")  # the fixture's pin is now stale
    documents = [suite / "fixture" / "fixture.json", suite / "suite.json", suite / "harbor-holds" / "challenge.json"]
    before = {path: path.read_bytes() for path in documents}
    (suite / "rule-letter-case" / "policy.json").unlink()  # a pin computed after the fixture's cannot be
    done = bench_command(tmp_path, "--json", "pin", str(suite))
    lines = done.stdout.splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stdout + done.stderr
    refused = json.loads(lines[0])["error"]
    assert "rule-letter-case/policy.json" in refused["message"], refused
    assert {path: path.read_bytes() for path in documents} == before
    assert not [path for path in suite.rglob("*.tmp")]
    shutil.copy2(EXAMPLE / "rule-letter-case" / "policy.json", suite / "rule-letter-case" / "policy.json")
    changed = pin_suite(suite)  # with every source present the stale pin is written, the others left
    assert [pin.field for pin in changed] == ["evidence_corpus.sha256"]
    assert (suite / "suite.json").read_bytes() == before[suite / "suite.json"]
    assert (suite / "fixture" / "fixture.json").read_bytes() != before[suite / "fixture" / "fixture.json"]
    assert pin_suite(suite, write=False) == []
