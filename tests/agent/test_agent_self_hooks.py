"""Hooks the agent writes itself are not the memory's channel: only the hooks the runner installed count.

In step one of a continuity challenge, the control arm's agent writes a hook into the workspace's project settings
and into its own user settings, each printing a memory phrase on every prompt. On the ``--resume`` step the real
CLI loads them and their output reaches the model in the harness's own format. The run is graded as the runner
grades a control arm (no hook installed): no delivery credit, whatever the hooks printed.
"""

from __future__ import annotations

import json

import pytest
from agent_scenario import MODEL, RECALL_PHRASE, Inputs, challenge, neutral_dir, workspace_tree

from bench.agent import ArmRun, arm_spec, run_arm
from bench.agent.attachment import control_attachment
from bench.agent.recorder import read_exchange_log
from bench.gateway import Mode
from bench.grading import (
    MemoryDeclaration,
    OutcomeGrade,
    grade,
    harness_conversation,
    hook_contexts,
)
from bench.harness.claude_code.session_log import parse_claude_session
from bench.sandbox.backends import SandboxBackend
from bench.sandbox.layout import USER_HOME, WORKSPACE

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

HOOKS = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"echo {RECALL_PHRASE}"}]}]}}
WRITE_BOTH = (
    f"mkdir -p {WORKSPACE}/.claude {USER_HOME}/.claude && "
    f"printf '%s' '{json.dumps(HOOKS)}' > {WORKSPACE}/.claude/settings.json && "
    f"printf '%s' '{json.dumps(HOOKS)}' > {USER_HOME}/.claude/settings.json"
)


def _bash_then_done(command: str) -> bytes:
    """A policy whose first turn runs ``command`` and whose every later turn ends."""
    return json.dumps({
        "rules": [{"name": "bash", "when": {"turn": 1}, "reply": [
            {"type": "tool_use", "name": "Bash", "input": {"command": command}}
        ]}],
        "default": [{"type": "text", "text": "done"}],
    }).encode()  # fmt: skip


def _arm_run(inputs: Inputs, backend: SandboxBackend, command: str, follow_up: bool) -> ArmRun:
    return ArmRun(
        backend, workspace_tree(inputs.store), challenge(follow_up=follow_up), MODEL, Mode.POLICY,
        policy=_bash_then_done(command),
    )  # fmt: skip


def test_hooks_the_agent_wrote_in_step_one_get_no_delivery_credit(
    inputs: Inputs, backend: SandboxBackend, agent_image: str
) -> None:
    store = inputs.store
    run = _arm_run(inputs, backend, WRITE_BOTH, follow_up=True)
    record = run_arm(run, "control", arm_spec(run, agent_image, None))
    assert record.session is not None and len(record.steps) == 2
    exchanges = read_exchange_log(store, record.exchanges)
    transcript = parse_claude_session(
        store.get_bytes(record.session), [store.get_bytes(s.stream) for s in record.steps]
    )
    runner = record.runner()
    fired = [c for c in hook_contexts(harness_conversation(exchanges, runner)) if RECALL_PHRASE in c.text]
    assert fired, "the agent's own hook did not fire on resume: the test no longer shows what it claims"
    unknown = MemoryDeclaration(phrases=(RECALL_PHRASE,))  # installed hooks unknown: every hook would count
    assert grade(transcript, exchanges, unknown, PASSED, runner).delivered.delivered
    control = unknown.model_copy(update={"hooks": ()})  # as the runner grades a control arm: none installed
    graded = grade(transcript, exchanges, control, PASSED, runner)
    assert not graded.delivered.delivered and graded.delivered.tampered == ()
    assert graded.delivered.received_by_model == (RECALL_PHRASE,)  # and the pair is excluded as contaminated
    assert graded.delivered.foreign_channels  # a hook no attachment installed reached the control's model


PASSED = OutcomeGrade(verifier_passed=True, audit_clean=True)


def test_the_control_arms_harness_settings_are_a_read_only_file_without_hooks(
    inputs: Inputs, backend: SandboxBackend, agent_image: str
) -> None:
    store = inputs.store
    write_user = (
        f"printf '%s' '{json.dumps(HOOKS)}' > {USER_HOME}/.claude/settings.json; cat {USER_HOME}/.claude/settings.json"
    )
    run = _arm_run(inputs, backend, write_user, follow_up=False)
    staging = neutral_dir()  # a mount's source is agent-visible: the test's own name would be refused
    record = run_arm(run, "control", arm_spec(run, agent_image, control_attachment(run.harness, staging)))
    assert record.session is not None
    transcript = parse_claude_session(
        store.get_bytes(record.session), [store.get_bytes(s.stream) for s in record.steps]
    )
    (result,) = [r.text for s in transcript.steps for r in s.tool_results]
    assert "Read-only file system" in result and '"hooks": {}' in result  # the write failed; still no hook
    assert json.loads((staging / "settings.json").read_text()) == {"hooks": {}}
