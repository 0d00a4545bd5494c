from __future__ import annotations

from pathlib import Path

import pytest

from bench.run.catalogue import services
from bench.stages import StageContext
from bench.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "store")


@pytest.fixture
def context(store: Store) -> StageContext:
    """The store with the runtime's services (the Docker engine), as the pipeline gives stages."""
    return StageContext(store, services())
