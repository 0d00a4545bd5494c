"""Where a corpus comes from: a git repository directory or a bundle file, read through dulwich only.

Only the object database and the refs are read: never a worktree, the index, ignored files or anything else in
``.git``. A bundle's pack is checked against its trailing checksum, then inflated into a memory object store, so
nothing is written anywhere.

This module is dulwich's boundary (with :mod:`.commit_bundle`, which writes through it): whatever dulwich raises
about damaged bytes (``zlib.error``, ``ChecksumMismatch``, ``ObjectFormatException``, a delta that does not apply)
leaves it as :class:`GitSourceCorrupt`, naming the repository and the object; a missing object is ``None``.

A commit is named by its full 40-hex id (used as is) or by a ref (resolved, peeled through annotated tags, and
the resolved id recorded). An abbreviated id is refused: it is ambiguous by construction and may name a
different commit tomorrow.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from dulwich.bundle import read_bundle
from dulwich.errors import ChecksumMismatch, NotGitRepository
from dulwich.object_store import BaseObjectStore, DiskObjectStore, MemoryObjectStore, PackBasedObjectStore
from dulwich.objects import Commit, ObjectID, ShaFile, Tag, object_header, parse_tree
from dulwich.pack import Pack, PackData, PackFileDisappeared
from dulwich.refs import Ref
from dulwich.repo import Repo

from ..contracts.checked_files import describe, opened_regular
from ..errors import SourceError
from ..forking import fork_is_safe
from .forkedreads import interleaved, read_forked
from .packentries import PackEntries

__all__ = [
    "CommitNotFound",
    "GitSource",
    "GitSourceCorrupt",
    "corrupt_on_error",
    "open_source",
    "resolve_commit",
]

DELTA_BASE_CACHE_LIMIT = 16 << 20
RESIDENT_LIMIT = 32 << 20
OWN_SHARE = 0.2  # of the pack objects, read here between the forked reader's (which has less else to do)
FORK_MIN_OBJECTS = 512  # fewer pack objects are read here: forking costs about as much as reading 100 of them
_SHA_LENGTH = 20  # bytes of a SHA-1 object id in a tree entry
FULL_ID = re.compile(r"[0-9a-f]{40}")
_ABBREVIATED = re.compile(r"[0-9a-fA-F]{4,39}")
# The order git itself tries a short ref name in (git-rev-parse(1), "SPECIFYING REVISIONS").
_REF_PREFIXES = (b"", b"refs/", b"refs/tags/", b"refs/heads/", b"refs/remotes/")


class CommitNotFound(SourceError):
    """The commit (or ref) given for a corpus does not name a commit in the repository."""


class GitSourceCorrupt(SourceError):
    """Git's own bytes cannot be read: a damaged loose object or pack, a truncated bundle, a malformed tree."""

    def __init__(self, repository: str, what: str, error: BaseException | str) -> None:
        """``error`` is what dulwich raised, or its one-line account (``Type: detail``) as a reading process
        sent it (:mod:`bench.packaging.forkedreads`)."""
        if isinstance(error, BaseException):
            detail = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
            # dulwich's frames in the error's traceback hold views of a pack's mapping, and while they live the
            # pack cannot be closed: the repository's close on the way out would raise BufferError in its place.
            error.__traceback__ = None
            error = f"{type(error).__name__}: {detail}"
        self.repository, self.what, self.cause = repository, what, error
        super().__init__(
            f"{repository}: {what} cannot be read ({error})",
            path=repository,
            hint="the repository is damaged: check it with `git fsck` and fetch or re-clone it",
        )

    def __reduce__(self) -> tuple[type[GitSourceCorrupt], tuple[str, str, str]]:
        """Rebuilt from its parts: how a refusal crosses from the process reading objects (forkedreads)."""
        return type(self), (self.repository, self.what, self.cause)


@contextmanager
def corrupt_on_error(repository: str, what: str) -> Iterator[None]:
    """dulwich's errors while reading ``what``, as one refusal naming it (dulwich has no common base class)."""
    try:
        yield
    except SourceError:
        raise
    except Exception as exc:
        raise GitSourceCorrupt(repository, what, exc) from exc


