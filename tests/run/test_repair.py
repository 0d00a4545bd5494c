"""`store fsck --repair` on a copy of the demo's project: a flipped byte and a lost object, healed; the demo then
verifies (issue 31). Before, `store put` of the good bytes changed nothing and a rerun was all cached."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from demo_runs import DemoRuns, bench_command, demo

from bench.contracts import Digest
from bench.store import Store
from bench.store.actions import ActionKey, recorded_from

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


@pytest.fixture
def project(demo_runs: DemoRuns, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(demo_runs.project, copy, symlinks=True)
    return copy


def _flip(store: Path, digest: Digest) -> None:
    """One byte of a small object changed where the index keeps it inline."""
    with contextlib.closing(sqlite3.connect(store / "index.sqlite", isolation_level=None)) as index:
        (data,) = index.execute("SELECT data FROM objects WHERE hex = ?", (digest.hex,)).fetchone()
        assert data is not None, "a grade receipt is small enough to be kept in the index"
        index.execute("UPDATE objects SET data = ? WHERE hex = ?", (bytes([data[0] ^ 1]) + data[1:], digest.hex))


def _lose(store: Path, digest: Digest) -> None:
    """The object's bytes gone, wherever they were (its loose file, its pack entry or its row): the index keeps it."""
    loose = store / "objects" / digest.hex[:2] / digest.hex
    if loose.exists():
        loose.unlink()
        return
    with contextlib.closing(sqlite3.connect(store / "index.sqlite", isolation_level=None)) as index:
        index.execute("UPDATE objects SET data = NULL, pack = NULL WHERE hex = ?", (digest.hex,))


def test_repair_heals_a_flipped_byte_and_a_lost_object_and_the_demo_verifies(project: Path) -> None:
    store_path, published = project / "store", project / "published" / "example"
    grade = Digest.of((published / "receipts" / "harbor-holds" / "1" / "control-grade.json").read_bytes())
    store = Store(store_path)
    bundled = next(r for r in recorded_from(store, 0) if store.get_document(r.key, ActionKey).stage == "bundle")
    lost = bundled.outputs["bundle"]  # the bundle stage's tree: no published file holds it
    del store
    _flip(store_path, grade)
    _lose(store_path, lost)
    found = bench_command(project, "store", "fsck")
    assert found.returncode == 5, found.stdout  # corrupt and missing
    done = bench_command(project, "--json", "store", "fsck", "--repair", "--from", str(published))
    assert done.returncode == 0, done.stdout + done.stderr
    repaired = json.loads(done.stdout)
    assert repaired["healed"] == [grade] and repaired["dropped"] == [lost]
    assert [item["stage"] for item in repaired["run_again"]] == ["bundle"]
    assert bench_command(project, "store", "fsck").returncode == 4  # the bundle's tree: missing until it runs again
    again = demo(project).result
    assert again["verified"] and again["stages"] == ["bundle"]
    clean = bench_command(project, "store", "fsck")
    assert clean.returncode == 0, clean.stdout
