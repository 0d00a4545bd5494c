"""A real paired attempt through the store engine: the Claude Code CLI in both arm containers, the gateway in
policy mode, the reference memory system (declared as a suite declares it) in the treatment arm; then the audit, the
verifier and the grade stage.

One pair runs per module (about ten seconds); every test reads its records. The verifier runs through the sandbox's
``verify`` stage on each arm's final tree, the audit through its ``audit`` stage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from agent_scenario import (
    ANCHOR_PHRASE,
    FOLLOW_UP,
    RECALL_PHRASE,
    Graded,
    Inputs,
    attempt_params,
    grade_arm_stages,
    provisioner_inputs,
)
from docker import DockerClient

from bench.agent import PairRecord, PromptKind, read_exchange_log
from bench.analysis.attempt_record import ArmEnding, Outcome
from bench.analysis.prereg import Budget
from bench.builder import StageContext
from bench.builder.execution import ActionOutcome, execute
from bench.contracts import Digest
from bench.fence.fence_record import FenceOutcome, FenceRecord
from bench.gateway.dialects.anthropic import request_view
from bench.gateway.neutral import Part
from bench.grading import Channel, StepSource
from bench.provision import PairVerdict, SnapshotReceipt
from bench.run.catalogue import services
from bench.sandbox import ProcessOutcome, SpecDiffReceipt
from bench.sandbox.backends.docker import DockerBackend
from bench.stages.grade import arm_result
from bench.stages.paired_attempt import PairedAttemptParams, paired_attempt
from bench.store import Store
from bench.suite.memory_system import CONTROL

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

TREATMENT = "reference"
CONDITIONS = (CONTROL, TREATMENT)


@dataclass(frozen=True)
class Pair:
    store: Store
    outcome: ActionOutcome
    params: PairedAttemptParams
    stage_inputs: dict[str, Digest]
    arms: dict[str, Graded]

    @property
    def record(self) -> PairRecord:
        return self.store.get_document(self.outcome.outputs[f"pairs/{TREATMENT}"], PairRecord)


@pytest.fixture(scope="module")
def pair(inputs: Inputs, engine: DockerClient, agent_image: str) -> Pair:
    store = inputs.store
    stage_inputs = inputs.stage_inputs(DockerBackend(store, engine), agent_image)
    start = stage_inputs["start"]
    params = attempt_params(agent_image)
    stage_inputs |= provisioner_inputs(store, params)
    outcome = execute(StageContext(store, services()), paired_attempt, stage_inputs, params)
    arm_of = {CONTROL: outcome.outputs["control"], TREATMENT: outcome.outputs[f"treatments/{TREATMENT}"]}
    arms = {condition: grade_arm_stages(inputs, agent_image, start, arm_of[condition]) for condition in CONDITIONS}
    return Pair(store, outcome, params, stage_inputs, arms)


def test_the_pair_is_valid_and_its_specs_differ_only_in_the_attachment(pair: Pair) -> None:
    record = pair.record
    assert record.verdict is PairVerdict.VALID and record.reasons == ()
    diff = pair.store.get_document(record.spec_diff, SpecDiffReceipt)
    assert diff.only_attachment and diff.differences
    assert {d.field.split(".")[0] for d in diff.differences} == {"attachment"}
    fence = pair.store.get_document(record.fence, FenceRecord)
    assert fence.outcome is FenceOutcome.NOT_APPLICABLE


def test_the_snapshot_receipt_belongs_to_the_treatment_arm_only(pair: Pair) -> None:
    treatment, control = pair.arms[TREATMENT].record, pair.arms[CONTROL].record
    assert control.snapshot is None and treatment.snapshot == pair.outcome.outputs[f"snapshots/{TREATMENT}"]
    receipt = pair.store.get_document(treatment.snapshot, SnapshotReceipt)
    assert receipt.verdict is PairVerdict.VALID


def test_treatment_delivers_through_both_channels_and_the_gateway_agrees(pair: Pair) -> None:
    delivered = pair.arms[TREATMENT].grade.grade.delivered
    assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).phrases == (RECALL_PHRASE,)
    assert delivered.channel(Channel.ANCHOR_TRIGGERED_RECALL).phrases == (ANCHOR_PHRASE,)
    assert delivered.gateway_agrees
    assert set(delivered.received_by_model) == {RECALL_PHRASE, ANCHOR_PHRASE}


def test_the_control_shows_no_delivery_though_its_agent_echoes_a_phrase(pair: Pair) -> None:
    control = pair.arms[CONTROL]
    assert any(RECALL_PHRASE in step.text for step in control.transcript.by_source(StepSource.AGENT))
    delivered = control.grade.grade.delivered
    assert not delivered.delivered and delivered.received_by_model == () and delivered.gateway_agrees


def test_the_policy_followed_the_anchor_only_where_the_recall_reached_the_model(pair: Pair) -> None:
    rules = {
        condition: [e.rule for e in read_exchange_log(pair.store, graded.record.exchanges)]
        for condition, graded in pair.arms.items()
    }
    assert "follow-anchor" in rules[TREATMENT] and "follow-anchor" not in rules[CONTROL]


@pytest.mark.parametrize("condition", CONDITIONS)
def test_the_follow_up_resumes_the_same_session_and_only_the_final_step_is_scored(pair: Pair, condition: str) -> None:
    graded = pair.arms[condition]
    first, second = graded.record.steps
    assert (first.prompt, second.prompt) == (PromptKind.INITIAL, PromptKind.FOLLOW_UP)
    assert first.session_id is not None and second.resumed == first.session_id == second.session_id
    assert graded.transcript.session_id == first.session_id
    assert len(graded.transcript.by_source(StepSource.USER)) == 2
    assert (graded.grade.scored_step, graded.grade.scored_prompt) == (1, PromptKind.FOLLOW_UP)
    assert graded.record.outcome is ProcessOutcome.SUCCEEDED
    assert graded.grade.grade.outcome.verifier_passed and graded.grade.grade.outcome.audit_clean


@pytest.mark.parametrize("condition", CONDITIONS)
def test_the_follow_up_reached_the_model_only_in_the_second_step(pair: Pair, condition: str) -> None:
    record = pair.arms[condition].record
    assert FOLLOW_UP not in json.dumps(record.spec.model_dump(mode="json"))
    views = [request_view(e.request_body) for e in read_exchange_log(pair.store, record.exchanges)]  # type: ignore[arg-type]
    showing = [any(FOLLOW_UP in text for text in view.texts(Part.ANY)) for view in views]
    first = showing.index(True)
    assert not any(showing[:first]) and all(showing[first:])
    assert any(FOLLOW_UP in text for text in views[first].texts(Part.LATEST))


def test_a_rerun_of_the_recorded_attempt_runs_nothing(pair: Pair) -> None:
    again = execute(StageContext(pair.store, services()), paired_attempt, pair.stage_inputs, pair.params)
    assert not again.executed and again.outputs == pair.outcome.outputs


def test_the_analysis_sees_delivery_in_the_treatment_only_and_both_outcomes(pair: Pair) -> None:
    budget = Budget(
        attempts=1, max_usd_cents_per_pair=0, max_usd_cents_per_arm=0, max_tokens_per_arm=2_000_000,
        max_wall_seconds_per_arm=240,
    )  # fmt: skip
    results = {condition: arm_result(pair.store, graded.grade, budget) for condition, graded in pair.arms.items()}
    assert results[TREATMENT].delivered and not results[CONTROL].delivered
    assert all(r.ending is ArmEnding.FINISHED and r.tampered == () and r.audit_clean for r in results.values())
    assert {r.outcome for r in results.values()} == {Outcome.PASS}
    assert all(r.tokens > 0 and r.wall_seconds > 0 for r in results.values())
