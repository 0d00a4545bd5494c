"""Reading a contract from a JSON file: the one place that turns file and validation errors into ContractError."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ContractError

__all__ = ["read_contract"]

M = TypeVar("M", bound=BaseModel)


def read_contract(path: Path, model: type[M], what: str, hint: str = "") -> M:
    """``path`` parsed through ``model``; ``what`` names the document in errors ("the fence config"), ``hint``
    says what to do when the file cannot be read. Errors name the file and, for a broken contract, each field."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ContractError(f"cannot read {what} {path}: {exc.strerror}{'; ' + hint if hint else ''}") from exc
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise ContractError(f"{path} breaks the contract of {what}:\n{exc}") from exc
