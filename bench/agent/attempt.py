"""One attempt: a control arm shared by every declared memory system, and one treatment arm per system.

A paid model makes a control per system a waste, so each system's pair is the attempt's one control arm and that
system's treatment arm. Order of events, each recorded:

1. the money fence: in forward mode, an account an earlier stop latched is refused (:mod:`bench.fence.account`),
   then its preflight (key identity, per-key budget, shared headroom for the most the attempt's arms can spend
   under their caps) before anything else, so a stopped attempt starts no container; in policy mode the fence is
   recorded as not applicable;
2. every system's memory is restored through its own provisioner (before any container, so every spec is known);
3. every arm's spec is built; each treatment passes with the control through
   :func:`~bench.sandbox.spec.prepare_pair` (neutral, different only in the attachment, an image layer included)
   and each pair's spec-diff receipt is stored;
4. the arms run in the attempt's order, which rotates across attempts so no condition always runs first; in
   forward mode each arm's cap is the per-arm cap, lowered so no pair can pass the per-pair cap (an arm left no
   room stops the attempt, recorded), and the fence observes the drain between consecutive arms (a stop there
   starts no further arm); an arm the gateway stopped for its provider's fault (provider-failed or
   provider-malformed) starts no further arm either: each is recorded as not started;
5. each system's snapshot re-reads what the system holds after the run; its verdict is its pair's verdict;
6. each system whose restore declared deterministic retrieval re-derives what its hooks injected in its treatment
   arm (:mod:`.rederive_injected`); a difference is a finding on its pair; and is asked what it retrieves for the
   challenge's own prompt, the documents it names kept beside the challenge's oracle (:mod:`.retrieval_score`);
7. every system's mounted state, copied before the arms ran (:mod:`.state_copy`), is copied again: what changed is
   the agent's writing, named on the pair; its memory-tool results are replayed over the first copy
   (:mod:`.memory_evidence`, :mod:`.replay_tools`);
8. every system's memory is destroyed, on every way out.

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

from ..contracts import Digest, Sha256, environment_value
from ..errors import SandboxError
from ..fence import Fence, open_account
from ..gateway.metering import ArmStop
from ..provision.fixture import Fixture
from ..provision.messages import ArtifactRef
from ..provision.receipt import SnapshotReceipt
from ..sandbox.backends import IDLE_COMMAND
from ..sandbox.layout import RUNNER_SCRATCH
from ..sandbox.spec import ContainerSpec, MemoryAttachment, container_spec, prepare_pair
from ..suite.challenge import NetworkMode
from ..suite.forward import ForwardSettings
from ..suite.memory_system import CONTROL, MemorySystem
from .arm import ArmRun, not_started, run_arm
from .arm_record import ArmRecord, PairRecord
from .attachment import control_attachment, return_writes, treatment_attachment
from .harness_files import base_url, managed_mounts
from .memory_evidence import StateEvidence, state_evidence
from .mounted import record_mounts, require_declared, require_publishable
from .recorder import read_exchange_log
from .rederive_injected import rederive_injected
from .retrieval_score import score_retrieval
from .sealed_env import installed_hooks
from .state_copy import copy_state
from .treatment_memory import LiveMemory, live_memory, system_provisioner

__all__ = [
    "FENCE_REASON",
    "AttemptOutcome",
    "AttemptSetup",
    "arm_caps",
    "arm_order",
    "arm_spec",
    "cap_or_stop",
    "run_attempt",
]

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
    env = run.harness.environment(base_url())
    return container_spec(
        image_id, environment, IDLE_COMMAND, env=env, mounts=managed_mounts(run.harness), attachment=attachment
    )


def arm_order(attempt: int, systems: tuple[str, ...]) -> tuple[str, ...]:
    """The control and every system, rotated by the attempt number: attempt 1 starts with the control, attempt 2
    with the first system, and so on, so whatever drifts between runs (a warm cache, a provider's load, a balance)
    does not always favour the same condition."""
    conditions = (CONTROL, *systems)
    shift = (attempt - 1) % len(conditions)
    return conditions[shift:] + conditions[:shift]


def arm_caps(forward: ForwardSettings, condition: str, spent: Mapping[str, Decimal]) -> Decimal:
    """The cap of ``condition``'s arm given what the arms that already ran spent: the per-arm cap, lowered so that no
    pair (the control with one treatment) can pass the per-pair cap. Zero or less: its pairs leave it no room."""
    others = [system for system in spent if system != CONTROL] if condition == CONTROL else [CONTROL]
    headroom = [forward.pair_cap_usd - spent[other] for other in others if other in spent]
    return min([forward.arm_cap_usd, *headroom])


def cap_or_stop(fence: Fence, forward: ForwardSettings, condition: str, spent: Mapping[str, Decimal]) -> Decimal:
    """The arm's cap; an arm its pairs leave no room stops the attempt, recorded and latched by the fence."""
    cap = arm_caps(forward, condition, spent)
    if cap <= 0:
        figures = {f"{name}_spent_usd": amount for name, amount in spent.items()}
        figures |= {"arm_cap_usd": forward.arm_cap_usd, "pair_cap_usd": forward.pair_cap_usd, "room_usd": cap}
        fence.stop_at_pair_cap(condition, figures)
    return cap


def _private_dir(prefix: str) -> Path:
    """A new directory under the system temp directory. Its path shows in the container's mount table, so the name
    is hex: mkdtemp's random letters could spell a word the neutrality check refuses."""
    path = Path(tempfile.gettempdir()) / f"{prefix}{secrets.token_hex(8)}"
    path.mkdir(mode=0o700)
    return path


def _account(forward: ForwardSettings) -> Sha256:
    """The fingerprint of the provider key an attempt spends against: the one the fence declares, or (unfenced)
    the exported key's, so a stop latches the account whichever way it is reached."""
    if forward.fence is not None:
        return forward.fence.key_sha256
    return Sha256.of(environment_value(forward.key_env, "the provider key").encode())


def _fence(run: ArmRun, identity: str, treatments: int) -> tuple[Fence, Digest]:
    """The attempt's fence and its first record: cleared preflight, or not applicable (raises when stopped, and
    before anything when a stop latched the account)."""
    forward = run.forward
    if forward is None:
        fence = Fence(run.store, identity, None)
        return fence, fence.not_applicable(FENCE_REASON)
    account = _account(forward)
    resumed = open_account(run.store, account)
    if forward.fence is None:
        fence = Fence(run.store, identity, None, account=account, resumed=resumed)
        return fence, fence.not_applicable(f"the suite declares no quota API: {forward.unfenced}")
    base_url = environment_value(forward.fence.quota_url_env, "the provider's quota API base URL")
    config = forward.fence.config(base_url, forward.key_env)
    fence = Fence(run.store, identity, config, account=account, resumed=resumed)
    return fence, fence.preflight(forward.attempt_bound_usd(treatments))


def _run_arms(
    run: ArmRun, fence: Fence, order: tuple[str, ...], specs: Mapping[str, ContainerSpec]
) -> tuple[dict[str, ArmRecord], Digest | None]:
    """Every arm in ``order``; in forward mode each capped, with the drain observed between arms. An arm the gateway
    stopped for its provider's fault ends the attempt there: every later arm is recorded as not started."""
    records: dict[str, ArmRecord] = {}
    spent: dict[str, Decimal] = {}
    latest: Digest | None = None
    stop: ArmStop | None = None
    for index, condition in enumerate(order):
        if stop is not None:
            _log.info("%s arm: not started, an earlier arm ended %s", condition, stop.value)
            records[condition] = not_started(run, condition, specs[condition], stop)
            continue
        if index and run.forward is not None and fence.config is not None:
            arms = records.values()
            drained, bounded = (sum((getattr(a, f) for a in arms), Decimal(0)) for f in ("spent_usd", "bounded_usd"))
            latest = fence.between_arms(drained, bounded)  # a stop raises: no further arm starts
        cap = cap_or_stop(fence, run.forward, condition, spent) if run.forward is not None else None
        _log.info("%s arm: the agent is running (%d of %d)", condition, index + 1, len(order))
        record = run_arm(run, condition, specs[condition], cap)
        ended = record.stop.value if record.stop is not None else record.outcome.value
        _log.info("%s arm: %s after %.0fs", condition, ended, sum(step.seconds for step in record.steps))
        run.store.put_document(record)  # kept even if the fence stops the next arm
        records[condition], spent[condition], stop = record, record.spent_usd, record.stop
    return records, latest


def _treatments(
    run: ArmRun, setup: AttemptSetup, live: Mapping[str, LiveMemory], staging: Mapping[str, Path]
) -> dict[str, MemoryAttachment]:
    """Each memory system's attachment, its restore response checked first (declared, publishable)."""
    attachments = {}
    for system in setup.systems:
        restored = live[system.name].session.restored
        require_declared(system, restored, setup.suite_root)
        require_publishable(system, restored)
        attachment = treatment_attachment(
            run.harness, system, restored, staging[system.name], setup.layers.get(system.name)
        )
        attachments[system.name] = record_mounts(run.store, attachment)
    return attachments


def run_attempt(run: ArmRun, setup: AttemptSetup, attempt: int) -> AttemptOutcome:
    """Run the attempt and write its records; a fence stop raises :class:`~bench.fence.FenceStopped`."""
    store, challenge_id = run.store, run.challenge.challenge_id
    identity = f"{challenge_id}.{attempt}"
    names = tuple(system.name for system in setup.systems)
    order = arm_order(attempt, names)
    fence, fenced = _fence(run, identity, len(names))
    staging = {name: _private_dir(RUNNER_SCRATCH["staging"]) for name in (CONTROL, *names)}
    try:
        with ExitStack() as memories:
            live: dict[str, LiveMemory] = {}
            for system in setup.systems:
                provisioner = system_provisioner(
                    system, setup.suite_root, setup.fixture_root, setup.layers.get(system.name)
                )
                live[system.name] = memories.enter_context(
                    live_memory(provisioner, setup.fixture, setup.graph_arm, f"{identity}.{system.name}", setup.corpus)
                )
                _log.info("%s: memory restored", system.name)
            control = record_mounts(store, control_attachment(run.harness, staging[CONTROL]))
            attachments = _treatments(run, setup, live, staging)
            specs = {CONTROL: arm_spec(run, setup.image_id, control)}
            specs |= {name: arm_spec(run, setup.image_id, attachment) for name, attachment in attachments.items()}
            diffs = {
                name: store.put_document(prepare_pair(specs[CONTROL], specs[name], (CONTROL, name))) for name in names
            }
            before = {s.name: copy_state(store, s, live[s.name].session.restored) for s in setup.systems}
            records, drained = _run_arms(run, fence, order, specs)
            for system in setup.systems:
                return_writes(system, live[system.name].session.restored, attachments[system.name])
            receipts = {name: live[name].snapshot() for name in names}
            _log.info(
                "snapshots taken: %s", ", ".join(f"{name} {r.assessment.verdict.value}" for name, r in receipts.items())
            )
            deterministic = [system for system in setup.systems if live[system.name].deterministic]
            rederived = {s.name: _rederive(run, s, live[s.name], records[s.name]) for s in deterministic}
            scored = {s.name: _score(run, setup, s.name, live[s.name]) for s in deterministic}
            states = {
                s.name: state_evidence(run, s, live[s.name], records[s.name], before[s.name], _image(setup, s.name))
                for s in setup.systems
            }
    finally:
        for directory in staging.values():
            shutil.rmtree(directory, ignore_errors=True)
    return _record(run, setup, attempt, order, drained or fenced, diffs, records, receipts, (rederived, scored), states)


def _image(setup: AttemptSetup, system: str) -> str:
    """The image ``system``'s treatment ran in: its layer, or the agent image."""
    return setup.layers.get(system) or setup.image_id


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
    hooks = installed_hooks(run.harness, system.attachment)
    receipt = rederive_injected(system.name, record.exchanges, exchanges, hooks, memory.retrieve, record.runner())
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
    states: Mapping[str, StateEvidence],
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
        state = states[name]
        treated = records[name].model_copy(update={"snapshot": snapshot, **state.on_arm()})
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
            replay=state.replay,
            agent_writes=state.writes,
            state_findings=state.findings,
            retrieval=scored.get(name),
        )
        outcome.pairs[name] = store.put_document(pair)
    return outcome
