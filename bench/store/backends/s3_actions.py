"""The action results as a bucket holds them: one ``actions`` entry per key, and its producers and log index.

The entry is written last and on condition (``If-None-Match: *`` to create, ``If-Match`` to replace the entry
read), so it alone makes a result recorded; index entries whose entry never came (a writer killed between) are
checked against it on every read and swept by gc. What a transaction buffers and what the local cache keeps is
the backend's (:mod:`.s3`); this module speaks only to the bucket.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ...contracts import Digest
from .base import RecordedResult
from .s3_bucket import Bucket, Fetched
from .s3_layout import Area, S3Layout, decode_entry, digest_named, encode_entry

__all__ = ["ActionIndex"]


@dataclass(frozen=True, slots=True)
class ActionIndex:
    """The ``actions``, ``produced`` and ``log`` keys of one store."""

    bucket: Bucket
    layout: S3Layout

    def _entry(self, found: Fetched, key: Digest) -> RecordedResult:
        return decode_entry(found.data, key, f"action entry s3://{self.bucket.name}/{self.layout.action_key(key)}")

    def result_of(self, key: Digest) -> Digest | None:
        """The result recorded for ``key``, if any."""
        found = self.bucket.get(self.layout.action_key(key))
        return None if found is None else self._entry(found, key).result

    def record(self, entry: RecordedResult, replacing: Digest | None) -> Digest | None:
        """The indexes first, the ``actions`` entry last, on condition: only that makes the result recorded.
        Returns the key's result once this write is decided (another writer's, when it recorded the key first)."""
        recorded = self.layout.action_key(entry.key)
        found = self.bucket.get(recorded)
        current = None if found is None else self._entry(found, entry.key)
        stands = None if current is None else current.result
        if stands == entry.result or stands != replacing:
            return stands
        written = self.layout.index_keys(entry.key, entry.result, entry.outputs, entry.recorded)
        self.bucket.concurrently(written, lambda key: self.bucket.put(key, b""))
        condition = {"if_absent": True} if found is None else {"if_match": found.etag}
        if self.bucket.put(recorded, encode_entry(entry), **condition) is None:
            self.bucket.delete_many(written)  # another writer recorded the key first: its result stands
            return self.result_of(entry.key)
        if current is not None:
            self.bucket.delete_many(
                self.layout.index_keys(entry.key, current.result, current.outputs, current.recorded)
            )
        return entry.result

    def forget_results(self, doomed: Collection[Digest]) -> list[str]:
        """Drop the ``actions`` entries naming a doomed result; the index keys that name one, for the caller to
        delete with the objects."""
        keys = []
        for item in self.bucket.list(self.layout.prefix(Area.PRODUCED)):
            if digest_named(item.key.rpartition("/")[2]) in doomed:
                keys.append(item.key)
        for item in self.bucket.list(self.layout.prefix(Area.LOG)):
            logged = self.layout.logged(item.key)
            if logged.result in doomed:
                keys.append(item.key)
                self._drop(logged.key, logged.result)
        return keys

    def _drop(self, key: Digest, result: Digest) -> None:
        """Remove the ``actions`` entry of ``key`` if it still names ``result``."""
        found = self.bucket.get(self.layout.action_key(key))
        if found is not None and self._entry(found, key).result == result:
            self.bucket.delete(self.layout.action_key(key), if_match=found.etag)

    def orphans(self, before: float) -> list[str]:
        """Log entries with no recorded result (their writer was killed first), older than ``before``."""
        entries = [item.key for item in self.bucket.list(self.layout.prefix(Area.LOG))]
        old = [key for key in entries if self.layout.logged_at(key) < before]
        recorded = self.bucket.concurrently(old, self._logged_recorded)
        return [key for key, present in zip(old, recorded, strict=True) if not present]

    def _logged_recorded(self, log_key: str) -> bool:
        logged = self.layout.logged(log_key)
        return self.result_of(logged.key) == logged.result

    def producers(self, output: Digest) -> list[Digest]:
        """The results the bucket lists as producing ``output``."""
        prefix = self.layout.producers_of(output)
        return [digest_named(item.key[len(prefix) :]) for item in self.bucket.list(prefix)]

    def recorded_since(self, since: float) -> list[Digest]:
        """The results recorded at ``since`` or later, in time order."""
        listed = self.bucket.list(self.layout.prefix(Area.LOG), start_after=self.layout.log_start(since))
        keys = [key for key in (item.key for item in listed) if self.layout.logged_at(key) >= since]
        recorded = self.bucket.concurrently(keys, self._logged_recorded)
        return [digest_named(key.rpartition("/")[2]) for key, ok in zip(keys, recorded, strict=True) if ok]
