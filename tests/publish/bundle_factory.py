"""A realistic bundle on disk: two challenges, three builds, admitted and excluded runs, preregistrations."""

from __future__ import annotations

import random
from pathlib import Path

from bench.analysis import (
    AnalysisPlan,
    Budget,
    Build,
    Completion,
    FrozenInputs,
    PairedAttempt,
    Preregistration,
    ReasonCode,
    correct,
    decide,
    supersede,
)
from bench.contracts import Digest, canonical_bytes
from tests.analysis.attempt_factory import attempt, key, random_attempts, record_digest

__all__ = ["write_bundle"]


def _frozen(verifier: bytes) -> FrozenInputs:
    return FrozenInputs(
        prompt=Digest.of(b"prompt"),
        verifier=Digest.of(verifier),
        model="claude-sonnet-4-5",
        memory_systems={"reference": Digest.of(b"reference declaration")},
        budget=Budget(attempts=6, max_usd_cents_per_pair=300, max_tokens_per_arm=200_000, max_wall_seconds_per_arm=900),
        analysis=AnalysisPlan(confidence="0.95"),
    )


def _write(root: Path, relative: str, data: bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_bundle(root: Path, seed: int = 4) -> dict[Digest, PairedAttempt]:
    """Write records, admissions and preregistrations under ``root``; return the records by digest."""
    rng = random.Random(seed)
    v1 = Preregistration(challenge="rename-config", version=1, frozen=_frozen(b"verifier v1"))
    v2 = correct(v1, _frozen(b"verifier v2"), "v1 verifier accepted an unchanged file")
    other = Preregistration(challenge="add-flag", version=1, frozen=_frozen(b"flag verifier"))
    key_v2 = key(manifest=canonical_bytes(v2), verifier=b"verifier v2")
    superseded = random_attempts(rng, 3, key(manifest=canonical_bytes(v1)), Build(label="mem-0.9", sequence=0))
    current = []
    for sequence, label in ((1, "mem-1.0"), (2, "mem-1.1"), (3, "mem-1.2")):
        current += random_attempts(rng, 6, key_v2, Build(label=label, sequence=sequence))
    flag_key = key(challenge="add-flag", manifest=canonical_bytes(other), verifier=b"flag verifier")
    flag = random_attempts(rng, 4, flag_key, Build(label="mem-1.2", sequence=3))
    aborted = attempt(5, None, None, flag_key, Build(label="mem-1.2", sequence=3), Completion.ABORTED)
    records = {record_digest(a): a for a in [*superseded, *current, *flag, aborted]}
    old = {d: a for d, a in records.items() if a.key.manifest == v1.digest}
    decisions = supersede(v1, old, v2)
    for digest, record in records.items():
        if digest in old:
            continue
        reason = ReasonCode.NOT_COMPLETED if record is aborted else ReasonCode.PREREGISTERED_COMPLETE
        decisions.append(decide(digest, record, reason, "fence stopped the pair" if record is aborted else ""))
    for digest, record in records.items():
        _write(root, f"records/{digest.hex}.json", canonical_bytes(record))
    for decision in decisions:
        _write(root, f"admissions/{decision.record.hex}.json", canonical_bytes(decision))
    for prereg in (v1, v2, other):
        _write(root, f"manifests/{prereg.challenge}/v{prereg.version}.json", canonical_bytes(prereg))
    return records
