"""Where a store keeps its objects, refs and action results: the interface and its implementations."""

from .base import ObjectInfo, StoreBackend
from .in_memory import MemoryBackend
from .sqlite import INLINE_LIMIT, PACK_LIMIT, SqliteBackend

__all__ = ["INLINE_LIMIT", "PACK_LIMIT", "MemoryBackend", "ObjectInfo", "SqliteBackend", "StoreBackend"]
