"""The ``corpus`` stage: one commit's tree in the store, with its materialization receipt.

The logic (reading git objects, the refusals) is :mod:`bench.packaging.corpus`.
"""

from __future__ import annotations

from ..builder import NoInputs, StageContext, StageKind, stage
from ..errors import SourceError
from ..packaging.corpus import CorpusOutputs, CorpusParams, materialize
from ..packaging.gitsource import open_source

__all__ = ["corpus"]


@stage("corpus", version=3, kind=StageKind.DETERMINISTIC)
def corpus(context: StageContext, inputs: NoInputs, params: CorpusParams) -> CorpusOutputs:
    """Build the corpus tree of ``params.commit``; deterministic because a full commit id fixes every byte."""
    if not params.source:
        raise SourceError(
            f"the corpus of {params.repository} at {params.commit} needs the repository's location (params.source), "
            "which action keys leave out",
            field="source",
            hint="pass it, e.g. `stele-bench rederive DIGEST --locate source=PATH`",
        )
    with open_source(params.source) as source:
        receipt = materialize(context.store, source, params.commit, params.repository)
    return CorpusOutputs(tree=receipt.tree, receipt=context.store.put_document(receipt))
