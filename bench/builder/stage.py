"""A stage is declared once: name, version, kind, and a function from typed inputs and params to typed outputs.

The function's annotations are the declaration::

    @stage("redact", version=2, kind=StageKind.DETERMINISTIC)
    def redact(context: StageContext, inputs: RedactInputs, params: RedactParams) -> RedactOutputs: ...

``RedactInputs`` and ``RedactOutputs`` are :class:`Ports`: contract models whose every field is a typed digest
(``TreeDigest``, ``BlobDigest``, ``Ref[SomeDocument]``), an optional one, or a ``dict[str, ...]`` of them. A plan is
checked against these declarations before anything runs (:mod:`bench.pipeline.check`), and the engine records
ports flat, as the action cache always has: a field is one name, a dict field ``name/key`` per entry.
"""

from __future__ import annotations

import enum
import importlib
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from ..contracts import ContractModel, Digest, canonical_json
from ..errors import ContractError, StageError
from ..store import Store
from .context import StageContext

__all__ = [
    "LOCATOR",
    "SUPPLIED",
    "Locator",
    "NoInputs",
    "NoParams",
    "Port",
    "Ports",
    "Stage",
    "StageKind",
    "Supplied",
    "TreeReads",
    "keyed_params",
    "stage",
]

P = TypeVar("P", bound=ContractModel)
I = TypeVar("I", bound="Ports")  # noqa: E741 - the usual letter for the inputs type
O = TypeVar("O", bound="Ports")  # noqa: E741 - the usual letter for the outputs type
SEPARATOR = "/"  # between a dict port's name and its key in the flat form


class StageKind(enum.StrEnum):
    """Deterministic stages can be re-derived bit for bit; observed ones (containers, agents) are only recorded."""

    DETERMINISTIC = "deterministic"
    OBSERVED = "observed"


class NoParams(ContractModel):
    """The params of a stage that takes none."""


class Locator:
    """Marks a params field (``Annotated[str, LOCATOR]``) that says where to read an input, not what it is.

    The stage receives it, but the action key leaves it out, as a fetch's mirror is left out of a content hash:
    two spellings of one path, or two checkouts of one commit, are one cache hit. What identifies the input (a
    commit id, a content digest, a declared name) must be a keyed field beside it.
    """


LOCATOR = Locator()


class Supplied:
    """Marks an input port (``Annotated[TreeDigest, SUPPLIED]``) that a run may be given from outside itself: a
    suite's file stored by the plan, a hand-assembled bundle's records. Every other input of a published lineage
    must be the output of an action the lineage lists (``verify`` checks it), so a tree that only an upstream stage
    makes (a redacted corpus, say) can never enter a bundle as a given."""


SUPPLIED = Supplied()


class TreeReads(enum.StrEnum):
    """What a stage reads of its tree inputs: file contents, or only the listing (directory objects).

    A bundle carries trees as listings, so a deterministic stage that reads only listings (redact, audit) is
    re-derived by ``verify`` from the bundle; one that reads files (certify) is attested."""

    FILES = "files"
    LISTINGS = "listings"


def keyed_params(params: ContractModel) -> dict[str, Any]:
    """``params`` as the action key records them: every field but the locators."""
    located = {
        name
        for name, field in type(params).model_fields.items()
        if any(isinstance(marker, Locator) for marker in field.metadata)
    }
    return params.model_dump(mode="json", exclude=located)


@dataclass(frozen=True)
class Port:
    """One declared input or output: its name, digest type, and whether it is optional or a dict of digests."""

    name: str
    kind: type[Digest]
    optional: bool
    many: bool
    supplied: bool = False  # marked SUPPLIED: may come from outside the run (see Supplied)

    def describe(self) -> str:
        shape = f"dict[str, {self.kind.__name__}]" if self.many else self.kind.__name__
        return f"{shape} | None" if self.optional else shape


class Ports(ContractModel):
    """Base of a stage's inputs and outputs; see the module docstring for what a field may be."""

    @classmethod
    def ports(cls) -> dict[str, Port]:
        return _ports(cls)

    def flat(self) -> dict[str, Digest]:
        """The ports as the action cache records them: ``name`` or ``name/key`` to digest, absent ones left out."""
        flat: dict[str, Digest] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if isinstance(value, dict):
                flat.update({f"{name}{SEPARATOR}{key}": digest for key, digest in value.items()})
            elif value is not None:
                flat[name] = value
        return flat

    @classmethod
    def from_flat(cls, flat: Mapping[str, Digest], what: str) -> Any:
        """The ports back from their flat form; ``what`` names the stage and side in the error."""
        fields: dict[str, Any] = {}
        ports = cls.ports()
        for name, digest in flat.items():
            field, _, key = name.partition(SEPARATOR)
            port = ports.get(field)
            if port is None or port.many != bool(key):
                raise StageError(f"{what}: no port is named {name!r}; it declares {_listing(ports)}")
            if port.many:
                fields.setdefault(field, {})[key] = digest
            else:
                fields[field] = digest
        try:
            return cls.model_validate({name: value for name, value in fields.items()}, strict=False)
        except ValidationError as exc:
            raise StageError(f"{what}: {_first_error(exc)}") from exc


class NoInputs(Ports):
    """The inputs of a stage that reads only its params."""


def _listing(ports: Mapping[str, Port]) -> str:
    return ", ".join(f"{port.name}: {port.describe()}" for port in ports.values()) or "no ports"


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"port {where!r}: {error['msg']}"


_PORTS: dict[type[Ports], dict[str, Port]] = {}


