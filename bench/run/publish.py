"""The ``publish`` stage: a bundle tree plus its derived summary and report, checked, with ``MANIFEST.json``.

The published tree is what `stele-bench verify` checks after it is exported.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..contracts import ContractModel, TreeDigest
from ..publish.release import publish
from ..stages import Ports, StageContext, StageKind, stage
from ..store import export_tree, tree_from_directory

__all__ = ["PublishInputs", "PublishOutputs", "PublishParams", "publish_stage"]


class PublishParams(ContractModel):
    confidence: str


class PublishInputs(Ports):
    bundle: TreeDigest


class PublishOutputs(Ports):
    published: TreeDigest


@stage("publish", version=2, kind=StageKind.DETERMINISTIC)
def publish_stage(context: StageContext, inputs: PublishInputs, params: PublishParams) -> PublishOutputs:
    """Every publication check passed, or the stage fails naming the findings."""
    with tempfile.TemporaryDirectory(prefix="publish-") as scratch:
        root = Path(scratch) / "bundle"
        export_tree(context.store, inputs.bundle, root)
        publish(root, params.confidence)
        return PublishOutputs(published=tree_from_directory(context.store, root))
