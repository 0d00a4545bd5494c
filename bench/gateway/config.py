"""The gateway's configuration: a contract, so a run records exactly how its model endpoint behaved.

It never holds a secret. An arm is known by the SHA-256 of the stand-in key its client presents; in forward mode
the provider's key is read from the environment variable ``forward.key_env`` names, and each arm's cap is the
one the pair's :class:`~bench.fence.PairCaps` declares, the same caps whose sum the fence checks headroom for.
:class:`ForwardTerms` is forward mode's one settings type: a suite's forward settings declare it (beside the
variable naming the provider's URL and the pair's caps) and a gateway's config carries it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Self
from urllib.parse import urlsplit

from pydantic import Field, StringConstraints, model_validator

from ..contracts import ApiDialect, ContractModel, EnvName, Sha256
from ..fence import PairCaps
from .metering import DEFAULT_PROVIDER_ERROR_LIMIT, Price

__all__ = ["ArmKey", "ForwardTerms", "GatewayConfig", "Mode", "PolicyPin", "UpstreamAuth"]


class Mode(StrEnum):
    POLICY = "policy"  # answer offline from a pinned policy; nothing is spent
    FORWARD = "forward"  # pass through to the provider, metered and capped per arm


class UpstreamAuth(StrEnum):
    """How the provider takes its key."""

    X_API_KEY = "x-api-key"  # Anthropic's API
    BEARER = "bearer"  # ``Authorization: Bearer``: OpenRouter's Anthropic-compatible endpoint


class ForwardTerms(ContractModel):
    """How forward mode reaches and meters the provider: the key by its variable, how the provider takes it, the
    prices of the models a request may name, and when a failing provider ends an arm."""

    key_env: EnvName  # the variable holding the provider key: named, never held
    upstream_auth: UpstreamAuth = UpstreamAuth.X_API_KEY  # how the provider takes it: x-api-key, or bearer (OpenRouter)
    # request `model` -> USD per million tokens; a request naming another model is refused, it could not be metered
    prices: Annotated[dict[Annotated[str, StringConstraints(min_length=1)], Price], Field(min_length=1)]
    # consecutive provider errors (401/403/429, 5xx, unreachable, a broken stream) that end an arm provider-failed
    provider_error_limit: int = Field(default=DEFAULT_PROVIDER_ERROR_LIMIT, ge=1, le=100)


class PolicyPin(ContractModel):
    """A runner-owned policy file and the SHA-256 its bytes must have."""

    path: str = Field(min_length=1)
    sha256: Sha256


class ArmKey(ContractModel):
    """One arm's identity at the gateway: its label and the SHA-256 of the API key its client presents."""

    label: str = Field(min_length=1)
    key_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class GatewayConfig(ContractModel):
    mode: Mode
    dialect: ApiDialect = ApiDialect.ANTHROPIC_MESSAGES  # the API the arm's harness speaks (its harness declares it)
    arms: tuple[ArmKey, ...] = Field(min_length=1)
    policy: PolicyPin | None = None
    upstream: str | None = None  # base URL: https://api.anthropic.com, or https://openrouter.ai/api
    forward: ForwardTerms | None = None  # forward mode: key, auth, prices, provider error limit
    caps: PairCaps | None = None  # forward mode: the pair's caps, one for each arm served here

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        labels = [arm.label for arm in self.arms]
        keys = [arm.key_sha256 for arm in self.arms]
        if len(set(labels)) != len(labels) or len(set(keys)) != len(keys):
            raise ValueError(f"arm labels and key digests must be unique, got labels {labels}")
        if self.mode is Mode.POLICY:
            if self.policy is None:
                raise ValueError("mode 'policy' needs `policy` (path and sha256 of the policy file)")
            if self.caps is not None or self.forward is not None:
                raise ValueError(
                    "mode 'policy' spends nothing: drop `caps` and `forward`, which only forward mode uses"
                )
            return self
        parts = urlsplit(self.upstream or "")
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise ValueError(f"mode 'forward' needs `upstream` as an http(s) base URL, got {self.upstream!r}")
        if self.forward is None:
            raise ValueError("mode 'forward' needs `forward` (key_env, prices, upstream_auth) to reach and meter it")
        capped = set() if self.caps is None else {cap.arm for cap in self.caps.arms}
        uncapped = [label for label in labels if label not in capped]
        if uncapped:
            raise ValueError(
                f"mode 'forward' needs `caps` (the pair's PairCaps) with a cap for every arm; none for {uncapped}"
            )
        return self
