"""`store fsck --repair`: heal what fsck finds, from good bytes where a named source has them, else by forgetting.

1. **Re-put.** Every corrupt or missing object whose good bytes the source holds (a directory or a published
   bundle, whose files are hashed; or another store) is put back: a corrupt or lost entry is forgotten first, in its
   own transaction, so the put writes instead of finding the object "already stored" (which is why `store put` of
   good bytes changed nothing).
2. **Forget.** A corrupt or lost object with no good copy has its index entry dropped: it is missing, no longer
   "stored".
3. **Run again.** Every action that produced something now missing, or something that reaches it (a tree holding
   a lost file, a record naming a lost transcript), loses its recorded result, so the next run executes it and
   stores the bytes again. The producer is the action whose outputs reach the missing object while its inputs do
   not: an action that only read it (its inputs reach it too) keeps its result, which is valid again once the
   producer has put the bytes back.

What was done is returned (:class:`RepairReport`) and said by the command; an object missing with no good copy and
no action to produce it again (a plan's source, say) stays missing until a source holding it is named.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..contracts import Digest, Document
from ..contracts.files import parse_contract
from ..contracts.strict_json import parse_json
from ..errors import ContractError, StoreError
from .actions import ActionKey, ActionResult
from .backends import StoreBackend
from .fsck import FsckReport, fsck, scan
from .references import references
from .store import Store

__all__ = ["DirectorySource", "ForgottenResult", "RepairReport", "RepairSource", "StoreSource", "repair"]


class RepairSource(abc.ABC):
    """Where good bytes may be found, by digest."""

    name: str

    @abc.abstractmethod
    def get(self, digest: Digest) -> bytes | None:
        """The bytes of ``digest`` if this source holds them, checked against it; None otherwise."""


class StoreSource(RepairSource):
    """Another store (a directory or ``s3://``)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.name = f"store {store.location}"

    def get(self, digest: Digest) -> bytes | None:
        data = self.store.backend.get(digest)
        return data if data is not None and Digest.of(data) == digest else None


class DirectorySource(RepairSource):
    """A directory, a published bundle among them: every regular file under it, hashed once when first asked."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise StoreError(f"repair source {root} is not a directory", path=str(root))
        self.root = root
        self.name = f"directory {root}"
        self._found: dict[Digest, Path] | None = None

    def _files(self) -> Iterator[Path]:
        for directory, _, names in os.walk(self.root):
            for name in names:
                path = Path(directory) / name
                if path.is_file() and not path.is_symlink():
                    yield path

    def get(self, digest: Digest) -> bytes | None:
        if self._found is None:
            self._found = {Digest.of(path.read_bytes()): path for path in self._files()}
        path = self._found.get(digest)
        if path is None:
            return None
        data = path.read_bytes()
        return data if Digest.of(data) == digest else None  # changed since it was hashed: not a good copy


@dataclass(frozen=True)
class ForgottenResult:
    """A recorded result removed so that its action runs again."""

    stage: str
    key: Digest
    result: Digest
    outputs: dict[str, Digest]


@dataclass
class RepairReport:
    before: FsckReport
    healed: list[Digest] = field(default_factory=list)  # put back from the source
    dropped: list[Digest] = field(default_factory=list)  # index entries forgotten: no good copy
    forgotten: list[ForgottenResult] = field(default_factory=list)  # results removed: their actions run again
    unrepaired: list[Digest] = field(default_factory=list)  # missing, no good copy, no action makes it again

    @property
    def complete(self) -> bool:
        """Every finding was healed, or its producing action will run again."""
        return not self.unrepaired


def repair(store: Store, source: RepairSource | None = None) -> RepairReport:
    """Heal ``store`` as the module docstring says; ``source`` is where good bytes may be found. The storage is read
    past any local cache (as fsck reads it), and written through the store's own backend, so a cache in front of
    it forgets what is dropped."""
    writer, store = store.backend, Store(store.backend.uncached())
    before = fsck(store)
    report = RepairReport(before=before)
    lost = set(before.lost())
    for digest in sorted({*before.corrupt, *before.missing}):
        data = source.get(digest) if source is not None else None
        if data is not None:
            _put_back(store, writer, digest, data, indexed=digest in lost or digest in before.corrupt)
            report.healed.append(digest)
    bad = sorted({*before.corrupt, *lost} - set(report.healed))
    if bad:
        writer.delete(bad)
        report.dropped = bad
    referrers: dict[Digest, set[Digest]] = {}
    after = scan(store, lambda digest, named: _index(referrers, digest, named))
    absent = set(after.missing)
    if absent:
        reaching = _reaching(absent, referrers)
        report.forgotten = _producers(store, reaching, absent)
        made = _made_again(store, report.forgotten, reaching)
        writer.delete(sorted({forgotten.result for forgotten in report.forgotten}))
        report.unrepaired = sorted(digest for digest in absent if digest not in made)
    return report


def _put_back(store: Store, writer: StoreBackend, digest: Digest, data: bytes, indexed: bool) -> None:
    """Store good bytes under ``digest``; an entry the index holds (corrupt, or its bytes lost) is forgotten first,
    in its own transaction, so that the put writes and does not find the bad copy "already stored"."""
    info = store.backend.stat(digest)
    document = info.is_document if info is not None else _is_document(data)
    if indexed:
        writer.delete([digest])
    writer.put(digest, data, document=document)
    if document and _kind(data) == "action-result":  # forgetting it dropped its action-cache entries: back again
        result = parse_contract(data, ActionResult, f"action result {digest}")
        writer.add_result(result.key, digest, list(result.outputs.values()))


def _kind(data: bytes) -> str | None:
    try:  # bytes from a source: read strictly, and not JSON at all is simply no document
        parsed = parse_json(data, "bytes from a repair source", max_bytes=len(data))
    except ContractError:
        return None
    kind = parsed.get("kind") if isinstance(parsed, dict) else None
    return kind if isinstance(kind, str) else None


def _is_document(data: bytes) -> bool:
    """Bytes no index entry describes: a document exactly when they are one of a declared contract."""
    kind = _kind(data)
    return kind is not None and Document.of_kind(kind) is not None


def _index(referrers: dict[Digest, set[Digest]], digest: Digest, named: Iterable[Digest]) -> None:
    for target in named:
        referrers.setdefault(target, set()).add(digest)


def _reaching(absent: set[Digest], referrers: dict[Digest, set[Digest]]) -> set[Digest]:
    """``absent`` and every document that refers to one of them, directly or through other documents."""
    reaching = set(absent)
    frontier = list(absent)
    while frontier:
        for referrer in referrers.get(frontier.pop(), ()):
            if referrer not in reaching:
                reaching.add(referrer)
                frontier.append(referrer)
    return reaching


def _producers(store: Store, reaching: set[Digest], absent: set[Digest]) -> list[ForgottenResult]:
    """The recorded results to forget: each action whose outputs reach a missing object while its inputs do not,
    or whose own key document is missing."""
    forgotten: list[ForgottenResult] = []
    candidates = {result for digest in sorted(reaching) for result in store.backend.producers(digest)}
    for result in sorted(candidates - absent):
        outcome = store.get_document(result, ActionResult)
        if outcome.key in absent:
            forgotten.append(ForgottenResult("(its key is missing)", outcome.key, result, outcome.outputs))
            continue
        spec = store.get_document(outcome.key, ActionKey)
        if not any(digest in reaching for digest in spec.inputs.values()):
            forgotten.append(ForgottenResult(spec.stage, outcome.key, result, outcome.outputs))
    return sorted(forgotten, key=lambda item: (item.stage, item.key))


def _made_again(store: Store, forgotten: list[ForgottenResult], reaching: set[Digest]) -> set[Digest]:
    """What the forgotten actions store when they run again: their outputs and every missing object below them."""
    found: set[Digest] = set()
    pending = [digest for item in forgotten for digest in item.outputs.values() if digest in reaching]
    while pending:
        digest = pending.pop()
        if digest in found:
            continue
        found.add(digest)
        if store.has(digest):
            pending += [named for named in references(store, digest) if named in reaching]
    return found
