"""The fence's configuration: which provider, which key, and how much of the balance is not ours to spend."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from ..contracts import ContractModel, EnvName, Sha256
from ..contracts.files import read_contract

__all__ = ["FenceConfig", "FenceTerms", "load_config"]


class FenceTerms(ContractModel):
    """What the fence holds an account to, wherever it is written: a suite's forward settings declare these
    (beside the variable naming the quota API), a fence config carries them (beside the resolved URL)."""

    key_sha256: Sha256  # fingerprint of the eval key, so a run is never billed to another key by accident
    production_reserve_usd: Decimal = Field(ge=0, allow_inf_nan=False)  # balance that must stay untouched
    timeout_seconds: float = Field(default=10.0, gt=0, le=300)


class FenceConfig(FenceTerms):
    """Read once per pair; the key itself is only ever named (by its variable) and fingerprinted, never stored."""

    base_url: str  # e.g. https://openrouter.ai; the endpoints are <base_url>/api/v1/key and /api/v1/credits
    key_env: EnvName  # the environment variable that holds the exported key

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
            raise ValueError(f"expected an http(s) base URL without query or fragment, got {value!r}")
        return value.rstrip("/")


def load_config(path: Path) -> FenceConfig:
    """Read a fence config JSON file; a missing or malformed file is an error naming the file."""
    return read_contract(path, FenceConfig, "the fence config")


PUBLIC_CONTRACTS = (FenceConfig,)
