"""Tamper findings: where the evidence of an arm is not what the runner and the harness made, and at which message.

Two sources. The gateway's log alone shows a conversation that is not the harness's doing with the runner's prompts
(:mod:`.chain`): a request nobody in the arm's harness made, a user turn the runner did not send, a request while no
step ran, history repeated otherwise than it was carried, a request continuing one point of the conversation twice.
The session file, set against the conversation (:mod:`.tamper`), shows records added to it or taken from it.
Each finding names the exchange and the message's index in the conversation where it has them; none names intent.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from ..contracts import ContractModel

__all__ = ["TamperFinding", "TamperKind"]


class TamperKind(StrEnum):
    FOREIGN_REQUEST = "foreign-request"  # a messages request that is no part of the harness's conversation
    UNSENT_TURN = "unsent-turn"  # a user turn the runner did not send continues the conversation
    OUTSIDE_STEPS = "outside-steps"  # a request that arrived while no step of the arm ran (after its end, between)
    REWRITTEN = "rewritten-history"  # a request repeats an earlier message otherwise than it was carried
    FORK = "fork"  # a request continues an earlier point of the conversation a second time
    SESSION_ADDED = "session-added"  # the session file records what the model was never sent
    SESSION_MISSING = "session-missing"  # the model was sent what the session file does not record


class TamperFinding(ContractModel):
    kind: TamperKind
    exchange: int | None = Field(default=None, ge=0)  # the gateway exchange's sequence number
    message: int | None = Field(default=None, ge=0)  # the message's index in the conversation (or the request)
    step: int | None = Field(default=None, ge=0)  # the session file's step (normalised transcript), when it has one
    detail: Annotated[str, Field(max_length=400)]

    def __str__(self) -> str:
        where = [
            f"{name} {value}"
            for name, value in (("exchange", self.exchange), ("message", self.message), ("step", self.step))
            if value is not None
        ]
        return f"{self.kind.value} ({', '.join(where) or 'the whole log'}): {self.detail}"
