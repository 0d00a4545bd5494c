"""One paired attempt: both arms from one start tree, differing only in the memory attachment.

Order of events, each recorded:

1. restore the fixture into the reference memory system (before any container, so both specs are known);
2. build both container specs and pass them through :func:`~bench.sandbox.spec.prepare_pair`: neutral, and
   different only in the attachment; the spec-diff receipt is stored;
3. record the money fence as not applicable (the gateway answers from a policy: nothing is spent);
4. run both arms, each with a gateway of its own, control first on odd attempts and treatment first on even;
5. snapshot the memory and store the receipt; an invalid verdict makes the pair invalid, with its reasons;
6. destroy the memory (in a ``finally``, whatever happened above).
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from pathlib import Path

from ..contracts import Digest
from ..errors import SandboxError
from ..fence import Fence
from ..provision.fixture import Fixture
from ..sandbox.backends import IDLE_COMMAND
from ..sandbox.spec import ContainerSpec, MemoryAttachment, container_spec, prepare_pair
from ..suite.challenge import NetworkMode
from .arm import ArmRun, run_arm
from .arm_record import Condition, PairRecord
from .claude import agent_env
from .memory import live_memory, memory_attachment, reference_provisioner

__all__ = ["FENCE_REASON", "arm_order", "arm_spec", "run_pair"]

FENCE_REASON = "the gateway answers from a policy; no paid provider is reached"


def arm_spec(run: ArmRun, image_id: str, attachment: MemoryAttachment | None) -> ContainerSpec:
    """The spec of either arm; the arms are given the same arguments except ``attachment``."""
    environment = run.challenge.environment
    if environment.network_mode is not NetworkMode.MODEL_ONLY:
        raise SandboxError(
            f"challenge {run.challenge.challenge_id} declares network mode {environment.network_mode.value}; an agent "
            "arm reaches its model only through the gateway, so set environment.network_mode to model-only"
        )
    return container_spec(image_id, environment, IDLE_COMMAND, env=agent_env(), attachment=attachment)


def arm_order(attempt: int) -> tuple[Condition, Condition]:
    """Odd attempts run the control arm first, even ones the treatment arm, so whatever drifts between the two
    runs of a pair (a warm cache, a provider's load, a balance) does not always favour the same condition."""
    first, second = Condition.CONTROL, Condition.TREATMENT
    return (first, second) if attempt % 2 else (second, first)


def _private_dir(prefix: str) -> Path:
    """A new directory under the system temp directory. Its path shows in the container's mount table, so the name
    is hex: mkdtemp's random letters could spell a word the neutrality check refuses."""
    path = Path(tempfile.gettempdir()) / f"{prefix}{secrets.token_hex(8)}"
    path.mkdir(mode=0o700)
    return path


def run_pair(
    run: ArmRun, image_id: str, fixture_root: Path, fixture: Fixture, graph_arm: str, attempt: int
) -> tuple[PairRecord, dict[str, Digest]]:
    """Run the pair; returns its record and every document written, by output name."""
    store, challenge_id = run.store, run.challenge.challenge_id
    identity = f"{challenge_id}.{attempt}"
    home, staging = _private_dir("m-"), _private_dir("h-")
    try:
        provisioner = reference_provisioner(home, fixture_root)
        with live_memory(provisioner, fixture, graph_arm, identity) as memory:
            control = arm_spec(run, image_id, None)
            treatment = arm_spec(run, image_id, memory_attachment(home, memory.session, staging))
            outputs: dict[str, Digest] = {
                "spec_diff": store.put_document(prepare_pair(control, treatment, ("control", "treatment")))
            }
            outputs["fence"] = Fence(store, identity, None).not_applicable(FENCE_REASON)
            specs = {Condition.CONTROL: control, Condition.TREATMENT: treatment}
            records = {condition: run_arm(run, condition, specs[condition]) for condition in arm_order(attempt)}
            receipt = memory.snapshot()
        outputs["snapshot"] = store.put_document(receipt)
        outputs["control"] = store.put_document(records[Condition.CONTROL])
        treated = records[Condition.TREATMENT].model_copy(update={"snapshot": outputs["snapshot"]})
        outputs["treatment"] = store.put_document(treated)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(staging, ignore_errors=True)
    record = PairRecord(
        challenge_id=challenge_id,
        attempt=attempt,
        model=run.model,
        image_id=image_id,
        start=run.start,
        spec_diff=outputs["spec_diff"],
        fence=outputs["fence"],
        arms=tuple(outputs[condition.value] for condition in arm_order(attempt)),
        verdict=receipt.verdict,
        reasons=receipt.assessment.reasons,
    )
    outputs["pair"] = store.put_document(record)
    return record, outputs
