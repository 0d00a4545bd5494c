"""Per-arm hard caps: the contract the model gateway reads and enforces while an arm runs.

The fence checks the balance only before the pair and between its arms. Inside an arm the gateway is the only
thing that can stop spending, so each arm gets a hard cap in USD, and the pair cap the fence acknowledges is
their sum. The gateway refuses a request once an arm's metered cost has reached its cap. The gateway reads these
very documents (``GatewayConfig.caps``), so the caps the fence acknowledges are the caps the gateway enforces.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Self

from pydantic import Field, model_validator

from ..contracts import ContractModel
from ..errors import ContractError

__all__ = ["ArmCap", "PairCaps"]


class ArmCap(ContractModel):
    """The most one arm may spend, in USD, as metered by the gateway."""

    arm: str = Field(min_length=1)  # the gateway's arm label
    cap_usd: Decimal = Field(gt=0, allow_inf_nan=False)


class PairCaps(ContractModel):
    """The caps of a pair's arms, in the order the arms run."""

    arms: tuple[ArmCap, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_arms(self) -> Self:
        labels = [cap.arm for cap in self.arms]
        if len(set(labels)) != len(labels):
            raise ValueError(f"arm labels must be unique, got {labels}")
        return self

    @property
    def pair_cap_usd(self) -> Decimal:
        """What the fence's headroom check must see covered, on top of the production reserve."""
        return sum((cap.cap_usd for cap in self.arms), Decimal(0))

    def cap_of(self, arm: str) -> Decimal:
        for cap in self.arms:
            if cap.arm == arm:
                return cap.cap_usd
        raise ContractError(f"no cap for arm {arm!r}; the pair declares {[cap.arm for cap in self.arms]}")


PUBLIC_CONTRACTS = (ArmCap, PairCaps)
