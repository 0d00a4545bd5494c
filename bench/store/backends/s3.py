"""The store on S3-compatible object storage: the same objects, refs and action results, with the same keys.

The bucket's layout (which key holds what) is :mod:`.s3_layout`'s; the action results on the bucket are
:mod:`.s3_actions`'. How the contract maps onto S3:

- **Objects are written once** by a conditional put (``If-None-Match: *``): a 412 means the object exists, which
  is success; the first writer's bytes, flag and time stay.
- **Refs move by compare-and-set**: the ETag of the ref read is the condition of the write (``If-Match``), and
  creating one is ``If-None-Match: *``, so two workers never lose each other's move.
- **A key has one result**: its ``actions`` entry is created with ``If-None-Match: *``, so of two workers
  recording one key the second's condition fails and it removes the index entries it wrote; a result whose
  outputs are gone is replaced with ``If-Match`` on the entry it read. The ``actions`` entry is written last and is
  what makes a result recorded: a writer killed before it leaves only index entries that every read checks against
  it (``count_incomplete`` counts them, gc sweeps them).
- **Claims** are written at once, never buffered: an ``If-None-Match`` create, then ``If-Match`` moves and deletes
  against the ETag of the claim read.
- **A transaction** buffers its writes (``pending.py``) and flushes them when it ends: objects first, then action
  results, then refs, then deletions, so nothing visible ever names an object that is not there. S3 has no
  multi-key commit, so a flush that fails halfway leaves the objects and results it wrote (unreferenced objects
  are gc's to collect); a ref whose condition no longer holds at the flush raises :class:`~bench.errors.StoreError`.
- **Reads** go through a :class:`~.cache.LocalCache` when one is configured: every object read or written, and
  every action-result list read, is kept on this node, so a rerun whose actions are all cached asks the remote
  for nothing but the epoch.

gc on an S3 store must not run beside a live run: S3 cannot lock the bucket between marking and deleting, so only
the grace period protects what a run writes meanwhile.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from ...contracts import Digest
from ...errors import StoreError
from .base import ObjectInfo, RecordedResult, StoreBackend
from .cache import LocalCache
from .pending import ABSENT, Buffer, RefChange, Transactions
from .s3_actions import ActionIndex
from .s3_bucket import Bucket, Fetched
from .s3_layout import Area, S3Layout, digest_named, object_info, object_metadata, stored_as_document

__all__ = ["S3Backend"]

# Objects up to this size are fetched whole when only their presence is asked: the next question is their bytes.
FETCH_ON_STAT = 1024 * 1024


class S3Backend(StoreBackend):
    """A store under ``s3://bucket/prefix``, optionally with a local cache (``cache_root``) in front."""

    def __init__(self, bucket: str, prefix: str = "", cache_root: Path | None = None) -> None:
        self.bucket = Bucket(bucket)
        self.prefix = prefix.strip("/")
        self.layout = S3Layout.under(self.prefix)
        self.actions = ActionIndex(self.bucket, self.layout)
        self._location = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._pending = Transactions(self._flush)
        self.cache = None if cache_root is None else LocalCache(cache_root, self._remote_name(), self._epoch())

    def __repr__(self) -> str:
        return f"S3Backend({self._location!r}, cache={'on' if self.cache else 'off'})"

    @property
    def location(self) -> str:
        return self._location

    def _remote_name(self) -> str:
        return f"{self.bucket.endpoint} {self._location}"

    def transaction(self) -> AbstractContextManager[None]:
        return self._pending.transaction()

    def uncached(self) -> S3Backend:
        return self if self.cache is None else S3Backend(self.bucket.name, self.prefix, None)

    # -- the epoch ---------------------------------------------------------------------------------

    def _epoch(self) -> str:
        """The remote's cache generation, made on first use."""
        key = self.layout.epoch
        found = self.bucket.get(key)
        if found is None:
            self.bucket.put(key, secrets.token_hex(8).encode(), if_absent=True)
            found = self.bucket.get(key)
            if found is None:
                raise StoreError(f"the epoch of {self._location} vanished as it was made", hint="retry")
        return found.data.decode()

    def _new_epoch(self) -> None:
        self.bucket.put(self.layout.epoch, secrets.token_hex(8).encode())

    # -- objects -----------------------------------------------------------------------------------

    def put(self, digest: Digest, data: bytes, *, document: bool) -> None:
        pending = self._pending.current()
        if pending is not None:
            if self._pending.find_object(digest) in (None, False) and self._cached_info(digest) is None:
                pending.put(digest, data, document, time.time())
            return
        if self._cached_info(digest) is None:
            self._write_object(digest, data, document, time.time())

    def _write_object(self, digest: Digest, data: bytes, document: bool, created: float) -> None:
        key = self.layout.object_key(digest)
        metadata = object_metadata(document, created)
        # A large object that exists is not sent again: one HEAD costs less than its bytes.
        head = self.bucket.head(key) if len(data) > FETCH_ON_STAT else None
        written = None if head is not None else self.bucket.put(key, data, metadata=metadata, if_absent=True)
        if self.cache is None:
            return
        if written is None:  # it existed, with these bytes by construction, and the first writer's flag
            head = self.bucket.head(key)
            document = document if head is None else stored_as_document(head.metadata)
        self.cache.keep(digest, data, document)

    def _cached_info(self, digest: Digest) -> ObjectInfo | None:
        return None if self.cache is None else self.cache.stat(digest)

    def get(self, digest: Digest) -> bytes | None:
        return next(iter(self.get_many([digest])))

    def get_many(self, digests: Sequence[Digest]) -> Iterator[bytes | None]:
        """Pending and cached bytes first; the rest fetched many at a time, a window ahead of the reader."""
        window = 256
        for start in range(0, len(digests), window):
            yield from self._get_window(digests[start : start + window])

    def _get_window(self, digests: Sequence[Digest]) -> list[bytes | None]:
        found: list[bytes | None] = [None] * len(digests)
        wanted: list[int] = []
        cached = self.cache.get_many(digests) if self.cache is not None else [None] * len(digests)
        for index, digest in enumerate(digests):
            pending = self._pending.find_object(digest)
            if pending is False:
                continue
            if pending is not None:
                found[index] = pending[0]
            elif cached[index] is not None:
                found[index] = cached[index]
            else:
                wanted.append(index)
        fetched_all = self.bucket.concurrently([digests[i] for i in wanted], self._fetch)
        for index, fetched in zip(wanted, fetched_all, strict=True):
            found[index] = None if fetched is None else fetched.data
        return found

    def _fetch(self, digest: Digest) -> Fetched | None:
        """The remote's object, kept in the cache when its bytes are right."""
        fetched = self.bucket.get(self.layout.object_key(digest))
        if fetched is not None and self.cache is not None and Digest.of(fetched.data) == digest:
            self.cache.keep(digest, fetched.data, stored_as_document(fetched.metadata))
        return fetched

    def stat(self, digest: Digest) -> ObjectInfo | None:
        pending = self._pending.find_object(digest)
        if pending is False:
            return None
        if pending is not None:
            return ObjectInfo(digest, pending[1], pending[2])
        cached = self._cached_info(digest)
        if cached is not None:
            return cached
        if self.cache is not None and digest.size <= FETCH_ON_STAT:
            # A small object's bytes are wanted next: one request fetches them into the cache.
            fetched = self._fetch(digest)
            return None if fetched is None else object_info(digest, len(fetched.data), fetched.metadata)
        head = self.bucket.head(self.layout.object_key(digest))
        return None if head is None else object_info(digest, head.size, head.metadata)

    def objects(self) -> Iterator[ObjectInfo]:
        listed = [
            digest_named(item.key.rpartition("/")[2]) for item in self.bucket.list(self.layout.prefix(Area.OBJECTS))
        ]
        infos = {info.digest: info for info in self.bucket.concurrently(listed, self._listed_info) if info is not None}
        for layer in reversed(self._pending.layers()):
            for digest in layer.deleted:
                infos.pop(digest, None)
            for digest, (_, document, created) in layer.objects.items():
                infos.setdefault(digest, ObjectInfo(digest, document, created))
        yield from (infos[digest] for digest in sorted(infos))

    def _listed_info(self, digest: Digest) -> ObjectInfo | None:
        # A cached copy's time is when this node cached it, never before the remote's: gc's grace only grows.
        cached = self._cached_info(digest)
        if cached is not None:
            return cached
        head = self.bucket.head(self.layout.object_key(digest))
        return None if head is None else object_info(digest, head.size, head.metadata)

    def delete(self, digests: Collection[Digest]) -> None:
        pending = self._pending.current()
        if pending is not None:
            pending.delete(set(digests))
            return
        self._delete(set(digests))

    def _delete(self, doomed: set[Digest]) -> None:
        if not doomed:
            return
        self._new_epoch()  # first: a node opening the store from now on starts a fresh cache
        if self.cache is not None:
            self.cache.forget(sorted(doomed))
        keys = [self.layout.object_key(digest) for digest in sorted(doomed)]
        keys.extend(self.actions.forget_results(doomed))
        self.bucket.delete_many(keys)

    def count_incomplete(self) -> int:
        return len(self.actions.orphans(float("inf")))

    def sweep_incomplete(self, before: float) -> int:
        orphans = self.actions.orphans(before)
        self.bucket.delete_many(orphans)
        return len(orphans)

    # -- refs --------------------------------------------------------------------------------------

    def _read_ref(self, name: str) -> tuple[Digest | None, str]:
        """The ref's digest and ETag as the remote has it; (None, ABSENT) when it has none."""
        fetched = self.bucket.get(self.layout.ref_key(name))
        if fetched is None:
            return None, ABSENT
        return Digest(fetched.data.decode()), fetched.etag

    def get_ref(self, name: str) -> Digest | None:
        change = self._pending.find_ref(name)
        return change.new if change is not None else self._read_ref(name)[0]

    def refs(self) -> dict[str, Digest]:
        prefix = self.layout.prefix(Area.REFS)
        names = [item.key[len(prefix) :] for item in self.bucket.list(prefix)]
        found = dict(zip(names, self.bucket.concurrently(names, lambda name: self._read_ref(name)[0]), strict=True))
        for layer in reversed(self._pending.layers()):
            found.update({name: change.new for name, change in layer.refs.items()})
        return {name: digest for name, digest in sorted(found.items()) if digest is not None}

    def set_ref(self, name: str, digest: Digest) -> None:
        self._change_ref(name, RefChange(digest, None))

    def compare_and_set_ref(self, name: str, expected: Digest | None, new: Digest) -> bool:
        change = self._pending.find_ref(name)
        if change is not None:  # this transaction moved it already: compare with its own write
            if change.new != expected:
                return False
            self._change_ref(name, RefChange(new, change.expect))
            return True
        current, etag = self._read_ref(name)
        return current == expected and self._change_ref(name, RefChange(new, etag))

    def delete_ref(self, name: str) -> bool:
        change = self._pending.find_ref(name)
        exists = change.new is not None if change is not None else self._read_ref(name)[0] is not None
        if exists:
            self._change_ref(name, RefChange(None, None))
        return exists

    def _change_ref(self, name: str, change: RefChange) -> bool:
        """Apply ``change`` now, or buffer it in the open transaction; False when its condition failed."""
        key = self.layout.ref_key(name)
        pending = self._pending.current()
        if pending is not None:
            pending.change_ref(name, change)
            return True
        if change.new is None:
            return self.bucket.delete(key, if_match=change.expect if change.expect != ABSENT else None)
        absent = change.expect == ABSENT
        data = str(change.new).encode()
        return self.bucket.put(key, data, if_absent=absent, if_match=None if absent else change.expect) is not None

    # -- action results ----------------------------------------------------------------------------

    def add_result(
        self, key: Digest, result: Digest, outputs: Collection[Digest], *, replacing: Digest | None = None
    ) -> None:
        entry = RecordedResult(key, result, tuple(dict.fromkeys(outputs)), time.time())
        pending = self._pending.current()
        if pending is not None:
            pending.results.append((entry, replacing))
        else:
            self._write_result(entry, replacing)

    def _write_result(self, entry: RecordedResult, replacing: Digest | None) -> None:
        stands = self.actions.record(entry, replacing)
        if self.cache is not None and stands is not None:
            self.cache.keep_result(entry.key, stands)

    def results(self, key: Digest) -> list[Digest]:
        hidden = self._pending.hidden()
        pending = [entry.result for entry in self._pending.pending_results() if entry.key == key]
        if pending:  # this thread's transaction recorded one: what it sees until its flush decides
            return [result for result in pending[-1:] if result not in hidden]
        cached = self.cache.results(key) if self.cache is not None else []
        if cached:
            return [result for result in cached if result not in hidden]
        remote = self.actions.result_of(key)
        if remote is None:
            return []
        if self.cache is not None:
            self.cache.keep_result(key, remote)
        return [] if remote in hidden else [remote]

    def producers(self, output: Digest) -> list[Digest]:
        remote = self.actions.producers(output)
        pending = [entry.result for entry in self._pending.pending_results() if output in entry.outputs]
        hidden = self._pending.hidden()
        return [result for result in dict.fromkeys([*remote, *pending]) if result not in hidden]

    def results_since(self, since: float) -> list[Digest]:
        remote = self.actions.recorded_since(since)
        pending = [entry.result for entry in self._pending.pending_results() if entry.recorded >= since]
        hidden = self._pending.hidden()
        return [result for result in dict.fromkeys([*remote, *pending]) if result not in hidden]

    # -- claims ------------------------------------------------------------------------------------

    def claimant(self, key: Digest) -> bytes | None:
        found = self.bucket.get(self.layout.claim_key(key))
        return None if found is None else found.data

    def swap_claim(self, key: Digest, expected: bytes | None, new: bytes | None) -> bool:
        where = self.layout.claim_key(key)
        if expected is None:
            if new is None:
                return self.bucket.head(where) is None
            return self.bucket.put(where, new, if_absent=True) is not None
        found = self.bucket.get(where)
        if found is None or found.data != expected:
            return False
        if new is None:
            return self.bucket.delete(where, if_match=found.etag)
        return self.bucket.put(where, new, if_match=found.etag) is not None

    # -- the flush ---------------------------------------------------------------------------------

    def _flush(self, buffer: Buffer) -> None:
        """Apply a finished transaction: objects, results, refs, deletions, in that order."""
        self.bucket.concurrently(
            buffer.objects.items(),
            lambda item: self._write_object(item[0], item[1][0], item[1][1], item[1][2]),
        )
        for entry, replacing in buffer.results:
            self._write_result(entry, replacing)
        for name, change in buffer.refs.items():
            if not self._change_ref(name, change):
                raise StoreError(
                    f"ref {name!r} was moved by another writer while a transaction held it; the transaction's "
                    "objects and results are stored, its ref changes from this one on are not",
                    field=name,
                    hint="re-read the ref and decide again",
                )
        self._delete(buffer.deleted)
