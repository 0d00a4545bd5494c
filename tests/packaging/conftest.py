from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.forks import recorded_forks
from tests.packaging.gitrepos import RepoFactory, repo_factory


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoFactory:
    return repo_factory(tmp_path)


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process ids this process forks, from here on."""
    return recorded_forks(monkeypatch)
