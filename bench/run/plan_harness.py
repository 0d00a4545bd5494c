"""What the plan checks of the harness a suite runs under, before anything is built or run.

A suite runs under its own ``harness`` or the one ``run --harness`` names. Refused here, each naming what to change:
a harness the suite declares no model for (its ``models``); a selected memory system whose attachment needs a
channel the harness lacks, or declares ``settings`` in another harness's format; a challenge whose policy makes a
tool call the harness's client cannot run (Codex carries an ``Edit`` as a patch of whole lines), naming the rule.
"""

from __future__ import annotations

from ..agent.sealed_env import needed_channels
from ..contracts.files import parse_contract
from ..errors import ContractError
from ..gateway import Mode
from ..gateway.policy import Policy, ToolUseReply
from ..harness import Harness, harness_named, require_channels, require_native_settings
from ..sandbox.layout import WORKSPACE
from ..suite.suite import Suite

__all__ = ["suite_harness"]


def suite_harness(opened: Suite, selected: tuple[str, ...], name: str | None = None) -> Harness:
    """The harness ``opened`` runs under (``name``, or the suite's own), once every check above has passed."""
    harness = harness_named(name or opened.manifest.harness)
    opened.manifest.model_for(harness.name)
    for system in opened.manifest.memory_systems:
        if not selected or system.name in selected:
            who = f"memory system {system.name!r}"
            require_native_settings(harness, system.attachment.settings is not None, who)
            require_channels(harness, needed_channels(harness, system.attachment), who)
    if opened.manifest.gateway_mode is Mode.POLICY:
        _require_renderable(opened, harness)
    return harness


def _require_renderable(opened: Suite, harness: Harness) -> None:
    """Every policy rule's tool calls, as ``harness``'s client would have to run them."""
    for loaded in opened.challenges:
        challenge = loaded.manifest.challenge_id
        policy = parse_contract(opened.policy(challenge, WORKSPACE), Policy, f"the policy of {challenge!r}")
        answers = [(rule.name, rule.reply) for rule in policy.rules] + [("default", policy.default)]
        for rule, replies in answers:
            calls = [(reply.name, reply.input) for reply in replies if isinstance(reply, ToolUseReply)]
            try:
                harness.require_renderable(calls)
            except ContractError as refused:
                raise ContractError(
                    f"challenge {challenge!r}, policy rule {rule!r}: harness {harness.name!r} cannot run it: "
                    f"{refused.message}",
                    field="policy",
                    hint="rewrite the rule's tool call in a form every harness the suite runs under can carry",
                ) from refused
