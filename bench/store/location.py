"""Where a store is, as one string: a directory (``store``, ``/data/store``) or ``s3://BUCKET/PREFIX``.

The same string names the store on every node of a cluster, which is what lets a runtime travel as plain data. An
S3 store takes its endpoint and credentials from the usual AWS environment variables and keeps a local cache in
front (see ``backends/cache.py``) under ``$STELE_BENCH_STORE_CACHE``, by default ``~/.cache/stele-bench/store``;
``STELE_BENCH_STORE_CACHE=off`` reads and writes the bucket alone.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..contracts.checked_files import resolved
from ..errors import SourceError, StoreError
from .backends import SqliteBackend, StoreBackend
from .backends.cache import default_cache_root

__all__ = ["CACHE_VARIABLE", "is_remote", "open_backend", "store_location"]

CACHE_VARIABLE = "STELE_BENCH_STORE_CACHE"
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
# S3's bucket naming rules, loosely: lowercase letters, digits, dots and hyphens, 3 to 63 of them.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")


def store_location(text: str | Path) -> str:
    """The canonical spelling: an S3 URL as given (less a trailing slash), a directory made absolute so a
    process started elsewhere (doit, a worker) opens the same store."""
    spelled = str(text)
    if _SCHEME.match(spelled):
        _s3_parts(spelled)
        return spelled.rstrip("/")
    return str(resolved(Path(spelled), "the store location", error=SourceError))


def is_remote(location: str | Path) -> bool:
    """Whether ``location`` names a bucket rather than a directory."""
    return isinstance(location, str) and _SCHEME.match(location) is not None


def _s3_parts(location: str) -> tuple[str, str]:
    scheme = _SCHEME.match(location)
    if scheme is None or scheme.group(1) != "s3":
        raise StoreError(
            f"store location {location!r} has an unknown scheme",
            field="store",
            expected="a directory or s3://BUCKET/PREFIX",
            actual=location,
        )
    bucket, _, prefix = location[len("s3://") :].partition("/")
    if not _BUCKET.match(bucket):
        raise StoreError(
            f"store location {location!r}: {bucket!r} is not an S3 bucket name",
            field="store",
            expected="3-63 lowercase letters, digits, dots or hyphens",
            actual=bucket,
        )
    return bucket, prefix.strip("/")


def cache_root() -> Path | None:
    """Where an S3 store's local cache lives, or None when ``$STELE_BENCH_STORE_CACHE`` is ``off``."""
    setting = os.environ.get(CACHE_VARIABLE, "")
    if setting == "off":
        return None
    return Path(setting) if setting else default_cache_root()


def open_backend(location: str | Path) -> StoreBackend:
    """The backend a location names; boto3 is imported only for an S3 store."""
    if is_remote(location):
        bucket, prefix = _s3_parts(str(location))
        from .backends.s3 import S3Backend

        return S3Backend(bucket, prefix, cache_root())
    return SqliteBackend(Path(location))
