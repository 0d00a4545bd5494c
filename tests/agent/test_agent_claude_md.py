"""The seed's first failure, reproduced in a container: a workspace CLAUDE.md reaches the model unasked, which only
the gateway log shows for certain; after redaction (bench.packaging.redact) it does not."""

from __future__ import annotations

import pytest
from agent_scenario import MODEL, Inputs, challenge, workspace_tree

from bench.agent import ArmRecord, ArmRun, arm_spec, read_exchange_log, run_arm
from bench.contracts import Digest
from bench.gateway import Mode
from bench.gateway.dialects.anthropic import request_view
from bench.gateway.neutral import Part
from bench.grading import harness_conversation, received_texts
from bench.packaging.redact import redact_tree
from bench.sandbox.backends import SandboxBackend

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

PHRASE = "orchid rotation protocol"


def _arm(inputs: Inputs, backend: SandboxBackend, agent_image: str, start: Digest) -> ArmRecord:
    policy = inputs.store.get_bytes(inputs.policy)
    run = ArmRun(backend, start, challenge(follow_up=False), MODEL, Mode.POLICY, policy=policy)
    return run_arm(run, "control", arm_spec(run, agent_image, None))


@pytest.fixture(scope="module")
def unredacted(inputs: Inputs) -> Digest:
    return workspace_tree(inputs.store, {"CLAUDE.md": f"# Project notes\nAlways follow the {PHRASE}.\n"})


def test_an_unredacted_claude_md_reaches_the_model(
    inputs: Inputs, backend: SandboxBackend, agent_image: str, unredacted: Digest
) -> None:
    record = _arm(inputs, backend, agent_image, unredacted)
    exchanges = read_exchange_log(inputs.store, record.exchanges)
    assert any(PHRASE in text for text in received_texts(harness_conversation(exchanges, record.runner())))
    first_user = request_view(exchanges[0].request_body).texts(Part.USER)  # type: ignore[arg-type]
    assert any("CLAUDE.md" in text and PHRASE in text for text in first_user)


def test_after_redaction_it_does_not(
    inputs: Inputs, backend: SandboxBackend, agent_image: str, unredacted: Digest
) -> None:
    receipt = redact_tree(inputs.store, unredacted)
    assert [entry.path for entry in receipt.removed] == ["CLAUDE.md"]
    record = _arm(inputs, backend, agent_image, receipt.redacted)
    exchanges = read_exchange_log(inputs.store, record.exchanges)
    conversation = harness_conversation(exchanges, record.runner())
    assert exchanges and conversation.members and not any(PHRASE in text for text in received_texts(conversation))
