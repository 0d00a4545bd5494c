"""One S3 bucket through boto3: the only module that imports it, and the one place its errors are translated.

The endpoint, credentials and region come from the usual AWS environment (``AWS_ENDPOINT_URL`` or
``AWS_ENDPOINT_URL_S3`` for an S3-compatible server, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_DEFAULT_REGION``, or a profile); nothing here stores or prints them. Conditional writes are the S3 ones:
``If-None-Match: *`` (create only) and ``If-Match: <etag>`` (replace only what was read); a failed condition is an
answer (None or False), never an error. Every other refusal is a :class:`~bench.errors.StoreError` naming the
operation, the key and what to do next.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import boto3
import botocore.config
import botocore.exceptions

from ...errors import StoreError

__all__ = ["Bucket", "Fetched", "Head", "Listed"]

T = TypeVar("T")
R = TypeVar("R")
# Connections kept per process: a flush of many small objects runs this many requests at once.
POOL = 32
_CONDITION_FAILED = {"PreconditionFailed", "412", "ConditionalRequestConflict", "409"}
_ABSENT = {"NoSuchKey", "404", "NotFound"}


@dataclass(frozen=True, slots=True)
class Fetched:
    data: bytes
    etag: str
    metadata: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Head:
    size: int
    etag: str
    metadata: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Listed:
    key: str
    size: int


def _endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or None


def _client() -> Any:
    """A client from the environment. Path-style addressing for a custom endpoint (S3-compatible servers rarely
    serve virtual hosts), and checksums only where S3 requires them: the store hashes every object itself, and
    some compatible servers refuse boto's default streaming checksums."""
    endpoint = _endpoint()
    config = botocore.config.Config(
        max_pool_connections=POOL,
        retries={"mode": "standard", "max_attempts": 5},
        s3={"addressing_style": "path"} if endpoint else {},
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
        connect_timeout=10,
        read_timeout=120,
    )
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name=region, config=config)
    client.meta.events.register("before-send.s3", _without_expect)
    return client


def _without_expect(request: Any, **_: Any) -> None:
    """Send no ``Expect: 100-continue``: after a zero-length PUT with it, botocore's pooled connection reads the
    next request's answer out of step (boto/botocore#3755; here a conditional put then saw a stale 412 while its
    write happened). The header is not signed, so dropping it is safe; large writes ask HEAD first instead."""
    request.headers.pop("Expect", None)


