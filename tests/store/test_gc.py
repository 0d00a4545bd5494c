from __future__ import annotations

import os
from pathlib import Path

from bench.run.catalogue import services
from bench.stages import StageContext
from bench.stages import execute
from bench.stages.directory_tree import directory_fingerprint, directory_tree
from bench.stages.tree_summary import tree_summary
from bench.stages.lineage import lineage
from bench.store import PACK_LIMIT, Store, tree_from_directory, walk_tree
from bench.store.fsck import FsckStatus, fsck
from bench.store.gc import gc


def test_gc_keeps_everything_reachable_from_refs_with_its_lineage(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.txt").write_text("kept")
    (source / "big.bin").write_bytes(os.urandom(PACK_LIMIT))
    params = {"directory": str(source), "fingerprint": directory_fingerprint(source)}
    tree = execute(StageContext(store, services()), directory_tree, {}, params).outputs["tree"]
    summary = execute(StageContext(store, services()), tree_summary, {"tree": tree}, {}).outputs["summary"]
    store.set_ref("suite/demo", summary)
    garbage = store.put_bytes(b"nobody points here")
    garbage_big = store.put_bytes(os.urandom(PACK_LIMIT))

    report = gc(store, grace_seconds=0)

    assert not store.has(garbage) and not store.has(garbage_big)
    assert not store.loose_path(garbage_big.hex).exists()
    assert report.deleted == 2
    assert store.has(summary) and store.has(tree)
    assert all(store.has(entry.digest) for _, entry in walk_tree(store, tree))
    chain = lineage(store, summary)
    assert chain.stage == "tree-summary" and chain.inputs["tree"].stage == "directory-tree"
    assert fsck(store).status is FsckStatus.CLEAN


def test_gc_spares_young_objects_and_never_a_ref(store: Store, tmp_path: Path) -> None:
    young = store.put_bytes(b"written a moment ago")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    tree = tree_from_directory(store, tmp_path / "d")
    store.set_ref("keep", tree)
    gc(store)  # default grace: an hour
    assert store.has(young)
    gc(store, grace_seconds=0)
    assert not store.has(young)
    assert store.has(tree)
