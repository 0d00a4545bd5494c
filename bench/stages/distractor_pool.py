"""The ``distractor-pool`` stage: a fixture's pool of ``size`` distractor documents, as a tree.

Deterministic: the pool is a function of the fixture's declaration (seed, source) and the size, and of the corpus
tree for a corpus pool, so ``verify`` re-derives it. The tree holds the documents at their corpus-relative paths;
the ``paired-attempt`` stage lays it beside the evidence for every restore (:func:`bench.provision.pool.seed_corpus`)
and certification reads it as the ``distractors`` surface.
"""

from __future__ import annotations

from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import ContractModel, PortablePath, TreeDigest
from ..errors import ContractError
from ..provision.fixture import DistractorPool
from ..provision.pool import pool_documents
from ..store import EntryKind, FileEntry, Store, tree_from_entries, walk_tree

__all__ = ["PoolInputs", "PoolOutputs", "PoolParams", "distractor_pool"]


class PoolParams(ContractModel):
    pool: DistractorPool  # the fixture's declaration
    size: int  # how many of its documents


class PoolInputs(Ports):
    corpus: TreeDigest | None = None  # the pool's corpus artifact, for a corpus pool


class PoolOutputs(Ports):
    pool: TreeDigest


def _documents(store: Store, tree: TreeDigest) -> dict[str, bytes]:
    documents: dict[str, bytes] = {}
    for path, entry in walk_tree(store, tree):
        if entry.kind is EntryKind.SYMLINK:
            raise ContractError(f"the pool's corpus holds a symlink at {path!r}; a pool holds documents only")
        if entry.kind is not EntryKind.DIRECTORY:
            documents[str(path)] = store.get_bytes(entry.digest)
    return documents


@stage("distractor-pool", version=1, kind=StageKind.DETERMINISTIC)
def distractor_pool(context: StageContext, inputs: PoolInputs, params: PoolParams) -> PoolOutputs:
    store = context.store
    corpus = None if inputs.corpus is None else _documents(store, inputs.corpus)
    documents = pool_documents(params.pool, params.size, corpus)
    entries = [FileEntry(PortablePath(path), EntryKind.FILE, data) for path, data in documents]
    return PoolOutputs(pool=tree_from_entries(store, entries))
