from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from example_suite import build_memory, example_suite, export_project

from bench.provision import Provisioner, SnapshotReceipt, provisioned
from bench.provision.code import resolve_provisioner
from bench.store import Store
from bench.suite.suite import Suite


@pytest.fixture(scope="session")
def suite() -> Suite:
    return example_suite()


@pytest.fixture(scope="session")
def packaged(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """The removed paths and the redacted project tree every arm starts from (never modify it: copy it)."""
    base = tmp_path_factory.mktemp("packaged")
    return export_project(suite, Store(base / "store"), base / "tree")


@pytest.fixture
def workspace(packaged: tuple[list[str], Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(packaged[1], tmp_path / "workspace"))


@pytest.fixture(scope="session")
def memory_state(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_memory(suite, tmp_path_factory.mktemp("memory") / "state.sqlite")


@pytest.fixture
def fresh_workspace(packaged: tuple[list[str], Path], tmp_path: Path) -> Callable[[str], Path]:
    def make(name: str) -> Path:
        return Path(shutil.copytree(packaged[1], tmp_path / name))

    return make


@pytest.fixture(scope="session")
def static_notes(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, SnapshotReceipt, list[Path]]:
    """The static baseline restored through the real adapter: its notes file's text, its snapshot receipt, and
    what its home held while live (destroyed since)."""
    home = tmp_path_factory.mktemp("notes-home")
    argv = (*resolve_provisioner(suite.manifest.memory_system("static-notes"), suite.root), "--home", str(home))
    seen: list[Path] = []

    async def go() -> tuple[str, SnapshotReceipt]:
        provisioner = Provisioner(argv, suite.fixture_root)
        async with provisioned(provisioner, suite.fixture, suite.manifest.fixture.graph_arm, "r1.a1") as session:
            seen.extend(home.rglob("*"))
            locations = session.restored.locations
            assert locations is not None
            return Path(locations.paths["notes"]).read_text(encoding="utf-8"), await session.snapshot()

    notes, receipt = asyncio.run(go())
    return notes, receipt, seen
