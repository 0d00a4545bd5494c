from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from demo_runs import DemoRuns, run_demo_twice
from s3server import S3Server, seaweed

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


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """One SeaweedFS S3 server on loopback for the session; the AWS variables of this process point at it."""
    with seaweed() as server, pytest.MonkeyPatch.context() as patch:
        for name, value in server.environment.items():
            patch.setenv(name, value)
        yield server


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> DemoRuns:
    """The demo twice, as a user runs it (tests/demo_runs.py); the demo's tests and the cluster's share it."""
    return run_demo_twice(tmp_path_factory)
