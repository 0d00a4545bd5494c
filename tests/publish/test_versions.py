"""A re-grade publishes a new bundle version beside the old one; the old one stays and still verifies (issue 14,
item 7): the plan's publication ref keeps every bundle it named, and the export lists the superseded ones."""

from __future__ import annotations

import json
from pathlib import Path

from bench.cli.publish_cmd import verify_bundle
from bench.contracts import Digest
from bench.pipeline.doit_tasks import run_invocation
from bench.pipeline.plan import Invocation
from bench.publish.verification import Trust
from bench.run.catalogue import runtime
from bench.run.runner import export_published
from bench.stages.publish import publish_directory
from bench.store import Store, tree_from_directory
from bench.store.versions import set_versioned_ref, version_index
from tests.publish.bundle_factory import write_bundle

REF = "published/example"


def _published(tmp: Path, store: Store, confidence: str) -> Digest:
    """A published bundle as a tree: the same records, graded with another confidence (a stand-in re-grade)."""
    root = tmp / f"bundle-{confidence}"
    write_bundle(root)
    publish_directory(root, confidence)
    return tree_from_directory(store, root)


def test_a_re_grade_keeps_the_previous_bundle_listed_as_superseded_and_verifiable(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    first, second = _published(tmp_path, store, "0.95"), _published(tmp_path, store, "0.9")
    assert first != second
    assert set_versioned_ref(store, REF, first) == 1
    assert set_versioned_ref(store, REF, first) == 1  # the same bundle again is no new version
    assert set_versioned_ref(store, REF, second) == 2
    index = version_index(store, REF)
    assert index.current == second
    assert [(v.version, v.digest, v.superseded) for v in index.versions] == [(1, first, True), (2, second, False)]
    target = tmp_path / "out" / "example"
    export_published(store, REF, target)
    kept = tmp_path / "out" / "example-versions"
    assert json.loads((kept / "index.json").read_bytes())["versions"][0]["superseded"] is True
    for bundle in (target, kept / "v1"):
        assert verify_bundle(bundle / "MANIFEST.json", Trust(unsigned=True)).verified, bundle
    summary = "receipts/statistics-summary.json"
    assert (target / summary).read_bytes() != (kept / "v1" / summary).read_bytes()


def test_the_plan_sets_its_publication_ref_as_a_version(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    tree = _published(tmp_path, store, "0.95")
    invocation = Invocation(
        name="summarize", stage="tree-summary", params={}, inputs={}, sources={"tree": tree}, refs={"summary": REF}
    )
    outputs = run_invocation(runtime(tmp_path / "store"), invocation.model_dump_json())
    assert store.get_ref(REF) == Digest(outputs["summary"]) == store.get_ref(f"{REF}/v1")
