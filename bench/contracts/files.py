"""Reading a contract from a JSON file: the one place that turns file and validation errors into ContractError."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ContractError
from .strict_json import parse_json_object

__all__ = ["parse_contract", "read_contract", "validation_summary"]

M = TypeVar("M", bound=BaseModel)


_SECRET_NAMES = ("key", "token", "secret", "password", "credential")


def validation_summary(exc: ValidationError) -> str:
    """Each broken field as ``field.path: message (got VALUE)``, without pydantic's help URLs.

    The value is shown only where it is short and cannot be a secret: never for an unknown field (a stray
    ``key`` in a config is exactly where a provider key would sit), nor for a field whose name says secret.
    """
    parts = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "(the document)"
        parts.append(f"{where}: {error['msg']}{_shown(error, where)}")
    return "; ".join(parts)


def _shown(error: Any, where: str) -> str:
    got = error.get("input")
    if error["type"] == "extra_forbidden" or any(name in where.lower() for name in _SECRET_NAMES):
        return ""
    shown = repr(got)
    if isinstance(got, dict | list | tuple | bytes | bytearray) or len(shown) > 42:
        return f" (got a {type(got).__name__})"
    return f" (got {shown})"


def parse_contract(data: bytes, model: type[M], what: str) -> M:
    """``data`` read strictly (:mod:`.strict_json`) and validated through ``model``; errors name ``what``."""
    parse_json_object(data, what)
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise ContractError(f"{what} breaks its contract: {validation_summary(exc)}", field=field) from None


def read_contract(path: Path, model: type[M], what: str, hint: str = "") -> M:
    """``path`` parsed through ``model``; ``what`` names the document in errors ("the fence config"), ``hint``
    says what to do when the file cannot be read. Errors name the file and, for a broken contract, each field."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ContractError(f"cannot read {what} {path}: {exc.strerror}", path=str(path), hint=hint or None) from exc
    try:
        return parse_contract(data, model, f"{what} {path}")
    except ContractError as exc:
        exc.path = str(path)
        raise
