"""The store on S3-compatible object storage: the same objects, refs and action results, with the same keys.

Layout under ``s3://BUCKET/PREFIX/``::

    objects/ab/<hex>-<size>             the bytes; metadata: document flag, creation time
    refs/<name>                         the digest the ref points at; moved by If-Match on its ETag
    actions/<key>                       the key's one result (body: result, when, outputs); created If-None-Match
    claims/<key>                        who computes the key now (bench.store.claims); moved by If-Match
    produced/<output>/<result>          the producers index
    log/<recorded time>/<key>/<result>  the action log, in time order (ListObjectsV2 StartAfter reads a tail)
    epoch                               replaced by gc before it deletes: names the local caches' generation

(``<key>``, ``<result>`` and ``<output>`` are digests spelled ``<hex>-<size>``.) How the contract maps onto S3:

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

import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TypeVar

from ...contracts import Digest
from ...contracts.strict_json import parse_json_object
from ...errors import StoreError
from .base import ObjectInfo, RecordedResult, StoreBackend
from .cache import LocalCache
from .pending import ABSENT, Buffer, RefChange, Transactions
from .s3_bucket import POOL, Bucket, Fetched

__all__ = ["S3Backend"]

T = TypeVar("T")
R = TypeVar("R")
# Objects up to this size are fetched whole when only their presence is asked: the next question is their bytes.
FETCH_ON_STAT = 1024 * 1024


def _part(digest: Digest) -> str:
    return f"{digest.hex}-{digest.size}"


def _digest(part: str) -> Digest:
    hex_, _, size = part.partition("-")
    return Digest.from_parts(hex_, int(size))


def _info(digest: Digest, size: int, metadata: Mapping[str, str]) -> ObjectInfo | None:
    """What the remote says of an object; an object of another size is not the one named (a truncated write)."""
    if size != digest.size:
        return None
    return ObjectInfo(digest, metadata.get("document") == "1", float(metadata.get("created", "0")))


def _stamp(when: float) -> str:
    """A fixed-width time, so key order is time order."""
    return f"{when:020.6f}"


class S3Backend(StoreBackend):
    """A store under ``s3://bucket/prefix``, optionally with a local cache (``cache_root``) in front."""

    def __init__(self, bucket: str, prefix: str = "", cache_root: Path | None = None) -> None:
        self.bucket = Bucket(bucket)
        self.prefix = prefix.strip("/")
        self._root = f"{self.prefix}/" if self.prefix else ""
        self._location = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self._pending = Transactions(self._flush)
        self._pool: tuple[int, ThreadPoolExecutor] | None = None
        self._pool_lock = threading.Lock()
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

    def _map(self, work: Iterable[T], function: Callable[[T], R]) -> list[R]:
        """``function`` over ``work``, many requests at once, results in order. Never nested: a pool thread
        waiting for the pool could wait forever."""
        items = list(work)
        if len(items) < 2:
            return [function(item) for item in items]
        with self._pool_lock:
            if self._pool is None or self._pool[0] != os.getpid():  # threads do not survive a fork
                self._pool = (os.getpid(), ThreadPoolExecutor(max_workers=POOL // 2, thread_name_prefix="s3"))
            pool = self._pool[1]
        return list(pool.map(function, items))

    # -- keys --------------------------------------------------------------------------------------

    def _object_key(self, digest: Digest) -> str:
        return f"{self._root}objects/{digest.hex[:2]}/{_part(digest)}"

    def _ref_key(self, name: str) -> str:
        parts = name.split("/")
        if not name or any(part in ("", ".", "..") for part in parts):
            raise StoreError(
                f"ref name {name!r} cannot be a key of an S3 store",
                field="ref",
                hint="use names of non-empty parts joined by '/', none of them '.' or '..'",
            )
        return f"{self._root}refs/{name}"

    def _action_key(self, key: Digest) -> str:
        return f"{self._root}actions/{_part(key)}"

    def _claim_key(self, key: Digest) -> str:
        return f"{self._root}claims/{_part(key)}"

    def _index_keys(self, key: Digest, result: Digest, outputs: Iterable[Digest], recorded: float) -> list[str]:
        """The producers and log entries of one result."""
        named = _part(result)
        index = [f"{self._root}produced/{_part(output)}/{named}" for output in outputs]
        return [*index, f"{self._root}log/{_stamp(recorded)}/{_part(key)}/{named}"]

    # -- the epoch ---------------------------------------------------------------------------------

    def _epoch(self) -> str:
        """The remote's cache generation, made on first use."""
        key = f"{self._root}epoch"
        found = self.bucket.get(key)
        if found is None:
            self.bucket.put(key, secrets.token_hex(8).encode(), if_absent=True)
            found = self.bucket.get(key)
            if found is None:
                raise StoreError(f"the epoch of {self._location} vanished as it was made", hint="retry")
        return found.data.decode()

    def _new_epoch(self) -> None:
        self.bucket.put(f"{self._root}epoch", secrets.token_hex(8).encode())

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
        key = self._object_key(digest)
        metadata = {"document": "1" if document else "0", "created": repr(created)}
        # A large object that exists is not sent again: one HEAD costs less than its bytes.
        head = self.bucket.head(key) if len(data) > FETCH_ON_STAT else None
        written = None if head is not None else self.bucket.put(key, data, metadata=metadata, if_absent=True)
        if self.cache is None:
            return
        if written is None:  # it existed, with these bytes by construction, and the first writer's flag
            head = self.bucket.head(key)
            document = document if head is None else head.metadata.get("document") == "1"
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
        for index, fetched in zip(wanted, self._map([digests[i] for i in wanted], self._fetch), strict=True):
            found[index] = None if fetched is None else fetched.data
        return found

    def _fetch(self, digest: Digest) -> Fetched | None:
        """The remote's object, kept in the cache when its bytes are right."""
        fetched = self.bucket.get(self._object_key(digest))
        if fetched is not None and self.cache is not None and Digest.of(fetched.data) == digest:
            self.cache.keep(digest, fetched.data, fetched.metadata.get("document") == "1")
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
            return None if fetched is None else _info(digest, len(fetched.data), fetched.metadata)
        head = self.bucket.head(self._object_key(digest))
        return None if head is None else _info(digest, head.size, head.metadata)

    def objects(self) -> Iterator[ObjectInfo]:
        listed = [_digest(item.key.rpartition("/")[2]) for item in self.bucket.list(f"{self._root}objects/")]
        infos = {info.digest: info for info in self._map(listed, self._listed_info) if info is not None}
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
        head = self.bucket.head(self._object_key(digest))
        return None if head is None else _info(digest, head.size, head.metadata)

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
        keys = [self._object_key(digest) for digest in sorted(doomed)]
        for item in self.bucket.list(f"{self._root}produced/"):
            if _digest(item.key.rpartition("/")[2]) in doomed:
                keys.append(item.key)
        for item in self.bucket.list(f"{self._root}log/"):
            _, action, result = item.key[len(self._root) + 4 :].split("/")
            if _digest(result) in doomed:
                keys.append(item.key)
                self._drop_result(_digest(action), _digest(result))
        self.bucket.delete_many(keys)

    def _drop_result(self, key: Digest, result: Digest) -> None:
        """Remove the ``actions`` entry of ``key`` if it still names ``result``."""
        found = self.bucket.get(self._action_key(key))
        if found is not None and self._entry(found, key).result == result:
            self.bucket.delete(self._action_key(key), if_match=found.etag)

    def _orphans(self, before: float) -> list[str]:
        """Log entries with no recorded result (their writer was killed first), older than ``before``."""
        entries = [item.key for item in self.bucket.list(f"{self._root}log/")]
        old = [key for key in entries if float(key[len(self._root) + 4 :].split("/")[0]) < before]
        recorded = self._map(old, lambda key: self._entry_recorded(key))
        return [key for key, present in zip(old, recorded, strict=True) if not present]

    def _entry_recorded(self, log_key: str) -> bool:
        _, key, result = log_key[len(self._root) + 4 :].split("/")
        return self._remote_result(_digest(key)) == _digest(result)

    def count_incomplete(self) -> int:
        return len(self._orphans(float("inf")))

    def sweep_incomplete(self, before: float) -> int:
        orphans = self._orphans(before)
        self.bucket.delete_many(orphans)
        return len(orphans)

    # -- refs --------------------------------------------------------------------------------------

    def _read_ref(self, name: str) -> tuple[Digest | None, str]:
        """The ref's digest and ETag as the remote has it; (None, ABSENT) when it has none."""
        fetched = self.bucket.get(self._ref_key(name))
        if fetched is None:
            return None, ABSENT
        return Digest(fetched.data.decode()), fetched.etag

    def get_ref(self, name: str) -> Digest | None:
        change = self._pending.find_ref(name)
        return change.new if change is not None else self._read_ref(name)[0]

    def refs(self) -> dict[str, Digest]:
        prefix = f"{self._root}refs/"
        names = [item.key[len(prefix) :] for item in self.bucket.list(prefix)]
        found = dict(zip(names, self._map(names, lambda name: self._read_ref(name)[0]), strict=True))
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
        key = self._ref_key(name)
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
        """The indexes first, the ``actions`` entry last, on condition: only that makes the result recorded."""
        recorded = self._action_key(entry.key)
        found = self.bucket.get(recorded)
        current = None if found is None else self._entry(found, entry.key)
        stands = None if current is None else current.result  # the key's result once this write is decided
        if stands != entry.result and stands == replacing:
            written = self._index_keys(entry.key, entry.result, entry.outputs, entry.recorded)
            self._map(written, lambda key: self.bucket.put(key, b""))
            body = {"result": str(entry.result), "recorded": entry.recorded, "outputs": [str(o) for o in entry.outputs]}
            condition = {"if_absent": True} if found is None else {"if_match": found.etag}
            if self.bucket.put(recorded, json.dumps(body).encode(), **condition) is None:
                self.bucket.delete_many(written)  # another writer recorded the key first: its result stands
                stands = self._remote_result(entry.key)
            else:
                stands = entry.result
                if current is not None:
                    replaced = self._index_keys(entry.key, current.result, current.outputs, current.recorded)
                    self.bucket.delete_many(replaced)
        if self.cache is not None and stands is not None:
            self.cache.keep_result(entry.key, stands)

    def _entry(self, found: Fetched, key: Digest) -> RecordedResult:
        """An ``actions`` entry: a shared bucket is outside input like any other, so it is read strictly."""
        where = f"action entry s3://{self.bucket.name}/{self._action_key(key)}"
        body = parse_json_object(found.data, where)
        result, recorded, outputs = body.get("result"), body.get("recorded"), body.get("outputs")
        try:
            if not isinstance(result, str) or not isinstance(recorded, int | float) or not isinstance(outputs, list):
                raise ValueError("it needs a result, a time and a list of outputs")
            return RecordedResult(key, Digest(result), tuple(Digest(str(o)) for o in outputs), float(recorded))
        except ValueError as exc:
            raise StoreError(f"{where} is malformed: {exc}", field="result") from None

    def _remote_result(self, key: Digest) -> Digest | None:
        found = self.bucket.get(self._action_key(key))
        return None if found is None else self._entry(found, key).result

    def results(self, key: Digest) -> list[Digest]:
        hidden = self._pending.hidden()
        pending = [entry.result for entry in self._pending.pending_results() if entry.key == key]
        if pending:  # this thread's transaction recorded one: what it sees until its flush decides
            return [result for result in pending[-1:] if result not in hidden]
        cached = self.cache.results(key) if self.cache is not None else []
        if cached:
            return [result for result in cached if result not in hidden]
        remote = self._remote_result(key)
        if remote is None:
            return []
        if self.cache is not None:
            self.cache.keep_result(key, remote)
        return [] if remote in hidden else [remote]

    def producers(self, output: Digest) -> list[Digest]:
        prefix = f"{self._root}produced/{_part(output)}/"
        remote = [_digest(item.key[len(prefix) :]) for item in self.bucket.list(prefix)]
        pending = [entry.result for entry in self._pending.pending_results() if output in entry.outputs]
        hidden = self._pending.hidden()
        return [result for result in dict.fromkeys([*remote, *pending]) if result not in hidden]

    def results_since(self, since: float) -> list[Digest]:
        prefix = f"{self._root}log/"
        keys = [item.key for item in self.bucket.list(prefix, start_after=f"{prefix}{_stamp(since)}")]
        keys = [key for key in keys if float(key[len(prefix) :].split("/")[0]) >= since]
        recorded = self._map(keys, self._entry_recorded)
        remote = [_digest(key.rpartition("/")[2]) for key, ok in zip(keys, recorded, strict=True) if ok]
        pending = [entry.result for entry in self._pending.pending_results() if entry.recorded >= since]
        hidden = self._pending.hidden()
        return [result for result in dict.fromkeys([*remote, *pending]) if result not in hidden]

    # -- claims ------------------------------------------------------------------------------------

    def claimant(self, key: Digest) -> bytes | None:
        found = self.bucket.get(self._claim_key(key))
        return None if found is None else found.data

    def swap_claim(self, key: Digest, expected: bytes | None, new: bytes | None) -> bool:
        where = self._claim_key(key)
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
        self._map(
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
