"""The lineage a publication carries: every recorded action below its roots, and every object a re-grade reads.

The actions are read from the store's action cache (:func:`bench.stages.lineage.producer`: the earliest action
that output a digest, as ``stele-bench lineage`` takes it). The walk goes breadth first from the roots in sorted
order, so the same store and roots always give the same actions in the same order: consumers before producers.

What is published of each action: its key and result documents, its inputs and outputs, and every object their
documents name, so a deterministic action whose inputs are documents and blobs can be re-run from the bundle
alone. Trees are published as listings (their tree objects, down to every subdirectory) and never with file
contents: a final tree is shown by what it holds and its digests, not by a copy of the project. Code manifests
are not followed: the code digest in an action key is attested, the package's source is not republished.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..contracts import Digest, PortablePath, canonical_bytes
from ..contracts.strict_json import parse_json
from ..stages.lineage import producer_of
from ..store import EntryKind, Store, read_tree
from ..store.actions import ActionKey, ActionResult
from ..store.references import walk_digests
from .bundle import OBJECTS
from .manifest import LINEAGE_PATH, PublicationLineage, PublishedAction

__all__ = ["Action", "lineage_files", "object_path", "published_objects", "walk_actions"]

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


def walk_actions(store: Store, roots: Iterable[Digest]) -> list[Action]:
    """Every action below ``roots`` (their producers, and the producers of those actions' inputs), each once."""
    actions: dict[Digest, Action] = {}
    seen: set[Digest] = set()
    frontier = sorted(set(roots))
    while frontier:
        following: set[Digest] = set()
        for digest in frontier:
            seen.add(digest)
            found = producer_of(store, digest)
            if found is None or found[1].key in actions:
                continue
            result, outcome, spec = found
            actions[outcome.key] = Action(key=outcome.key, result=result, spec=spec, outcome=outcome)
            following.update(spec.inputs.values())
        frontier = sorted(following - seen)
    return list(actions.values())


def _named(store: Store, digest: Digest) -> list[Digest]:
    """What publishing ``digest`` brings with it: a document's references, a tree's subdirectories only."""
    if not store.is_document(digest):
        return []
    data = store.get_bytes(digest)
    parsed = parse_json(data, f"stored document {digest}", max_bytes=len(data))
    kind = parsed.get("kind") if isinstance(parsed, dict) else None
    if kind == "tree":
        tree = read_tree(store, digest)
        return [entry.digest for entry in tree.entries if entry.kind is EntryKind.DIRECTORY]
    if kind in _NOT_FOLLOWED:
        return []
    return list(walk_digests(parsed))


def published_objects(store: Store, actions: Iterable[Action], roots: Iterable[Digest]) -> list[Digest]:
    """Every object the bundle carries for ``actions`` and ``roots``, sorted: see the module's docstring."""
    pending: list[Digest] = list(roots)
    for action in actions:
        pending += [action.key, action.result, *action.spec.inputs.values(), *action.outcome.outputs.values()]
    found: set[Digest] = set()
    while pending:
        digest = pending.pop()
        # A digest named but never stored (the digest of a prompt's text, say) is a value, not an object.
        if digest in found or not store.has(digest):
            continue
        found.add(digest)
        pending += _named(store, digest)
    return sorted(found)


def object_path(digest: Digest, document: bool) -> PortablePath:
    """Where the bundle keeps an object: named by its digest, ``.json`` when it is a document."""
    return PortablePath(f"{OBJECTS}/{digest.hex}{'.json' if document else ''}")


def lineage_files(store: Store, roots: Iterable[Digest]) -> dict[PortablePath, bytes]:
    """The lineage document and every published object below ``roots`` (the bundle's named files, which are
    published at their own paths and so not again under ``objects/``)."""
    named = set(roots)
    actions = walk_actions(store, named)
    objects = [digest for digest in published_objects(store, actions, named) if digest not in named]
    files = {object_path(digest, store.is_document(digest)): data for digest, data in store.get_many(objects)}
    index = PublicationLineage(actions=[PublishedAction(stage=a.stage, key=a.key, result=a.result) for a in actions])
    files[LINEAGE_PATH] = canonical_bytes(index)
    return files
