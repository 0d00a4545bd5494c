"""Publishing: the ``publish`` stage (a bundle tree, checked, with ``MANIFEST.json`` and its in-toto statement),
and :func:`publish_directory` for a bundle assembled by hand (records and admissions in a directory).

The published tree is what `stele-bench verify` checks after it is exported. A directory is published through
the same stages the plan runs (``analyze``, ``report``), executed by the engine on an in-memory store, so its
summary and report carry the same lineage a plan's do and ``verify`` re-derives them the same way.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..builder import NoParams, Ports, StageContext, StageKind, stage
from ..builder.execution import execute
from ..contracts import Digest, PortablePath, TreeDigest
from ..publish.bundle_layout import (
    MANIFESTS,
    OBJECTS,
    REPORT_PATH,
    SUMMARY_PATH,
    bundle_files,
    check_layout,
    load_admissions,
    load_bundled_preregistrations,
    load_records,
)
from ..publish.checks import PublicationRefused, all_findings
from ..publish.lineage_files import lineage_files
from ..publish.manifest import LINEAGE_PATH, PublicationManifest
from ..publish.release import seal
from ..sandbox.layout import RUNNER_SCRATCH
from ..store import Store, export_tree, tree_from_directory
from .analyze import AnalyzeParams, analyze
from .report import ReportParams, report

__all__ = ["PublishInputs", "PublishOutputs", "publish", "publish_directory"]


class PublishInputs(Ports):
    bundle: TreeDigest


class PublishOutputs(Ports):
    published: TreeDigest


@stage("publish", version=3, kind=StageKind.DETERMINISTIC)
def publish(context: StageContext, inputs: PublishInputs, params: NoParams) -> PublishOutputs:
    """Every publication check passed, or the stage fails naming the findings."""
    with tempfile.TemporaryDirectory(prefix=RUNNER_SCRATCH["publication"]) as scratch:
        root = Path(scratch) / "bundle"
        export_tree(context.store, inputs.bundle, root)
        seal(root)
        return PublishOutputs(published=tree_from_directory(context.store, root))


def publish_directory(root: Path, confidence: str = "0.95") -> PublicationManifest:
    """Derive the summary and report of the records and admissions at ``root``, lay out their lineage, seal. What
    an earlier publication derived there (summary, report, lineage and its objects) is derived anew, not kept."""
    derived_here = (SUMMARY_PATH, REPORT_PATH, LINEAGE_PATH)
    files = {p: d for p, d in bundle_files(root).items() if p not in derived_here and p.parts[0] != OBJECTS}
    check_layout(files, str(root))  # before anything is written: an empty or foreign directory stays as it was
    early = all_findings(files, None)
    if early:
        raise PublicationRefused(early)
    store = Store.in_memory()
    context = StageContext(store)
    # The files' own bytes, which name them (a hand-written record need not be canonical JSON); labelled by the
    # digest their file is named by, as ports take them (``records/<label>``).
    verdicts: dict[str, Digest] = {}
    for path in [path for path, _ in load_records(files).values()] + list(load_admissions(files)):
        verdicts[f"{path.parts[0]}/{path.parts[-1].removesuffix('.json')}"] = store.put_bytes(
            files[path], document=True
        )
    load_bundled_preregistrations(files)  # each where it belongs, before any is read by analyze
    frozen = {
        f"preregistrations/{path.removeprefix(MANIFESTS + '/').removesuffix('.json')}": store.put_bytes(data)
        for path, data in files.items()
        if path.parts[0] == MANIFESTS
    }
    summary = execute(context, analyze, {**verdicts, **frozen}, AnalyzeParams(confidence=confidence))
    html = execute(context, report, {**verdicts, "summary": summary.outputs["summary"]}, ReportParams(suite=root.name))
    derived = {SUMMARY_PATH: summary.outputs["summary"], REPORT_PATH: html.outputs["report"]}
    roots = [*verdicts.values(), *frozen.values(), *derived.values()]
    written = {PortablePath(path): store.get_bytes(digest) for path, digest in derived.items()}
    lineage = lineage_files(store, [summary.key, html.key], roots)  # the two actions this publication ran
    shutil.rmtree(root / OBJECTS, ignore_errors=True)  # an earlier publication's lineage: this one replaces it
    for path, data in {**written, **lineage}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return seal(root)