def _ports(model: type[Ports]) -> dict[str, Port]:
    known = _PORTS.get(model)
    if known is None:
        known = {
            name: _port(model, name, field.annotation, any(isinstance(marker, Supplied) for marker in field.metadata))
            for name, field in model.model_fields.items()
        }
        _PORTS[model] = known
    return known


def _port(model: type[Ports], name: str, annotation: Any, supplied: bool) -> Port:
    optional = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        optional = len(members) < len(typing.get_args(annotation))
        annotation = members[0] if len(members) == 1 else None
    many = typing.get_origin(annotation) is dict
    if many:
        key, annotation = typing.get_args(annotation)
        if key is not str:
            annotation = None
    if not (isinstance(annotation, type) and issubclass(annotation, Digest)):
        raise StageError(
            f"{model.__name__}.{name}: a port must be a digest type, an optional one or dict[str, digest type]"
        )
    return Port(name=name, kind=annotation, optional=optional, many=many, supplied=supplied)


StageFunction = Callable[[StageContext, I, P], O]
# What of an observed action's outputs can be re-derived from its outputs alone (a pair's spec-diff from its arms'
# container specs): given the store and the outputs by port, each way they disagree, said in one line.
OutputCheck = Callable[[Store, Mapping[str, Digest]], list[str]]
# Given a stage's outputs, why its result must be run again by a later run (None: it is kept, as every result is).
RetryJudge = Callable[[Any, Any], str | None]


@dataclass(frozen=True)
class Stage(Generic[I, P, O]):
    """A declared stage; call :func:`stage` to make one."""

    name: str
    version: int
    kind: StageKind
    inputs: type[I]
    params: type[P]
    outputs: type[O]
    run: StageFunction[I, P, O]
    trees: TreeReads = TreeReads.FILES  # what it reads of its tree inputs (a bundle holds listings only)
    checks: OutputCheck | None = None  # for an observed stage: what verify re-derives of its outputs
    retry: RetryJudge | None = None  # (store, outputs) -> why a later run must execute this action again, or None

    @property
    def module(self) -> str:
        return self.run.__module__

    def __reduce__(self) -> tuple[Callable[[str, str], Stage[Any, Any, Any]], tuple[str, str]]:
        """Pickled by reference (doit's worker processes receive tasks pickled): the module's own declaration."""
        return _declared, (self.run.__module__, self.run.__name__)

    def parse_params(self, raw: Mapping[str, Any]) -> P:
        """Params as a plan or an action key spells them: JSON, so lists fill tuples and strings fill enums."""
        try:
            return self.params.model_validate_json(canonical_json(dict(raw)))
        except ValidationError as exc:
            raise ContractError(f"stage {self.name!r}: bad params: {_first_error(exc)}") from exc

    def parse_inputs(self, flat: Mapping[str, Digest]) -> I:
        parsed: I = self.inputs.from_flat(flat, f"stage {self.name!r} inputs")
        return parsed

    def parse_outputs(self, flat: Mapping[str, Digest]) -> O:
        parsed: O = self.outputs.from_flat(flat, f"stage {self.name!r} outputs")
        return parsed

    def ports(self) -> Iterator[tuple[str, Port]]:
        for side, model in (("input", self.inputs), ("output", self.outputs)):
            for port in model.ports().values():
                yield side, port


def _declared(module: str, name: str) -> Stage[Any, Any, Any]:
    found = getattr(importlib.import_module(module), name)
    if not isinstance(found, Stage):
        raise StageError(f"{module}.{name} is not a declared stage")
    return found


def stage(
    name: str,
    *,
    version: int,
    kind: StageKind,
    trees: TreeReads = TreeReads.FILES,
    checks: OutputCheck | None = None,
    retry: RetryJudge | None = None,
) -> Callable[[StageFunction[I, P, O]], Stage[I, P, O]]:
    """Declare a stage from its function's annotations: ``(context, inputs: Ports, params: Contract) -> Ports``;
    ``trees`` says whether it reads its tree inputs' files or only their listings, ``checks`` what of an observed
    stage's outputs can be re-derived from them.

    ``retry(store, outputs)`` may judge a result not to be kept: it is recorded and used by the run that made it,
    with the reason, and a later run executes the action again (an observed stage whose provider failed it)."""

    def declare(function: StageFunction[I, P, O]) -> Stage[I, P, O]:
        try:
            hints = typing.get_type_hints(function)
        except NameError as exc:
            raise StageError(f"stage {name!r}: its annotations must name module-level types ({exc})") from None
        parameters = list(function.__code__.co_varnames[: function.__code__.co_argcount])
        if len(parameters) != 3:
            raise StageError(f"stage {name!r}: the function must take (context, inputs, params)")
        inputs: Any = hints.get(parameters[1])
        params: Any = hints.get(parameters[2])
        outputs: Any = hints.get("return")
        if not (_is(inputs, Ports) and _is(params, ContractModel) and _is(outputs, Ports)):
            raise StageError(f"stage {name!r}: annotate inputs and the return as Ports and params as a contract")
        for model in (inputs, outputs):
            _ports(model)  # refuses a field that is not a digest port now, at import, not when a plan runs
        return Stage(
            name=name,
            version=version,
            kind=kind,
            inputs=inputs,
            params=params,
            outputs=outputs,
            run=function,
            trees=trees,
            checks=checks,
            retry=retry,
        )

    return declare


def _is(value: Any, base: type) -> bool:
    return isinstance(value, type) and issubclass(value, base)
