from __future__ import annotations

from pathlib import Path

import pytest

from tests.packaging.gitrepos import RepoFactory, repo_factory


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoFactory:
    return repo_factory(tmp_path)
