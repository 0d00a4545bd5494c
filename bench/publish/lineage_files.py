"""The lineage a publication carries: exactly the actions of its run, and every object a re-grade reads.

The actions are the run's (:class:`~bench.store.actions.RunActions`, which the pipeline hands the bundle stage: the
keys of every invocation upstream of it, computed or found cached), each with the result the run used (the newest
recorded one whose outputs are all present, as the engine takes a cached result). Nothing another run recorded
enters: an action of another suite that produced the same bytes, or an old run's receipt, is not in this run's
keys. They are listed in key order, so the same run always gives the same lineage.

What is published of each action: its key and result documents, its inputs and outputs, and every object their
documents refer to (by type: :mod:`bench.store.references`), so a deterministic action whose inputs are documents,
blobs and tree listings can be re-run from the bundle alone. Trees are published as listings (their tree objects,
down to every subdirectory) and never with file contents: a final tree is shown by what it holds and its digests,
not by a copy of the project. Code manifests are not followed: the code digest in an action key is attested, the
package's source is not republished.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..builder.execution import cached_results
from ..contracts import Digest, PortablePath, canonical_bytes
from ..contracts.strict_json import parse_json
from ..errors import ContractError, StageError
from ..store import EntryKind, Store, read_tree
from ..store.actions import ActionKey, ActionResult
from ..store.references import document_references
from .bundle_layout import OBJECTS
from .bundle_store import BundleStore
from .manifest import LINEAGE_PATH, PublicationLineage, PublishedAction

__all__ = ["Action", "brought", "lineage_files", "object_path", "published_objects", "run_actions"]

# Documents whose references are not published: the package source behind a code digest.
_NOT_FOLLOWED = frozenset({"code-manifest"})


@dataclass(frozen=True)
class Action:
    """One recorded stage run: its key document and the result that lists its outputs, with their digests."""

    key: Digest
    result: Digest
    spec: ActionKey
    outcome: ActionResult

    @property
    def stage(self) -> str:
        return self.spec.stage


def run_actions(store: Store, keys: Iterable[Digest]) -> list[Action]:
    """Each action of ``keys`` with the result the run used, in key order; a key with no such result is refused."""
    ordered = sorted(set(keys))
    used = cached_results(store, ordered)
    lost = [key for key in ordered if key not in used]
    if lost:
        raise StageError(
            f"{len(lost)} action(s) of the run have no recorded result with every output present (first: {lost[0]}); "
            "run the suite again, then publish"
        )
    specs = store.get_documents(ordered, ActionKey)
    return [
        Action(key=key, result=used[key][0], spec=spec, outcome=used[key][1])
        for key, spec in zip(ordered, specs, strict=True)
    ]


def brought(store: Store, starts: Iterable[Digest]) -> tuple[set[Digest], dict[Digest, Digest]]:
    """Every object ``starts`` bring into a bundle (see the module docstring), and each one referred to that
    ``store`` lacks, with the object that refers to it."""
    found: set[Digest] = set()
    lacking: dict[Digest, Digest] = {}
    pending = [(digest, digest) for digest in starts]
    while pending:
        digest, referrer = pending.pop()
        if digest in found or digest in lacking:
            continue
        if not store.has(digest):
            lacking[digest] = referrer
            continue
        found.add(digest)
        pending += [(named, digest) for named in _named(store, digest)]
    return found, lacking


def _named(store: Store, digest: Digest) -> list[Digest]:
    """What publishing ``digest`` brings with it: a document's references, a tree's subdirectories only."""
    if not store.is_document(digest):
        return []
    data = store.get_bytes(digest)
    try:
        parsed = parse_json(data, f"stored document {digest}", max_bytes=len(data))
    except ContractError:  # not JSON (a bundle's file altered): it refers to nothing; re-hashing names it
        return []
    kind = parsed.get("kind") if isinstance(parsed, dict) else None
    if kind == "tree":
        tree = read_tree(store, digest)
        return [entry.digest for entry in tree.entries if entry.kind is EntryKind.DIRECTORY]
    if kind in _NOT_FOLLOWED:
        return []
    if not isinstance(store, BundleStore):  # read here, once: another store would read the bytes again
        return document_references(data, parsed)
    return document_references(data, parsed, lambda model: store.get_document(digest, model))


def published_objects(store: Store, actions: Iterable[Action], roots: Iterable[Digest]) -> list[Digest]:
    """Every object the bundle carries for ``actions`` and ``roots``, sorted: see the module's docstring."""
    starts: list[Digest] = list(roots)
    for action in actions:
        starts += [action.key, action.result, *action.spec.inputs.values(), *action.outcome.outputs.values()]
    found, lacking = brought(store, starts)
    if lacking:  # values are not followed (references.py): a reference names a stored object
        missing, referrer = next(iter(sorted(lacking.items())))
        raise StageError(
            f"the run's lineage refers to {missing} (in {referrer}), which the store does not hold; "
            "run `stele-bench store fsck --repair`, then the suite again"
        )
    return sorted(found)


def object_path(digest: Digest, document: bool) -> PortablePath:
    """Where the bundle keeps an object: named by its digest, ``.json`` when it is a document."""
    return PortablePath(f"{OBJECTS}/{digest.hex}{'.json' if document else ''}")


def lineage_files(store: Store, keys: Iterable[Digest], roots: Iterable[Digest]) -> dict[PortablePath, bytes]:
    """The lineage document of the run's actions ``keys`` and every published object below them and ``roots`` (the
    bundle's named files, which are published at their own paths and so not again under ``objects/``)."""
    named = set(roots)
    actions = run_actions(store, keys)
    objects = [digest for digest in published_objects(store, actions, named) if digest not in named]
    files = {object_path(digest, store.is_document(digest)): data for digest, data in store.get_many(objects)}
    index = PublicationLineage(actions=[PublishedAction(stage=a.stage, key=a.key, result=a.result) for a in actions])
    files[LINEAGE_PATH] = canonical_bytes(index)
    return files