def _described(sha: bytes, what: str) -> str:
    shown = f"object {sha.decode(errors='replace')}"
    return f"{shown} ({what})" if what else shown


def _check_name(sha: bytes, type_num: int, data: bytes) -> None:
    """Refuse bytes that do not hash to their object's name (another object's bytes under its name, a crafted
    pack): what dulwich checks when it builds an object, done here without building one. It keeps "a full commit
    id fixes every byte" true of a hostile repository, for 0.075 s of CPU over the 81 MB benchmark corpus, about
    a tenth of inflating it (building dulwich objects cost more than inflating)."""
    digest = hashlib.sha1(object_header(type_num, len(data)), usedforsecurity=False)
    digest.update(data)
    actual = digest.hexdigest().encode()
    if actual != sha:
        raise ChecksumMismatch(sha, actual)


@dataclass
class GitSource:
    """An opened repository: its object store and a ref lookup (``None`` for an unknown ref)."""

    repository: str
    objects: BaseObjectStore
    lookup_ref: Callable[[bytes], bytes | None]
    # Listed once: dulwich's own lookup re-checks the pack directory and the multi-pack index on every object,
    # a tenth of the cost of reading a corpus.
    _packs: list[Pack] = field(init=False)
    _mapped: int = field(init=False, default=0)  # bytes read through the packs' mappings since they were opened
    _entries: dict[int, PackEntries | None] = field(init=False, default_factory=dict)  # by pack number, as opened

    def __post_init__(self) -> None:
        self._packs = list(self.objects.packs) if isinstance(self.objects, PackBasedObjectStore) else []

    def close(self) -> None:
        """Unmap the pack files this source read entries from itself (dulwich's own are the repository's)."""
        for entries in self._entries.values():
            if entries is not None:
                entries.close()
        self._entries.clear()

    def get(self, sha: bytes) -> ShaFile | None:
        """The object named ``sha`` (40 hex bytes), or ``None`` when the repository does not hold it."""
        with corrupt_on_error(self.repository, f"object {sha.decode(errors='replace')}"):
            try:
                return self.objects[ObjectID(sha)]
            except KeyError:
                return None

    def tree_entries(self, sha: bytes, data: bytes, what: str = "") -> list[tuple[bytes, int, bytes]]:
        """The (name, mode, hex id) entries of the tree ``sha`` whose bytes are ``data``, as the bytes list them:
        a name listed twice (git fsck: duplicateEntries) is kept twice for the caller to refuse, where dulwich's
        own view keeps only the last."""
        with corrupt_on_error(self.repository, _described(sha, what)):
            return list(parse_tree(data, _SHA_LENGTH))

    def raw(self, sha: bytes, what: str = "") -> tuple[int, bytes] | None:
        """The type number and bytes of the object ``sha`` (40 hex bytes), or ``None`` when it is not held; not
        parsed, but checked against its name. ``what`` says what the object is to the caller (a tree path), for
        the refusal when its bytes cannot be read."""
        try:
            found = self._raw(sha)
            if found is not None:
                _check_name(sha, *found)
            return found
        except Exception as exc:  # a try per object, not a context manager: this runs once per file of a corpus
            raise GitSourceCorrupt(self.repository, _described(sha, what), exc) from exc

    def _raw(self, sha: bytes) -> tuple[int, bytes] | None:
        for pack in self._packs:
            try:
                found = pack.get_raw(ObjectID(sha))
            except (KeyError, PackFileDisappeared):
                continue
            self._unmap_now_and_then(len(found[1]))
            return found
        try:
            return self.objects.get_raw(ObjectID(sha))  # loose objects, alternates, packs added since
        except KeyError:
            return None

    def raw_many(self, wanted: Mapping[bytes, str]) -> Iterator[tuple[bytes, tuple[int, bytes] | None]]:
        """:meth:`raw` of each object id of ``wanted`` (mapped to what it is to the caller): first those held in
        the packs, in the order they lie there (each pack front to back, so a delta's base is read just before
        it and the mapping is read sequentially), then the others. Many pack objects are read in a second
        process (:func:`~bench.packaging.forkedreads.read_forked`), so inflating them uses a second core, unless
        this process runs other threads (:func:`~bench.forking.fork_is_safe`)."""
        located, elsewhere = self._locate(wanted)
        if len(located) >= FORK_MIN_OBJECTS and fork_is_safe():
            split = len(located) - int(len(located) * OWN_SHARE)
            theirs, mine = located[:split], located[split:]
            keys = [sha for _, _, sha in theirs]
            forked = read_forked(self.repository, keys, lambda: self.read_located(theirs, wanted))
            yield from interleaved(forked, self.read_located(mine, wanted), len(theirs), len(mine))
        else:
            yield from self.read_located(located, wanted)
        for sha in elsewhere:
            yield sha, self.raw(sha, wanted[sha])

    def read_located(
        self, located: Sequence[tuple[int, int, bytes]], wanted: Mapping[bytes, str]
    ) -> Iterator[tuple[bytes, tuple[int, bytes] | None]]:
        """:meth:`raw` of each (pack number, offset, id) of ``located`` (:meth:`_locate`), read at its offset."""
        for number, offset, sha in located:
            pack = self._packs[number]
            entries = self._entries[number] if number in self._entries else self._open_entries(number)
            try:
                found = entries.read(offset) if entries is not None else None
                if found is None:  # not an entry read plainly: dulwich reads it, or says what is wrong with it
                    type_num, obj = pack.data.get_object_at(offset)
                    type_num, chunks = pack.resolve_object(offset, type_num, obj)
                    found = type_num, b"".join(chunks)  # type: ignore[arg-type]  # resolved objects are byte chunks
                type_num, data = found
                _check_name(sha, type_num, data)
            except PackFileDisappeared:
                yield sha, self.raw(sha, wanted[sha])
                continue
            except Exception as exc:  # zlib, a delta that does not apply, a checksum: the pack is damaged
                raise GitSourceCorrupt(self.repository, _described(sha, wanted[sha]), exc) from exc
            self._unmap_now_and_then(len(data))
            yield sha, (type_num, data)

    def _open_entries(self, number: int) -> PackEntries | None:
        """The entries of pack ``number`` read from its file here (:mod:`.packentries`), or None where that file
        cannot be opened (a pack removed since it was listed: dulwich's own reading then says so) or the store
        keeps no pack files."""
        entries: PackEntries | None = None
        if isinstance(self.objects, DiskObjectStore):
            path = os.path.join(self.objects.pack_dir, self._packs[number].data.filename)
            with suppress(OSError, ValueError):  # ValueError: an empty file cannot be mapped
                entries = PackEntries(path, DELTA_BASE_CACHE_LIMIT, RESIDENT_LIMIT)
        self._entries[number] = entries
        return entries

    def _locate(self, wanted: Mapping[bytes, str]) -> tuple[list[tuple[int, int, bytes]], list[bytes]]:
        """(pack number, offset, id) of each object of ``wanted`` held in a pack, in pack order; and the others."""
        located: list[tuple[int, int, bytes]] = []
        elsewhere: list[bytes] = []
        for sha in wanted:
            for number, pack in enumerate(self._packs):
                try:
                    located.append((number, pack.index.object_offset(ObjectID(sha)), sha))
                    break
                except (KeyError, PackFileDisappeared):
                    continue
                except Exception as exc:  # a damaged pack index
                    what = _described(sha, f"{wanted[sha]}, looked up in a pack index")
                    raise GitSourceCorrupt(self.repository, what, exc) from exc
            else:
                elsewhere.append(sha)
        located.sort()
        return located, elsewhere

    def _unmap_now_and_then(self, size: int) -> None:
        """Close the packs after every RESIDENT_LIMIT bytes read (dulwich reopens one when next asked): pages of a
        mapped pack count as this process's memory once touched, so a corpus of a large pack would otherwise
        grow as it is read."""
        self._mapped += size
        if self._mapped >= RESIDENT_LIMIT:
            for pack in self._packs:
                pack.close()
            self._mapped = 0


