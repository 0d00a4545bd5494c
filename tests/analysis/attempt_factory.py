"""Paired attempts for tests: a fixed key and seeded random arms (shared with tests/publish)."""

from __future__ import annotations

import random

from bench.analysis import (
    AnalysisPlan,
    ArmEnding,
    ArmResult,
    Budget,
    Build,
    ComparabilityKey,
    Completion,
    FrozenInputs,
    Outcome,
    PairedAttempt,
)
from bench.analysis.prereg import field_digests
from bench.contracts import Digest, canonical_bytes
from bench.gateway import Mode

__all__ = ["arm", "attempt", "frozen_inputs", "key", "random_attempts", "record_digest"]


def key(
    challenge: str = "rename-config",
    manifest: bytes = b"prereg v1",
    verifier: bytes = b"verifier v1",
    mode: Mode = Mode.FORWARD,
) -> ComparabilityKey:
    """A key of a forward-mode run (a real model) unless ``mode`` says policy (then with a policy digest)."""
    return ComparabilityKey(
        challenge=challenge,
        fixture=Digest.of(b"fixture " + challenge.encode()),
        model="claude-sonnet-4-5",
        gateway_mode=mode,
        policy=Digest.of(b"policy " + challenge.encode()) if mode is Mode.POLICY else None,
        control_condition="no-memory",
        treatment_condition="reference-memory",
        manifest=Digest.of(manifest),
        verifier=Digest.of(verifier),
        source_commit="ab" * 20,
        harness="claude-code",
        harness_version="2.1.332",
    )


def arm(
    passed: bool,
    tokens: int = 1000,
    wall: float = 30.0,
    delivered: bool = False,
    used: bool = False,
    ending: ArmEnding = ArmEnding.FINISHED,
) -> ArmResult:
    return ArmResult(
        outcome=Outcome.PASS if passed else Outcome.FAIL,
        ending=ending,
        audit_clean=True,
        delivered=delivered,
        used=used,
        tokens=tokens,
        wall_seconds=wall,
    )


def attempt(
    number: int,
    control: ArmResult | None,
    treatment: ArmResult | None,
    the_key: ComparabilityKey | None = None,
    build: Build | None = None,
    completion: Completion = Completion.COMPLETED,
) -> PairedAttempt:
    return PairedAttempt(
        key=the_key or key(),
        build=build or Build(label="mem-1.0.0", sequence=1),
        attempt=number,
        completion=completion,
        control=control,
        treatment=treatment,
    )


def random_attempts(rng: random.Random, n: int, the_key: ComparabilityKey, build: Build) -> list[PairedAttempt]:
    """``n`` completed attempts whose treatment arm passes a little more often and uses memory."""
    attempts = []
    for number in range(1, n + 1):
        delivered = rng.random() < 0.9
        control = arm(rng.random() < 0.4, rng.randint(800, 2000), round(rng.uniform(10, 90), 3))
        treatment = arm(
            rng.random() < 0.7,
            rng.randint(700, 2100),
            round(rng.uniform(10, 90), 3),
            delivered=delivered,
            used=delivered and rng.random() < 0.8,
        )
        attempts.append(attempt(number, control, treatment, the_key, build))
    return attempts


def record_digest(record: PairedAttempt) -> Digest:
    return Digest.of(canonical_bytes(record))


def frozen_inputs(verifier: bytes = b"verifier v1", attempts: int = 5, timeout: int = 300) -> FrozenInputs:
    """A preregistration's frozen inputs, every part set; ``timeout`` is one field of the challenge manifest."""
    return FrozenInputs(
        challenge=field_digests({"prompt": "Fix the export.", "agent_timeout_seconds": timeout}),
        verifier=Digest.of(verifier),
        oracle=None,
        model="claude-sonnet-4-5",
        model_access={"gateway_mode": Digest.of(b"policy"), "policy": Digest.of(b"policy bytes")},
        memory_systems={"reference": Digest.of(b"reference declaration")},
        grading={"phrases": Digest.of(b"phrases")},
        fixture=Digest.of(b"fixture"),
        budget=Budget(
            attempts=attempts,
            max_usd_cents_per_pair=300,
            max_usd_cents_per_arm=150,
            max_tokens_per_arm=200_000,
            max_wall_seconds_per_arm=900,
        ),
        analysis=AnalysisPlan(confidence="0.95"),
    )
