"""What the tests of the demo's published bundle share: a copy of it, and the key that signed it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from demo_runs import DemoRuns

from bench.publish.signing import load_public_key, public_key_path
from bench.publish.verification import Trust


@pytest.fixture
def key(demo_runs: DemoRuns) -> Path:
    """The demo project's publisher key, which signed the bundle (a forger who holds it re-signs what they forge)."""
    return demo_runs.project / "keys" / "publisher.key"


@pytest.fixture
def trust(key: Path) -> Trust:
    return Trust(keys=(load_public_key(public_key_path(key)),))


@pytest.fixture
def bundle(demo_runs: DemoRuns, tmp_path: Path) -> Path:
    """A copy of the demo's published bundle, to tamper with."""
    copy = tmp_path / "bundle"
    shutil.copytree(demo_runs.published, copy)
    return copy