@contextmanager
def open_source(repository: str) -> Iterator[GitSource]:
    """Open ``repository`` (a directory holding a git repository, or a bundle file) for reading objects."""
    path = Path(repository)
    if path.is_file():
        with _bundle(repository, path) as source:
            yield source
    elif path.is_dir():
        try:
            repo = Repo(str(path))
        except NotGitRepository as exc:
            raise SourceError(f"{repository} is not a git repository (no object database found)") from exc
        except Exception as exc:  # a damaged .git (its config, its refs) as dulwich reports it
            raise GitSourceCorrupt(repository, "the repository", exc) from exc
        # dulwich caches up to 96 MiB of delta bases per pack (git's own default), most of a corpus's memory;
        # a corpus reads each blob once, so a small cache costs no measurable time (benchmarks/packaging.py).
        repo.object_store.delta_base_cache_limit = DELTA_BASE_CACHE_LIMIT
        source = GitSource(repository, repo.object_store, lambda name: _repo_ref(repository, repo, name))
        try:
            yield source
        finally:
            source.close()
            repo.close()
    else:
        what = "does not exist" if describe(path) == "nothing" else f"is {describe(path)}"
        raise SourceError(f"{repository} {what}; pass a git repository directory or a git bundle file")


@contextmanager
def _bundle(repository: str, path: Path) -> Iterator[GitSource]:
    with opened_regular(path, "the git bundle", error=SourceError) as handle:
        try:
            bundle = read_bundle(handle)
        except Exception as exc:  # dulwich signals a bad header with AssertionError, ValueError, struct errors...
            raise SourceError(f"{repository} is neither a git repository nor a git bundle: {exc}") from exc
        with bundle:
            objects = MemoryObjectStore()
            with corrupt_on_error(repository, "the bundle's pack"):
                if isinstance(bundle.pack_data, PackData):
                    bundle.pack_data.check()  # the trailing checksum: a truncated or altered pack is refused here
            try:
                bundle.store_objects(objects)
            except Exception as exc:
                if not bundle.prerequisites:
                    raise GitSourceCorrupt(repository, "the bundle's pack", exc) from exc
                missing = ", ".join(sha.decode() for sha, _ in bundle.prerequisites)
                raise SourceError(
                    f"the pack in bundle {repository} cannot be read on its own ({exc}); its prerequisite commits "
                    f"({missing}) are not in it: create the bundle without a range (git bundle create F REF)"
                ) from exc
            refs: dict[bytes, bytes] = {bytes(name): bytes(sha) for name, sha in bundle.references.items()}
        yield GitSource(repository, objects, refs.get)


