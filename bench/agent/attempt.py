"""One attempt: a control arm shared by every declared memory system, and one treatment arm per system.

A paid model makes a control per system a waste, so each system's pair is the attempt's one control arm and that
system's treatment arm. Order of events, each recorded:

1. the money fence: in forward mode its preflight (key identity, per-key budget, shared headroom for every arm of
   the attempt at its cap) before anything else, so a stopped attempt starts no container; in policy mode the
   fence is recorded as not applicable;
2. every system's memory is restored through its own provisioner (before any container, so every spec is known);
3. every arm's spec is built; each treatment passes with the control through
   :func:`~bench.sandbox.spec.prepare_pair` (neutral, different only in the attachment, an image layer included)
   and each pair's spec-diff receipt is stored;
4. the arms run in the attempt's order, which rotates across attempts so no condition always runs first; in
   forward mode each arm's cap is the per-arm cap, lowered so no pair can pass the per-pair cap, and the fence
   observes the drain between consecutive arms (a stop there starts no further arm);
5. each system's snapshot re-reads what the system holds after the run; its verdict is its pair's verdict;
6. each system whose restore declared deterministic retrieval re-derives what its hooks injected in its treatment
   arm (:mod:`.rederive_injected`); a difference is a finding on its pair; and is asked what it retrieves for the
   challenge's own prompt, the documents it names kept beside the challenge's oracle (:mod:`.retrieval_score`);
7. every system's memory is destroyed, on every way out.

Every system's restore is handed the same evidence corpus: the fixture's own, or, when the attempt runs with a
distractor pool, the evidence with the pool beside it (:func:`~bench.provision.pool.seed_corpus`).
"""

from __future__ import annotations

import logging
import secrets
import shutil
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from ..contracts import Digest
from ..errors import FenceError, SandboxError
from ..fence import Fence, FenceConfig
from ..grading.memory import installed_hooks
from ..provision.fixture import Fixture
from ..provision.messages import ArtifactRef
from ..provision.receipt import SnapshotReceipt
from ..sandbox.backends import IDLE_COMMAND
from ..sandbox.spec import ContainerSpec, MemoryAttachment, container_spec, prepare_pair
from ..suite.challenge import NetworkMode
from ..suite.forward import ForwardSettings
from ..suite.memory_system import CONTROL, MemorySystem
from .arm import ArmRun, environment_value, run_arm
from .arm_record import ArmRecord, PairRecord
from .attachment import control_attachment, treatment_attachment
from .claude import agent_env, managed_settings_mount
from .memory import LiveMemory, live_memory, system_provisioner
from .recorder import read_exchange_log
from .rederive_injected import rederive_injected
from .retrieval_score import score_retrieval

__all__ = ["FENCE_REASON", "AttemptOutcome", "AttemptSetup", "arm_caps", "arm_order", "arm_spec", "run_attempt"]

FENCE_REASON = "the gateway answers from a policy; no paid provider is reached"
# What runs inside an attempt, as the progress lines of a run show it (bench.pipeline.progress); host side only.
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AttemptSetup:
    """What an attempt needs besides the arms' shared run: where the suite is, its systems and their images."""

    suite_root: Path
    fixture_root: Path
    fixture: Fixture
    graph_arm: str
    image_id: str  # the agent image: the control's, and every system's without a layer
    systems: tuple[MemorySystem, ...]
    layers: Mapping[str, str] = field(default_factory=dict)  # system name -> its layer image ID
    corpus: ArtifactRef | None = None  # the evidence with its distractor pool; None: the fixture's evidence alone
    oracle: tuple[str, ...] = ()  # the challenge's oracle documents, which retrieval is scored against


@dataclass
class AttemptOutcome:
    """Everything the attempt wrote, by what it is."""

    fence: Digest
    control: Digest
    treatments: dict[str, Digest]
    snapshots: dict[str, Digest]
    spec_diffs: dict[str, Digest]
    pairs: dict[str, Digest]
    finals: dict[str, Digest]  # condition -> the arm's final tree
    rederivations: dict[str, Digest] = field(default_factory=dict)  # systems declaring deterministic retrieval
    retrievals: dict[str, Digest] = field(default_factory=dict)  # the same systems: what the prompt retrieves


def arm_spec(run: ArmRun, image_id: str, attachment: MemoryAttachment | None) -> ContainerSpec:
    """The spec of any arm; the arms are given the same arguments except ``attachment``."""
    environment = run.challenge.environment
    if environment.network_mode is not NetworkMode.MODEL_ONLY:
        raise SandboxError(
            f"challenge {run.challenge.challenge_id} declares network mode {environment.network_mode.value}; an agent "
            "arm reaches its model only through the gateway, so set environment.network_mode to model-only"
        )
    mounts = (managed_settings_mount(),)
    return container_spec(image_id, environment, IDLE_COMMAND, env=agent_env(), mounts=mounts, attachment=attachment)