def _code(error: botocore.exceptions.ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


class Bucket:
    """Keys of one bucket; safe to share between threads, and a forked child makes its own connections."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.endpoint = _endpoint() or "aws"
        self._lock = threading.Lock()
        self._made: tuple[int, Any] | None = None
        self._pool: tuple[int, ThreadPoolExecutor] | None = None
        self._pool_lock = threading.Lock()

    @property
    def client(self) -> Any:
        with self._lock:
            if self._made is None or self._made[0] != os.getpid():  # sockets must not cross a fork
                self._made = (os.getpid(), _client())
            return self._made[1]

    def concurrently(self, work: Iterable[T], function: Callable[[T], R]) -> list[R]:
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

    @contextmanager
    def _errors(self, doing: str, key: str) -> Iterator[None]:
        """Translate boto's refusals once, here: what failed, where, and what to check."""
        where = f"s3://{self.name}/{key}"
        try:
            yield
        except botocore.exceptions.NoCredentialsError as exc:
            raise StoreError(
                f"{doing} {where}: no credentials",
                hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_ENDPOINT_URL for a non-AWS server)",
            ) from exc
        except botocore.exceptions.ClientError as exc:
            code = _code(exc)
            hint = (
                f"create the bucket {self.name!r} first"
                if code == "NoSuchBucket"
                else "check the credentials' permissions on the bucket"
                if code in {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch"}
                else "check the server's log"
            )
            raise StoreError(f"{doing} {where}: the server refused ({code})", actual=code, hint=hint) from exc
        except botocore.exceptions.BotoCoreError as exc:
            raise StoreError(
                f"{doing} {where}: {exc}", hint=f"check that the S3 endpoint {self.endpoint} answers"
            ) from exc

    # -- reads -------------------------------------------------------------------------------------

    def _unless_absent(self, doing: str, key: str, request: Callable[[], T]) -> T | None:
        """What ``request`` returns, or None when the key does not exist."""
        with self._errors(doing, key):
            try:
                return request()
            except botocore.exceptions.ClientError as exc:
                if _code(exc) in _ABSENT:
                    return None
                raise

    def get(self, key: str) -> Fetched | None:
        """The object's bytes, ETag and metadata, or None when there is no such key."""

        def fetch() -> Fetched:
            answer = self.client.get_object(Bucket=self.name, Key=key)
            return Fetched(answer["Body"].read(), str(answer["ETag"]), dict(answer.get("Metadata") or {}))

        return self._unless_absent("reading", key, fetch)

    def head(self, key: str) -> Head | None:
        """The object's size, ETag and metadata without its bytes, or None when there is no such key."""

        def look() -> Head:
            answer = self.client.head_object(Bucket=self.name, Key=key)
            return Head(int(answer["ContentLength"]), str(answer["ETag"]), dict(answer.get("Metadata") or {}))

        return self._unless_absent("looking up", key, look)

    def list(self, prefix: str, start_after: str | None = None) -> Iterator[Listed]:
        """Every key under ``prefix`` (after ``start_after`` when given), in key order."""
        options: dict[str, Any] = {"Bucket": self.name, "Prefix": prefix}
        if start_after is not None:
            options["StartAfter"] = start_after
        with self._errors("listing", prefix):
            for page in self.client.get_paginator("list_objects_v2").paginate(**options):
                for item in page.get("Contents", ()):
                    yield Listed(str(item["Key"]), int(item["Size"]))

    # -- writes ------------------------------------------------------------------------------------

    def put(
        self,
        key: str,
        data: bytes,
        *,
        metadata: Mapping[str, str] | None = None,
        if_absent: bool = False,
        if_match: str | None = None,
    ) -> str | None:
        """Write ``data`` at ``key``; with a condition, only if it holds. The new ETag, or None when it did not."""
        options: dict[str, Any] = {"Bucket": self.name, "Key": key, "Body": data, "Metadata": dict(metadata or {})}
        if if_absent:
            options["IfNoneMatch"] = "*"
        if if_match is not None:
            options["IfMatch"] = if_match
        with self._errors("writing", key):
            try:
                return str(self.client.put_object(**options)["ETag"])
            except botocore.exceptions.ClientError as exc:
                if (if_absent or if_match is not None) and _code(exc) in _CONDITION_FAILED | _ABSENT:
                    return None
                raise

    def delete(self, key: str, *, if_match: str | None = None) -> bool:
        """Remove ``key`` (only if its ETag is ``if_match``, when given); False when that condition failed."""
        options: dict[str, Any] = {"Bucket": self.name, "Key": key}
        if if_match is not None:
            options["IfMatch"] = if_match
        with self._errors("deleting", key):
            try:
                self.client.delete_object(**options)
            except botocore.exceptions.ClientError as exc:
                if if_match is not None and _code(exc) in _CONDITION_FAILED | _ABSENT:
                    return False
                raise
        return True

    def delete_many(self, keys: Sequence[str]) -> None:
        """Remove many keys, a thousand per request (the S3 limit); absent keys are no error."""
        for start in range(0, len(keys), 1000):
            batch = keys[start : start + 1000]
            with self._errors("deleting", batch[0]):
                answer = self.client.delete_objects(
                    Bucket=self.name, Delete={"Objects": [{"Key": key} for key in batch], "Quiet": True}
                )
            failed = answer.get("Errors") or []
            if failed:
                first = failed[0]
                raise StoreError(
                    f"deleting s3://{self.name}/{first.get('Key')}: the server refused ({first.get('Code')})",
                    hint=f"{len(failed)} of {len(batch)} keys were not deleted; run gc again",
                )
