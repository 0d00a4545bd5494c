"""A stage's retry judge: a result its stage judged not to keep stands for the run that made it, the next run
executes the action again, and the first result kept is a cache hit for good (the engine's one decision)."""

from __future__ import annotations

from pydantic import Field

from bench.builder import NoInputs, Ports, StageContext, StageKind, stage
from bench.builder.execution import cached_result, execute
from bench.contracts import BlobDigest, ContractModel
from bench.store import Store
from bench.store.actions import ActionResult, results_for

ANSWERS: list[bytes] = []  # what the observed "provider" answers, one per execution


class ProbeParams(ContractModel):
    attempt: int = Field(ge=1)


class ProbeOutputs(Ports):
    answer: BlobDigest


def _failed(store: Store, outputs: ProbeOutputs) -> str | None:
    return "the provider failed" if store.get_bytes(outputs.answer) == b"failed" else None


@stage("probe", version=1, kind=StageKind.OBSERVED, retry=_failed)
def probe(context: StageContext, inputs: NoInputs, params: ProbeParams) -> ProbeOutputs:
    return ProbeOutputs(answer=context.store.put_bytes(ANSWERS.pop(0)))


def test_a_result_judged_for_retry_is_used_once_then_run_again_until_one_is_kept(store: Store) -> None:
    context = StageContext(store)
    ANSWERS[:] = [b"failed", b"failed", b"answered", b"never asked"]
    first = execute(context, probe, {}, ProbeParams(attempt=1))
    assert first.executed and store.get_bytes(first.outputs["answer"]) == b"failed"
    assert store.get_document(first.result, ActionResult).retry == "the provider failed"
    assert cached_result(store, first.key) is None  # recorded, and no hit
    second = execute(context, probe, {}, ProbeParams(attempt=1))
    assert second.executed and second.key == first.key and second.result != first.result
    third = execute(context, probe, {}, ProbeParams(attempt=1))
    assert third.executed and store.get_bytes(third.outputs["answer"]) == b"answered"
    assert store.get_document(third.result, ActionResult).retry is None
    fourth = execute(context, probe, {}, ProbeParams(attempt=1))
    assert not fourth.executed and fourth.outputs == third.outputs and ANSWERS == [b"never asked"]
    assert results_for(store, first.key) == [third.result]  # one result per key: each retry replaced the last
