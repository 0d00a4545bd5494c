"""How a suite reaches a paid model in forward mode: where, with which key, at what price, within which caps.

Nothing secret is written here. The provider's base URL and its key come from the environment, named by variable
(``upstream_env``, ``key_env``); the key is read by the gateway and the fence only, fingerprinted, never stored or
published. Prices are USD per million tokens per model and every cap is an exact decimal.

The money fence needs the provider's quota API (OpenRouter-shaped: ``/api/v1/key`` and ``/api/v1/credits``),
named by ``fence.quota_url_env``. A provider without one (Anthropic's API has no balance endpoint) can only be
used by saying so: ``unfenced`` gives the reason, every pair's fence record says it, and the per-arm caps the
gateway enforces are then the only bound.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Self

from pydantic import Field, StringConstraints, model_validator

from ..contracts import EnvName
from ..fence import FenceConfig, FenceTerms
from ..gateway import ForwardTerms

__all__ = ["FenceDeclaration", "ForwardSettings"]

Usd = Annotated[Decimal, Field(gt=0, allow_inf_nan=False)]


class FenceDeclaration(FenceTerms):
    """The fence's terms as a suite declares them: the quota API named by its variable, never its URL."""

    quota_url_env: EnvName  # the variable holding the quota API's base URL, e.g. https://openrouter.ai

    def config(self, base_url: str, key_env: str) -> FenceConfig:
        """The fence config these terms make once the quota API's URL has been read from the environment."""
        terms = {name: getattr(self, name) for name in FenceTerms.model_fields}
        return FenceConfig(base_url=base_url, key_env=key_env, **terms)


class ForwardSettings(ForwardTerms):
    """The gateway's forward terms (key_env, upstream_auth, prices, provider_error_limit) as a suite declares them,
    beside the variable naming the provider's URL, the caps and the fence."""

    upstream_env: EnvName  # the variable holding the provider's Messages API base URL
    arm_cap_usd: Usd  # the gateway forwards a request only if the arm's spending plus its worst case fits this
    pair_cap_usd: Usd  # control plus one treatment; an arm's cap shrinks by what its pairs already spent
    fence: FenceDeclaration | None = None
    unfenced: Annotated[str, StringConstraints(min_length=10, max_length=500)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.fence is None) == (self.unfenced is None):
            raise ValueError(
                "declare exactly one of `fence` (the provider's quota API) or `unfenced` (why this provider has "
                "none; the per-arm caps are then the only bound)"
            )
        if self.arm_cap_usd > self.pair_cap_usd:
            raise ValueError(f"arm_cap_usd {self.arm_cap_usd} exceeds pair_cap_usd {self.pair_cap_usd}")
        return self

    def terms(self) -> ForwardTerms:
        """The forward terms alone, as a gateway's config carries them."""
        return ForwardTerms(**{name: getattr(self, name) for name in ForwardTerms.model_fields})

    def attempt_bound_usd(self, treatments: int) -> Decimal:
        """The most an attempt of the control and ``treatments`` treatment arms can spend, whatever their order.

        The gateway never lets an arm pass its cap, and each arm's cap is lowered so that the control and any one
        treatment stay within the pair cap (``bench.agent.attempt.arm_caps``). So the control spends some c up to
        the arm cap and each treatment up to min(arm cap, pair cap - c): at most every treatment at the arm cap
        and the control at what the pair cap leaves beside one of them."""
        return treatments * self.arm_cap_usd + min(self.arm_cap_usd, self.pair_cap_usd - self.arm_cap_usd)
