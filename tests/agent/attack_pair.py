"""One real pair judged end to end, for the attack tests: the attempt (the real CLI in both arm containers, the
gateway in policy mode, one memory system), then each arm's audit, verifier run and grade, the durable record and
the admission decision, as the plan makes them.

The policy is the hostile agent: it reads only the request, so it can tell the control (no memory in its first
request) from the treatment and act in either.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agent_scenario import MODEL, Inputs, challenge, memory_declaration

from bench.agent import ArmRecord, ArmRun, AttemptSetup, PairRecord, run_attempt
from bench.agent.rederive_injected import InjectedRederivation
from bench.agent.replay_tools import ToolReplay
from bench.analysis.admission import ReasonCode
from bench.analysis.attempt_record import Build, ComparabilityKey, Completion, PairedAttempt
from bench.analysis.prereg import Budget
from bench.contracts import Digest, PortablePath
from bench.fence.fence_record import FenceRecord
from bench.gateway import Mode
from bench.harness import harness_named
from bench.packaging.certify import CertificationReport
from bench.provision import load_fixture
from bench.run.arm_memory import arm_memory
from bench.sandbox.backends import SandboxBackend
from bench.stages.admit import exclusion
from bench.stages.audit import AuditReceipt, audit_trees
from bench.stages.calibrate import CalibrationReport
from bench.stages.grade import ArmGrade, arm_result, grade_arm
from bench.stages.verify import run_verifier
from bench.suite.challenge import ChallengeManifest
from bench.suite.memory_system import CONTROL, MemorySystem

__all__ = ["Gates", "Judged", "bash_policy", "judge"]

REPO = Path(__file__).resolve().parents[2]
BUDGET = Budget(
    attempts=1, max_usd_cents_per_pair=0, max_usd_cents_per_arm=0, max_tokens_per_arm=2_000_000,
    max_wall_seconds_per_arm=600,
)  # fmt: skip


@dataclass(frozen=True)
class Gates:
    """The challenge's certification and calibration, as the attempt's two gates."""

    certification: CertificationReport
    calibration: CalibrationReport


@dataclass(frozen=True)
class Judged:
    pair: PairRecord
    arms: dict[str, ArmRecord]  # by condition
    grades: dict[str, ArmGrade]
    audits: dict[str, AuditReceipt]
    record: PairedAttempt
    reason: ReasonCode | None  # None: admitted
    note: str


def bash_policy(*rules: tuple[str, dict[str, object], list[dict[str, object]]], default: str = "done") -> bytes:
    """A policy of (name, when, reply) rules; a reply block given as a string is a Bash call running it."""
    return json.dumps({
        "rules": [{"name": name, "when": when, "reply": reply} for name, when, reply in rules],
        "default": [{"type": "text", "text": default}],
    }).encode()  # fmt: skip


def _key(manifest: ChallengeManifest, system: MemorySystem, fixture: Digest) -> ComparabilityKey:
    return ComparabilityKey(
        challenge=manifest.challenge_id, fixture=fixture, model=MODEL, gateway_mode=Mode.POLICY, policy=fixture,
        control_condition="no-memory", treatment_condition=f"{system.name}:plain", manifest=fixture,
        verifier=fixture, source_commit="0" * 40, harness="claude-code", harness_version="2.1.332",
    )  # fmt: skip


def judge(
    inputs: Inputs,
    backend: SandboxBackend,
    gates: Gates,
    *,
    image_id: str,
    policy: bytes,
    system: MemorySystem,
    start: Digest,
    manifest: ChallengeManifest | None = None,
    challenge_dir: Path | None = None,
    layers: dict[str, str] | None = None,
) -> Judged:
    """Run the pair and judge it as the plan does; the suite root is the example's (for its provisioners)."""
    store = inputs.store
    manifest = manifest or challenge()
    run = ArmRun(backend, start, manifest, MODEL, Mode.POLICY, policy=policy)
    setup = AttemptSetup(
        suite_root=REPO / "challenges" / "example", fixture_root=inputs.fixture_root,
        fixture=load_fixture(inputs.fixture_root), graph_arm="plain", image_id=image_id, systems=(system,),
        layers=layers or {},
    )  # fmt: skip
    done = run_attempt(run, setup, attempt=1)
    pair = store.get_document(done.pairs[system.name], PairRecord)
    arms = {CONTROL: done.control, system.name: done.treatments[system.name]}
    base = memory_declaration(store, inputs.fixture)
    records, grades, audits = {}, {}, {}
    for condition, digest in arms.items():
        record = records[condition] = store.get_document(digest, ArmRecord)
        allowed = tuple(PortablePath(path) for path in manifest.allowed_output_paths)
        audits[condition] = audit_trees(store, start, record.final, allowed)
        verified = run_verifier(backend, challenge_dir or inputs.challenge_dir, manifest, image_id, record.final)
        memory = arm_memory(base, () if condition == CONTROL else (system,), harness_named("claude-code"))
        grades[condition] = grade_arm(store, digest, memory, verified, audits[condition])
    control, treatment = (arm_result(store, grades[c], BUDGET) for c in (CONTROL, system.name))
    finished = all(arm.ending.value == "finished" for arm in (control, treatment))
    attempt = PairedAttempt(
        key=_key(manifest, system, inputs.fixture), build=Build(label="b", sequence=1), attempt=1,
        completion=Completion.COMPLETED if finished else Completion.ABORTED, control=control, treatment=treatment,
    )  # fmt: skip
    excluded = exclusion(
        gates.certification, gates.calibration, store.get_document(pair.fence, FenceRecord), pair, attempt,
        {"control": audits[CONTROL], "treatment": audits[system.name]},
        rederivation=None if pair.rederivation is None else store.get_document(pair.rederivation, InjectedRederivation),
        replay=None if pair.replay is None else store.get_document(pair.replay, ToolReplay),
    )  # fmt: skip
    reason, note = excluded if excluded is not None else (None, "admitted")
    return Judged(pair, records, grades, {c: audits[c] for c in arms}, attempt, reason, note)
