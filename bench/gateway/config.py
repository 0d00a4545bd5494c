"""The gateway's configuration: a contract, so a run records exactly how its model endpoint behaved."""

from __future__ import annotations

from enum import StrEnum
from typing import Self
from urllib.parse import urlsplit

from pydantic import Field, model_validator

from ..contracts import ContractModel, Sha256
from .metering import ArmKey, Price

__all__ = ["GatewayConfig", "Mode", "PolicyPin"]


class Mode(StrEnum):
    POLICY = "policy"  # answer offline from a pinned policy; nothing is spent
    FORWARD = "forward"  # pass through to the provider, metered and capped per arm


class PolicyPin(ContractModel):
    """A runner-owned policy file and the SHA-256 its bytes must have."""

    path: str = Field(min_length=1)
    sha256: Sha256


class GatewayConfig(ContractModel):
    mode: Mode
    arms: tuple[ArmKey, ...] = Field(min_length=1)
    policy: PolicyPin | None = None
    upstream: str | None = None  # base URL, e.g. https://api.anthropic.com
    upstream_key_env: str = "ANTHROPIC_API_KEY"  # the gateway's own environment holds the real key
    prices: dict[str, Price] = Field(default_factory=dict)  # model name -> price; forward mode refuses others

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        labels = [arm.label for arm in self.arms]
        keys = [arm.key_sha256 for arm in self.arms]
        if len(set(labels)) != len(labels) or len(set(keys)) != len(keys):
            raise ValueError(f"arm labels and key digests must be unique, got labels {labels}")
        if self.mode is Mode.POLICY and self.policy is None:
            raise ValueError("mode 'policy' needs `policy` (path and sha256 of the policy file)")
        if self.mode is Mode.FORWARD:
            if self.upstream is None or urlsplit(self.upstream).scheme not in ("http", "https"):
                raise ValueError(f"mode 'forward' needs `upstream` as an http(s) base URL, got {self.upstream!r}")
            if not self.prices:
                raise ValueError("mode 'forward' needs `prices` (USD per million tokens per model) to meter spending")
        return self
