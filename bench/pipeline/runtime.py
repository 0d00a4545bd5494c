"""What a doit task needs to run an invocation: where the store is, the catalogue, and the services' factories.

doit pickles tasks for its worker processes, so a runtime is plain data: a store location, a catalogue (its stages
pickle by reference to their modules) and a module-level function that lists the service factories. Each process
opens one store and one stage context per runtime and keeps them: opening SQLite for each of a thousand tasks is
most of a no-op run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..builder.catalogue import Catalogue
from ..builder.context import ServiceFactory, StageContext
from ..store import Store

__all__ = ["Runtime"]


def no_services() -> Mapping[type[Any], ServiceFactory]:
    return {}


def nothing_to_recover(context: StageContext) -> None:
    """The recover hook of a runtime whose stages leave nothing behind when killed."""


@dataclass(frozen=True, eq=False)
class Runtime:
    store: str
    catalogue: Catalogue
    services: Callable[[], Mapping[type[Any], ServiceFactory]] = no_services
    # Run on a cluster node before an invocation that is not cached: clears what a killed run left there.
    recover: Callable[[StageContext], object] = nothing_to_recover

    def context(self) -> StageContext:
        return _context(self.store, self.services)

    def open_store(self) -> Store:
        return _store(self.store)


@functools.cache
def _store(location: str) -> Store:
    return Store(location)


@functools.cache
def _context(location: str, services: Callable[[], Mapping[type[Any], ServiceFactory]]) -> StageContext:
    return StageContext(_store(location), services())
