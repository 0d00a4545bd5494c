"""How an attempt goes wrong, recorded: a lost exchange, an agent past its deadline, a memory whose snapshot fails."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from agent_scenario import (
    MODEL,
    Inputs,
    attempt_params,
    challenge,
    provisioner_inputs,
    reference_system,
    workspace_tree,
    write_fixture,
)

from bench.agent import ArmRecord, ArmRun, PairRecord, arm_spec, run_arm
from bench.agent.arm_ending import Ending, arm_ending, not_completed
from bench.agent.recorder import StoreRecorder, read_exchange_log
from bench.agent.treatment_memory import live_memory, system_provisioner
from bench.analysis.admission import ReasonCode
from bench.analysis.attempt_record import ArmEnding, ArmResult, Outcome
from bench.analysis.prereg import Budget
from bench.builder import StageContext
from bench.builder.execution import execute
from bench.gateway import Mode
from bench.gateway.errors import GatewayError
from bench.gateway.exchange import ExchangeRecord
from bench.memory.provisioner import state_path
from bench.provision import PairVerdict, Verb, load_fixture
from bench.run.catalogue import services
from bench.sandbox.backends import ProcessOutcome, SandboxBackend
from bench.sandbox.layout import WORKSPACE
from bench.stages.paired_attempt import paired_attempt
from bench.store import Store, tree_from_directory, walk_tree

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


def _exchange(sequence: int) -> ExchangeRecord:
    return ExchangeRecord(
        sequence=sequence, arm="a", method="POST", path="/v1/messages", request_headers={}, request_body={},
        status=200, streamed=False, response_body={}, rule=None, usage=None, cost_usd=Decimal(0),
        started_at="2026-01-01T00:00:00.000+00:00", duration_ms=0,
    )  # fmt: skip


def test_the_exchange_log_is_in_sequence_order_and_refuses_a_gap(store: Store) -> None:
    recorder = StoreRecorder(store)
    for sequence in (1, 0):
        recorder.record(_exchange(sequence))
    assert [e.sequence for e in read_exchange_log(store, recorder.finish())] == [0, 1]
    recorder.record(_exchange(3))
    with pytest.raises(GatewayError, match=r"recorded exchanges \[0, 1, 3\]"):
        recorder.finish()


def test_an_agent_past_its_deadline_is_killed_and_recorded_timed_out(
    inputs: Inputs, backend: SandboxBackend, agent_image: str
) -> None:
    """The policy has the agent run a long command; the follow-up never runs; the workspace is still read back.

    The deadline leaves the CLI room to start and reach its tool call on a loaded machine (6 s did not, at load 13).
    """
    slow = {
        "rules": [{"name": "stall", "when": {"turn": 1}, "reply": [
            {"type": "tool_use", "name": "Bash", "input": {"command": f"touch {WORKSPACE}/began; sleep 600"}}
        ]}],
        "default": [{"type": "text", "text": "done"}],
    }  # fmt: skip
    store = inputs.store
    run = ArmRun(
        backend, workspace_tree(store), challenge(timeout=25), MODEL, Mode.POLICY, policy=json.dumps(slow).encode()
    )
    record = run_arm(run, "control", arm_spec(run, agent_image, None))
    assert record.outcome is ProcessOutcome.TIMED_OUT
    assert len(record.steps) == 1 and record.steps[0].timed_out and record.steps[0].exit_code is None
    assert record.session is not None  # the transcript so far is kept
    assert "began" in {str(path) for path, _ in walk_tree(store, record.final)}  # what it did before the kill


BUDGET = Budget(
    attempts=1, max_usd_cents_per_pair=0, max_usd_cents_per_arm=0, max_tokens_per_arm=2_000_000,
    max_wall_seconds_per_arm=120,
)  # fmt: skip


def test_a_harness_that_exits_non_zero_ends_the_arm_harness_failed_and_the_pair_is_not_completed(
    inputs: Inputs, backend: SandboxBackend, agent_image: str
) -> None:
    """The policy has the agent kill its own harness process: the step exits non-zero within its deadline."""
    killer = {
        "rules": [{"name": "kill", "when": {"turn": 1}, "reply": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "kill -KILL $PPID"}}
        ]}],
        "default": [{"type": "text", "text": "done"}],
    }  # fmt: skip
    record = _control_arm(inputs, backend, agent_image, killer, timeout=60)
    assert record.outcome is ProcessOutcome.FAILED and not record.steps[0].timed_out
    assert record.steps[0].exit_code not in (0, None)
    ended = arm_ending(record, BUDGET, tokens=0)
    assert ended.ending is ArmEnding.HARNESS_FAILED
    assert not_completed({"control": _result(ended), "treatment": _result(Ending(ArmEnding.FINISHED, ""))}) == (
        ReasonCode.HARNESS_FAILED,
        f"the control arm harness-failed: {ended.note}",
    )


def test_an_agent_past_its_deadline_gives_an_agent_timeout_not_an_apparatus_fault(
    inputs: Inputs, backend: SandboxBackend, agent_image: str
) -> None:
    endless = {"rules": [], "default": [{"type": "tool_use", "name": "Bash", "input": {"command": "sleep 1"}}]}
    record = _control_arm(inputs, backend, agent_image, endless, timeout=20)
    assert record.session is not None  # it started: the deadline, not the apparatus, ended it
    ended = arm_ending(record, BUDGET.model_copy(update={"max_wall_seconds_per_arm": 20}), tokens=0)
    assert ended.ending is ArmEnding.TIMED_OUT
    reason = not_completed({"control": _result(ended), "treatment": _result(Ending(ArmEnding.FINISHED, ""))})
    assert reason is not None and reason[0] is ReasonCode.AGENT_TIMEOUT
    crashed = arm_ending(record.model_copy(update={"session": None}), BUDGET, tokens=0)
    assert crashed.ending is ArmEnding.CRASHED
    reason = not_completed({"control": _result(crashed), "treatment": _result(Ending(ArmEnding.FINISHED, ""))})
    assert reason is not None and reason[0] is ReasonCode.APPARATUS_FAULT


def _control_arm(
    inputs: Inputs, backend: SandboxBackend, agent_image: str, policy: dict[str, object], timeout: int
) -> ArmRecord:
    run = ArmRun(
        backend, workspace_tree(inputs.store), challenge(timeout=timeout), MODEL, Mode.POLICY,
        policy=json.dumps(policy).encode(),
    )  # fmt: skip
    return run_arm(run, "control", arm_spec(run, agent_image, None))


def _result(ended: Ending) -> ArmResult:
    return ArmResult(
        outcome=Outcome.FAIL, ending=ended.ending, ending_note=ended.note, audit_clean=True, delivered=False,
        used=False, tokens=0, wall_seconds=0,
    )  # fmt: skip


def test_a_failed_snapshot_makes_the_pair_invalid_with_its_reason(
    inputs: Inputs, backend: SandboxBackend, agent_image: str, tmp_path: Path
) -> None:
    root = tmp_path / "fixture"
    write_fixture(root)
    manifest = json.loads((root / "fixture.json").read_text())
    manifest["probes"][0]["query"] = "zebra xylophone"  # retrieves nothing: the expected note is not among the hits
    (root / "fixture.json").write_text(json.dumps(manifest))
    store = inputs.store
    start = workspace_tree(store)
    stage_inputs = {
        "start": start,
        "challenge": store.put_document(challenge(follow_up=False)),
        "fixture": tree_from_directory(store, root),
        "policy": inputs.policy,
        **inputs.gates(backend, challenge(follow_up=False), start, agent_image),
    }
    params = attempt_params(agent_image)
    stage_inputs |= provisioner_inputs(store, params)
    outcome = execute(StageContext(store, services()), paired_attempt, stage_inputs, params)
    pair = store.get_document(outcome.outputs["pairs/reference"], PairRecord)
    assert pair.verdict is PairVerdict.PROBE_FAILED
    assert any("probe 'ledger' failed" in reason for reason in pair.reasons)
    assert len(pair.arms) == 2  # both arms ran and are recorded: an invalid pair is data, not a gap


def test_ctrl_c_while_the_memory_is_live_still_destroys_it(tmp_path: Path) -> None:
    root, home = tmp_path / "fixture", tmp_path / "home"
    write_fixture(root)
    provisioner = system_provisioner(reference_system(home), tmp_path, root)
    with pytest.raises(KeyboardInterrupt), live_memory(provisioner, load_fixture(root), "plain", "x.1") as memory:
        calls = memory.session.log
        assert state_path(home, memory.session.project).is_file()
        raise KeyboardInterrupt
    assert [call.verb for call in calls] == [Verb.RESTORE, Verb.DESTROY]
    assert not state_path(home, memory.session.project).exists()