def arm_order(attempt: int, systems: tuple[str, ...]) -> tuple[str, ...]:
    """The control and every system, rotated by the attempt number: attempt 1 starts with the control, attempt 2
    with the first system, and so on, so whatever drifts between runs (a warm cache, a provider's load, a balance)
    does not always favour the same condition."""
    conditions = (CONTROL, *systems)
    shift = (attempt - 1) % len(conditions)
    return conditions[shift:] + conditions[:shift]


def arm_caps(forward: ForwardSettings, condition: str, spent: Mapping[str, Decimal]) -> Decimal:
    """The cap of ``condition``'s arm given what the arms that already ran spent: the per-arm cap, lowered so that no
    pair (the control with one treatment) can pass the per-pair cap. A pair with nothing left refuses the arm."""
    others = [system for system in spent if system != CONTROL] if condition == CONTROL else [CONTROL]
    headroom = [forward.pair_cap_usd - spent[other] for other in others if other in spent]
    cap = min([forward.arm_cap_usd, *headroom])
    if cap <= 0:
        raise FenceError(
            "pair-cap",
            f"the {condition} arm cannot start: its pair already spent the pair cap of {forward.pair_cap_usd} USD "
            f"({dict(spent)}); raise pair_cap_usd above arm_cap_usd plus one answer",
        )
    return cap


def _private_dir(prefix: str) -> Path:
    """A new directory under the system temp directory. Its path shows in the container's mount table, so the name
    is hex: mkdtemp's random letters could spell a word the neutrality check refuses."""
    path = Path(tempfile.gettempdir()) / f"{prefix}{secrets.token_hex(8)}"
    path.mkdir(mode=0o700)
    return path


def _fence(run: ArmRun, identity: str, arms: int) -> tuple[Fence, Digest]:
    """The attempt's fence and its first record: cleared preflight, or not applicable (raises when stopped)."""
    forward = run.forward
    if forward is None:
        fence = Fence(run.store, identity, None)
        return fence, fence.not_applicable(FENCE_REASON)
    if forward.fence is None:
        fence = Fence(run.store, identity, None)
        return fence, fence.not_applicable(f"the suite declares no quota API: {forward.unfenced}")
    config = FenceConfig(
        base_url=environment_value(forward.fence.quota_url_env, "the provider's quota API base URL"),
        key_env=forward.key_env,
        key_sha256=forward.fence.key_sha256,
        production_reserve_usd=forward.fence.production_reserve_usd,
        timeout_seconds=forward.fence.timeout_seconds,
    )
    fence = Fence(run.store, identity, config)
    return fence, fence.preflight(forward.arm_cap_usd * arms)


def _run_arms(
    run: ArmRun, fence: Fence, order: tuple[str, ...], specs: Mapping[str, ContainerSpec]
) -> tuple[dict[str, ArmRecord], Digest | None]:
    """Every arm in ``order``; in forward mode each capped, with the drain observed between arms."""
    records: dict[str, ArmRecord] = {}
    spent: dict[str, Decimal] = {}
    latest: Digest | None = None
    for index, condition in enumerate(order):
        if index and run.forward is not None and fence.config is not None:
            latest = fence.between_arms(sum(spent.values(), Decimal(0)))  # a stop raises: no further arm starts
        cap = arm_caps(run.forward, condition, spent) if run.forward is not None else None
        _log.info("%s arm: the agent is running (%d of %d)", condition, index + 1, len(order))
        record = run_arm(run, condition, specs[condition], cap)
        _log.info("%s arm: %s after %.0fs", condition, record.outcome.value, sum(step.seconds for step in record.steps))
        run.store.put_document(record)  # kept even if the fence stops the next arm
        records[condition], spent[condition] = record, record.spent_usd
    return records, latest


