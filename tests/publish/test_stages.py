"""The analyze and report stages on the real store and engine agree byte for byte with a published bundle."""

from __future__ import annotations

from pathlib import Path

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.contracts import Digest
from bench.run.catalogue import services
from bench.stages.analyze import AnalyzeParams, analyze
from bench.stages.publish import publish_directory
from bench.stages.report import ReportParams, report
from bench.store import Store
from tests.publish.bundle_factory import write_bundle


def test_store_stages_match_the_published_directory(tmp_path: Path, store: Store) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    verdicts: dict[str, Digest] = {
        f"{folder}/{p.stem}": store.put_bytes(p.read_bytes(), document=True)
        for folder in ("records", "admissions")
        for p in sorted((root / folder).iterdir())
    }
    verdicts |= {  # the preregistrations the records ran under: analyze refuses records without theirs
        f"preregistrations/{p.relative_to(root / 'manifests').with_suffix('').as_posix()}": store.put_bytes(
            p.read_bytes()
        )
        for p in sorted((root / "manifests").rglob("*.json"))
    }
    first = execute(StageContext(store, services()), analyze, verdicts, AnalyzeParams(confidence="0.95"))
    again = execute(StageContext(store, services()), analyze, verdicts, AnalyzeParams(confidence="0.95"))
    assert first.executed and not again.executed and again.outputs == first.outputs
    inputs = {k: v for k, v in verdicts.items() if not k.startswith("preregistrations/")}
    inputs["summary"] = first.outputs["summary"]
    html = execute(StageContext(store, services()), report, inputs, ReportParams(suite=root.name))
    publish_directory(root)
    assert store.get_bytes(first.outputs["summary"]) == (root / "receipts/statistics-summary.json").read_bytes()
    assert store.get_bytes(html.outputs["report"]) == (root / "report/index.html").read_bytes()
