"""The analyze and report stages on the real store and engine agree byte for byte with a published bundle."""

from __future__ import annotations

from pathlib import Path

from bench.contracts import PortablePath
from bench.publish import publish
from bench.run.analyze import AnalyzeParams, analyze
from bench.run.catalogue import services
from bench.run.report import report
from bench.stages import NoParams, StageContext
from bench.stages.engine import execute
from bench.store import FileEntry, Store, tree_from_entries
from bench.store.trees import EntryKind
from tests.publish.bundle_factory import write_bundle


def test_store_stages_match_the_bundle_receipts(tmp_path: Path, store: Store) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    entries = [
        FileEntry(PortablePath(p.relative_to(root).as_posix()), EntryKind.FILE, p.read_bytes())
        for folder in ("records", "admissions", "manifests")
        for p in sorted((root / folder).rglob("*.json"))
    ]
    tree = tree_from_entries(store, entries)
    first = execute(StageContext(store, services()), analyze, {"bundle": tree}, AnalyzeParams(confidence="0.95"))
    again = execute(StageContext(store, services()), analyze, {"bundle": tree}, AnalyzeParams(confidence="0.95"))
    assert first.executed and not again.executed and again.outputs == first.outputs
    html = execute(
        StageContext(store, services()), report, {"bundle": tree, "summary": first.outputs["summary"]}, NoParams()
    )
    publish(root)
    assert store.get_bytes(first.outputs["summary"]) == (root / "receipts/statistics-summary.json").read_bytes()
    assert store.get_bytes(html.outputs["report"]) == (root / "report/index.html").read_bytes()