def run_attempt(run: ArmRun, setup: AttemptSetup, attempt: int) -> AttemptOutcome:
    """Run the attempt and write its records; a fence stop raises :class:`~bench.fence.FenceStopped`."""
    store, challenge_id = run.store, run.challenge.challenge_id
    identity = f"{challenge_id}.{attempt}"
    names = tuple(system.name for system in setup.systems)
    order = arm_order(attempt, names)
    fence, fenced = _fence(run, identity, len(order))
    staging = {name: _private_dir("h-") for name in (CONTROL, *names)}
    try:
        with ExitStack() as memories:
            live: dict[str, LiveMemory] = {}
            for system in setup.systems:
                provisioner = system_provisioner(system, setup.suite_root, setup.fixture_root)
                live[system.name] = memories.enter_context(
                    live_memory(provisioner, setup.fixture, setup.graph_arm, f"{identity}.{system.name}", setup.corpus)
                )
                _log.info("%s: memory restored", system.name)
            specs = {CONTROL: arm_spec(run, setup.image_id, control_attachment(staging[CONTROL]))}
            for system in setup.systems:
                restored = live[system.name].session.restored
                attachment = treatment_attachment(system, restored, staging[system.name], setup.layers.get(system.name))
                specs[system.name] = arm_spec(run, setup.image_id, attachment)
            diffs = {
                name: store.put_document(prepare_pair(specs[CONTROL], specs[name], (CONTROL, name))) for name in names
            }
            records, drained = _run_arms(run, fence, order, specs)
            receipts = {name: live[name].snapshot() for name in names}
            _log.info(
                "snapshots taken: %s", ", ".join(f"{name} {r.assessment.verdict.value}" for name, r in receipts.items())
            )
            deterministic = [system for system in setup.systems if live[system.name].deterministic]
            rederived = {s.name: _rederive(run, s, live[s.name], records[s.name]) for s in deterministic}
            scored = {s.name: _score(run, setup, s.name, live[s.name]) for s in deterministic}
    finally:
        for directory in staging.values():
            shutil.rmtree(directory, ignore_errors=True)
    return _record(run, setup, attempt, order, drained or fenced, diffs, records, receipts, (rederived, scored))


def _score(run: ArmRun, setup: AttemptSetup, name: str, memory: LiveMemory) -> Digest:
    """What ``name``'s retrieval names for the challenge's prompt, against its oracle; stored."""
    score = score_retrieval(name, run.challenge.prompt, setup.oracle, setup.fixture.retrieval_k, memory.answer)
    _log.info(
        "%s: retrieval for the prompt named %s", name, "nothing" if score.retrieved is None else len(score.retrieved)
    )
    return run.store.put_document(score)


def _rederive(run: ArmRun, system: MemorySystem, memory: LiveMemory, record: ArmRecord) -> Digest:
    """Re-derive what ``system``'s hooks injected in its treatment arm, over its still-restored state; stored."""
    exchanges = read_exchange_log(run.store, record.exchanges)
    hooks = installed_hooks(system.attachment.settings)
    receipt = rederive_injected(system.name, record.exchanges, exchanges, hooks, memory.retrieve)
    _log.info(
        "%s: injected context re-derived (%d event(s), %s)",
        system.name,
        receipt.events,
        "matches" if receipt.matches else f"{len(receipt.findings)} finding(s)",
    )
    return run.store.put_document(receipt)


def _record(
    run: ArmRun,
    setup: AttemptSetup,
    attempt: int,
    order: tuple[str, ...],
    fence: Digest,
    diffs: Mapping[str, Digest],
    records: dict[str, ArmRecord],
    receipts: Mapping[str, SnapshotReceipt],
    retrieval: tuple[Mapping[str, Digest], Mapping[str, Digest]],
) -> AttemptOutcome:
    """Store the control, each treatment (with its snapshot) and each system's pair record; ``retrieval`` holds
    the rederivations and the retrieval scores of the systems declaring deterministic retrieval."""
    store = run.store
    rederived, scored = retrieval
    control = store.put_document(records[CONTROL])
    finals = {CONTROL: records[CONTROL].final}
    outcome = AttemptOutcome(fence, control, {}, {}, dict(diffs), {}, finals, dict(rederived), dict(scored))
    for name, receipt in receipts.items():
        snapshot = outcome.snapshots[name] = store.put_document(receipt)
        treated = records[name].model_copy(update={"snapshot": snapshot})
        treatment = outcome.treatments[name] = store.put_document(treated)
        outcome.finals[name] = treated.final
        control_first = order.index(CONTROL) < order.index(name)
        pair = PairRecord(
            challenge_id=run.challenge.challenge_id,
            attempt=attempt,
            system=name,
            model=run.model,
            gateway_mode=run.mode,
            image_id=setup.image_id,
            start=run.start,
            spec_diff=diffs[name],
            fence=fence,
            order=order,
            arms=(control, treatment) if control_first else (treatment, control),
            verdict=receipt.verdict,
            reasons=receipt.assessment.reasons,
            rederivation=rederived.get(name),
            retrieval=scored.get(name),
        )
        outcome.pairs[name] = store.put_document(pair)
    return outcome
