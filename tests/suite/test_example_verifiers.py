"""Calibration on this host: every verifier fails on the untouched project and passes once its oracle ran."""

from __future__ import annotations

from pathlib import Path

import pytest
from example_suite import run_script

from bench.suite.suite import Suite

CHALLENGES = ["harbor-holds", "transaction-memo", "spreadsheet-export", "rule-letter-case"]


@pytest.mark.parametrize("challenge_id", CHALLENGES)
def test_verifier_fails_untouched_and_passes_with_the_oracle(suite: Suite, workspace: Path, challenge_id: str) -> None:
    loaded = suite.challenge(challenge_id)
    assert loaded.manifest.oracle is not None
    verifier = loaded.directory / loaded.manifest.verifier.asset.path
    untouched = run_script(verifier, workspace)
    assert untouched.returncode == 1 and untouched.stdout.strip(), untouched
    oracle = run_script(loaded.directory / loaded.manifest.oracle.asset.path, workspace)
    assert oracle.returncode == 0, oracle.stderr
    solved = run_script(verifier, workspace)
    assert solved.returncode == 0, solved.stdout + solved.stderr


def test_every_challenge_of_the_suite_is_calibrated_here(suite: Suite) -> None:
    assert sorted(CHALLENGES) == sorted(c.manifest.challenge_id for c in suite.challenges)
