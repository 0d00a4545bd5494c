"""A provider failure is the provider's (issue 32): through the store engine, the ``paired-attempt`` stage whose
provider failed every request is recorded for the run that made it (its pairs graded and excluded
``provider-failed``) and executed again by the next run; once a good provider has answered, it is never run again.
"""

from __future__ import annotations

import pytest
from agent_scenario import (
    CHALLENGE_ID,
    MODEL,
    Inputs,
    grade_arm_stages,
    neutral_dir,
    provisioner_inputs,
    reference_system,
)
from docker import DockerClient
from forward_scenario import Provider, settings

from bench.agent import ArmRecord
from bench.agent.arm_ending import not_completed
from bench.analysis.admission import ReasonCode
from bench.analysis.attempt_record import ArmEnding
from bench.analysis.prereg import Budget
from bench.builder import StageContext
from bench.builder.execution import execute
from bench.fence import stopped_accounts
from bench.gateway import ArmStop, Mode
from bench.run.catalogue import services
from bench.sandbox.backends.docker import DockerBackend
from bench.stages.grade import arm_result
from bench.stages.paired_attempt import PairedAttemptParams, paired_attempt
from bench.store.actions import ActionResult
from bench.suite.memory_system import CONTROL
from tests.gateway.loopback import Fault

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

BUDGET = Budget(
    attempts=1, max_usd_cents_per_pair=1000, max_usd_cents_per_arm=500, max_tokens_per_arm=2_000_000,
    max_wall_seconds_per_arm=240,
)  # fmt: skip


def test_a_rerun_with_a_good_provider_runs_the_attempt_its_provider_failed(
    provider: Provider, inputs: Inputs, engine: DockerClient, agent_image: str
) -> None:
    store = inputs.store
    stage_inputs = inputs.stage_inputs(DockerBackend(store, engine), agent_image, policy=False)
    start = stage_inputs["start"]
    params = PairedAttemptParams(
        challenge_id=CHALLENGE_ID, attempt=1, model=MODEL, image_id=agent_image, suite_dir=".", graph_arm="plain",
        systems=(reference_system(neutral_dir()),), gateway_mode=Mode.FORWARD, forward=settings(),
    )  # fmt: skip
    stage_inputs |= provisioner_inputs(store, params)

    def run() -> tuple[bool, dict[str, str], ActionResult]:
        done = execute(StageContext(store, services()), paired_attempt, stage_inputs, params)
        return done.executed, done.outputs, store.get_document(done.result, ActionResult)

    provider.double.faults = [Fault.SERVER_ERROR] * 50
    executed, failed, result = run()
    assert executed and result.retry is not None and "the provider failed the control arm" in result.retry
    arms = {CONTROL: failed["control"], "reference": failed["treatments/reference"]}
    records = {name: store.get_document(arm, ArmRecord) for name, arm in arms.items()}
    assert records[CONTROL].stop is ArmStop.PROVIDER_FAILED and not records["reference"].started
    graded = {name: grade_arm_stages(inputs, agent_image, start, arm) for name, arm in arms.items()}
    results = {name: arm_result(store, g.grade, BUDGET) for name, g in graded.items()}
    assert {r.ending for r in results.values()} == {ArmEnding.PROVIDER_FAILED}
    assert not any(r.delivered for r in results.values())  # nothing reached a model, so nothing was delivered
    excluded = not_completed({"control": results[CONTROL], "treatment": results["reference"]})
    assert excluded is not None and excluded[0] is ReasonCode.PROVIDER_FAILED
    assert provider.requests() == 3

    provider.double.faults = []  # the provider recovered: the next run retries the attempt
    executed, answered, result = run()
    assert executed and result.retry is None and answered != failed
    control = store.get_document(answered["control"], ArmRecord)
    treatment = store.get_document(answered["treatments/reference"], ArmRecord)
    assert control.stop is None and treatment.started and control.steps and treatment.steps

    executed, cached, _ = run()  # a completed paid attempt is never run again
    assert not executed and cached == answered
    assert stopped_accounts(store) == {}  # a provider's failure is no fence stop: the account is not latched
