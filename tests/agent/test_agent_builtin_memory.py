"""The CLI's built-in auto memory is a condition, never an accident: off in every arm through the CLI's managed
settings, on only in the arm of a memory system that declares it. Only the gateway log shows it for certain: a
request carries the "# auto memory" section exactly when the CLI's own memory is active."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_scenario import MODEL, Inputs, challenge, workspace_tree

from bench.agent import ArmRecord, ArmRun, arm_spec, read_exchange_log, run_arm
from bench.agent.attachment import treatment_attachment
from bench.gateway import Mode
from bench.gateway.dialects.anthropic import request_view
from bench.gateway.neutral import Part
from bench.harness import harness_named
from bench.harness.claude_code.cli import MANAGED_SETTINGS_PATH
from bench.provision.messages import RestoreResponse
from bench.sandbox.backends import SandboxBackend
from bench.sandbox.spec import MemoryAttachment, prepare_pair
from bench.suite.memory_system import Attachment, MemorySystem

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

SECTION = "# auto memory"
BUILTIN = MemorySystem(
    name="builtin", version="1", provisioner=("true",), attachment=Attachment(settings={"autoMemoryEnabled": True})
)


def _system_texts(record: ArmRecord, inputs: Inputs) -> list[str]:
    exchanges = read_exchange_log(inputs.store, record.exchanges)
    assert exchanges, "the arm made no request"
    return [text for e in exchanges for text in request_view(e.request_body).texts(Part.SYSTEM)]  # type: ignore[arg-type]


def _run(inputs: Inputs, backend: SandboxBackend) -> ArmRun:
    start, policy = workspace_tree(inputs.store), inputs.store.get_bytes(inputs.policy)
    return ArmRun(backend, start, challenge(follow_up=False), MODEL, Mode.POLICY, policy=policy)


def _arm(inputs: Inputs, backend: SandboxBackend, image: str, attachment: MemoryAttachment | None) -> ArmRecord:
    run = _run(inputs, backend)
    return run_arm(run, "control" if attachment is None else "builtin", arm_spec(run, image, attachment))


@pytest.fixture(scope="module")
def builtin(tmp_path_factory: pytest.TempPathFactory) -> MemoryAttachment:
    restored = RestoreResponse(project="p", queue_before_count=0, restore_seconds=0.0)
    return treatment_attachment(
        harness_named("claude-code"), BUILTIN, restored, tmp_path_factory.mktemp("staging"), None
    )


def test_no_request_of_an_arm_carries_the_auto_memory_section(
    inputs: Inputs, backend: SandboxBackend, agent_image: str
) -> None:
    texts = _system_texts(_arm(inputs, backend, agent_image, None), inputs)
    assert texts and not any(SECTION in text for text in texts)


def test_a_system_declaring_the_builtin_memory_has_it_in_its_own_arm_only(
    inputs: Inputs, backend: SandboxBackend, agent_image: str, builtin: MemoryAttachment
) -> None:
    (mount,) = [m for m in builtin.mounts if m.target == str(MANAGED_SETTINGS_PATH)]
    assert mount.target == str(MANAGED_SETTINGS_PATH) and Path(mount.bound).read_text() == (
        '{"autoMemoryEnabled": true}\n'
    )
    texts = _system_texts(_arm(inputs, backend, agent_image, builtin), inputs)
    assert any(SECTION in text for text in texts)
    # The pair differs only in the attachment, whose settings replace the ones that turn the memory off.
    run = _run(inputs, backend)
    control, treatment = arm_spec(run, agent_image, None), arm_spec(run, agent_image, builtin)
    receipt = prepare_pair(control, treatment, ("control", "builtin"))
    assert receipt.only_attachment
    targets = [m.target for m in treatment.effective_mounts()]
    assert targets.count(str(MANAGED_SETTINGS_PATH)) == 1
