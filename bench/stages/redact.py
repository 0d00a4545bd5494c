"""The ``redact`` stage: the one stage that removes, and its receipt.

The logic is :mod:`bench.packaging.redact`.
"""

from __future__ import annotations

from ..builder import StageContext, StageKind, TreeReads, stage
from ..packaging.redact import RedactInputs, RedactOutputs, RedactParams, redact_tree

__all__ = ["redact"]


@stage("redact", version=3, kind=StageKind.DETERMINISTIC, trees=TreeReads.LISTINGS)
def redact(context: StageContext, inputs: RedactInputs, params: RedactParams) -> RedactOutputs:
    receipt = redact_tree(context.store, inputs.tree, params.extra_paths)
    return RedactOutputs(tree=receipt.redacted, receipt=context.store.put_document(receipt))