def _repo_ref(repository: str, repo: Repo, name: bytes) -> bytes | None:
    with corrupt_on_error(repository, f"ref {name.decode(errors='replace')}"):
        try:
            return bytes(repo.refs[Ref(name)])
        except KeyError:
            return None


def resolve_commit(source: GitSource, spec: str) -> str:
    """The full id of the commit ``spec`` names: a full id as is, or a ref resolved and peeled."""
    if FULL_ID.fullmatch(spec.lower()):
        return _peel(source, spec.lower().encode(), spec)
    for prefix in _REF_PREFIXES:
        target = source.lookup_ref(prefix + spec.encode())
        if target is not None:
            return _peel(source, target, spec)
    if _ABBREVIATED.fullmatch(spec):
        raise CommitNotFound(
            f"{spec!r} looks like an abbreviated commit id; abbreviations are refused because they can become "
            f"ambiguous: pass the full 40-character id (git rev-parse {spec}) or a ref name"
        )
    raise CommitNotFound(f"{spec!r} is neither a full commit id nor a ref in {source.repository}")


def _peel(source: GitSource, sha: bytes, spec: str) -> str:
    obj = source.get(sha)
    while isinstance(obj, Tag):
        obj = source.get(obj.object[1])
    if obj is None:
        raise CommitNotFound(f"{spec!r} names {sha.decode()}, which is not in {source.repository}")
    if not isinstance(obj, Commit):
        raise CommitNotFound(f"{spec!r} names a {obj.type_name.decode()}, not a commit, in {source.repository}")
    return obj.id.decode()
