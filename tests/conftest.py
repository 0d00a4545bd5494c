from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from demo_runs import DemoRuns, run_demo_twice
from s3server import S3Server, seaweed

from bench.builder import StageContext
from bench.run.catalogue import services
from bench.store import Store


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as a terminal's foreground job gets it, however the suite was started: a shell that starts a command
    in the background without job control (``bash .ci/run &``) starts it with SIGINT ignored, which Python keeps and
    every child inherits, so the tests that press Ctrl-C on a run (in this process or a child) would see nothing."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
