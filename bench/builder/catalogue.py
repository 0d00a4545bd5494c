"""A catalogue: the stages a pipeline may invoke, by name.

The catalogue is composed by the layer that composes the pipeline (it imports every stage module); nothing below
that layer names a stage module. Lineage, re-derivation and plan checks are given a catalogue to look stages up in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import StageError
from .stage import Stage

__all__ = ["Catalogue"]


class Catalogue:
    """Stages by name; two stages may not share a name."""

    def __init__(self, stages: Iterable[Stage[Any, Any, Any]]) -> None:
        self._stages: dict[str, Stage[Any, Any, Any]] = {}
        for declared in stages:
            known = self._stages.get(declared.name)
            if known is not None and known is not declared:
                raise StageError(f"stage {declared.name!r} is declared twice ({known.module} and {declared.module})")
            self._stages[declared.name] = declared

    def get(self, name: str) -> Stage[Any, Any, Any]:
        try:
            return self._stages[name]
        except KeyError:
            known = ", ".join(sorted(self._stages))
            raise StageError(f"no stage is named {name!r}; the catalogue holds: {known}") from None

    def __contains__(self, name: object) -> bool:
        return name in self._stages

    def __iter__(self) -> Iterator[Stage[Any, Any, Any]]:
        return iter(self._stages.values())
