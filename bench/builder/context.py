"""What a running stage is given besides its inputs and params: the store, and the services the runtime provides.

A stage never builds its own engine client or backend; it asks its context for one by type
(``context.service(SandboxBackend)``). The top layer that composes the pipeline registers a factory per service
type; a service is made the first time a stage asks for it and shared by every later stage of the process. So
nothing below knows which implementation runs (the Docker engine, plain processes, a remote cluster), and a stage
that asks for a service nobody registered is refused with the name of what was missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from ..errors import StageError
from ..store import Store

__all__ = ["ServiceFactory", "StageContext"]

T = TypeVar("T")
ServiceFactory = Callable[[Store], object]


class StageContext:
    """The store a stage reads and writes, and the runtime's services by type."""

    def __init__(self, store: Store, services: Mapping[type[Any], ServiceFactory] | None = None) -> None:
        self.store = store
        self._factories = dict(services or {})
        self._made: dict[type[Any], object] = {}
        self._lock = threading.Lock()

    def service(self, kind: type[T]) -> T:
        """The runtime's ``kind`` service, made on first use."""
        with self._lock:
            if kind not in self._made:
                factory = self._factories.get(kind)
                if factory is None:
                    known = ", ".join(sorted(k.__name__ for k in self._factories)) or "none"
                    raise StageError(
                        f"this stage needs a {kind.__name__}, but the runtime provides none (it provides: {known})"
                    )
                made = factory(self.store)
                if not isinstance(made, kind):
                    raise StageError(f"the runtime's {kind.__name__} factory made a {type(made).__name__}")
                self._made[kind] = made
            return cast(T, self._made[kind])

    def close(self) -> None:
        """Close every service made here that can be closed."""
        with self._lock:
            for made in self._made.values():
                close = getattr(made, "close", None)
                if callable(close):
                    close()
            self._made.clear()
