"""Reading a contract from a JSON file: the one place that turns file and validation errors into ContractError."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ContractError
from .checked_files import read_bounded
from .strict_json import parse_json_object

__all__ = ["collection_paused", "field_path", "parse_contract", "read_contract", "validation_summary"]

M = TypeVar("M", bound=BaseModel)


_SECRET_NAMES = ("key", "token", "secret", "password", "credential")
_PLAIN = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_SHOWN_ERRORS = 5  # a document can break in thousands of places; the first few say what to fix


def field_path(location: Sequence[int | str]) -> str:
    """A field's place as ``probes.0.top_k``; a key that is not a plain short name (one a document chose: it may
    hold newlines or be huge) is shown quoted and cut, so the message stays one line."""
    parts = [
        str(part)
        if isinstance(part, int) or _PLAIN.fullmatch(part)
        else repr(part[:40]) + ("..." if len(part) > 40 else "")
        for part in location
    ]
    return ".".join(parts)


def validation_summary(exc: ValidationError) -> str:
    """Each broken field as ``field.path: message (got VALUE)``, without pydantic's help URLs.

    The value is shown only where it is short and cannot be a secret: never for an unknown field (a stray
    ``key`` in a config is exactly where a provider key would sit), nor for a field whose name says secret.
    """
    errors = exc.errors()
    parts = []
    for error in errors[:_SHOWN_ERRORS]:
        where = field_path(error["loc"]) or "(the document)"
        parts.append(f"{where}: {error['msg']}{_shown(error, where)}")
    if len(errors) > _SHOWN_ERRORS:
        parts.append(f"and {len(errors) - _SHOWN_ERRORS} more")
    return "; ".join(parts)


def _shown(error: Any, where: str) -> str:
    got = error.get("input")
    if error["type"] == "extra_forbidden" or any(name in where.lower() for name in _SECRET_NAMES):
        return ""
    shown = repr(got)
    if isinstance(got, dict | list | tuple | bytes | bytearray) or len(shown) > 42:
        return f" (got a {type(got).__name__})"
    return f" (got {shown})"


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block: for a bulk pass that builds an object per file and makes no
    cycles (parsing a manifest, hashing a bundle). Each full collection walks every live object, and a pass that
    holds 100,000s of them set one off every few thousand files: verifying a bundle of 32,000 files paid three
    (0.26 s of 1.5 s) where one of 8,000 paid none, the step that made its growth super-linear (issue 18)."""
    if not gc.isenabled():  # nested, or the caller paused it: leave it to them
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def parse_contract(data: bytes, model: type[M], what: str) -> M:
    """``data`` read strictly (:mod:`.strict_json`) and validated through ``model``; errors name ``what``."""
    try:
        with collection_paused():  # a large document (a bundle's manifest) is an object per entry, twice
            parse_json_object(data, what)
            return model.model_validate_json(data)
    except ValidationError as exc:
        field = field_path(exc.errors()[0]["loc"]) or None
        raise ContractError(f"{what} breaks its contract: {validation_summary(exc)}", field=field) from None


def read_contract(path: Path, model: type[M], what: str, hint: str = "") -> M:
    """``path`` parsed through ``model``; ``what`` names the document in errors ("the fence config"), ``hint``
    says what to do when the file cannot be read. Errors name the file and, for a broken contract, each field."""
    data = read_bounded(path, what, hint=hint or None)  # a regular file, read with a bound
    try:
        return parse_contract(data, model, f"{what} {path}")
    except ContractError as exc:
        exc.path = str(path)
        raise
