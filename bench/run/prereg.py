"""Preregistrations for a suite's challenges: frozen before any run, checked before every run.

``manifests/<suite>/<challenge>/v<N>.json`` freezes the prompt (both prompts of a continuity challenge), the
verifier's bytes, the model, each memory system's declaration, the budget and the analysis plan. A run observes the
first four again and refuses to start when any has moved (a changed declaration needs a new version); the budget's
``attempts`` is the most a run may make.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..analysis.prereg import (
    AnalysisPlan,
    Budget,
    FrozenInputs,
    Preregistration,
    check_unmoved,
    load_preregistrations,
    stated_power,
)
from ..contracts import Digest, canonical_json
from ..errors import ContractError
from ..suite.challenge import read_asset
from ..suite.suite import LoadedChallenge, Suite

__all__ = ["current_preregistration", "freeze", "observed_inputs"]

MAX_ATTEMPTS = 5  # enough to reach the exact continuous tests; a run may make fewer


def observed_inputs(suite: Suite, loaded: LoadedChallenge, budget: Budget, analysis: AnalysisPlan) -> FrozenInputs:
    """What a run would use now, with the declared budget and analysis it is checked against."""
    manifest = loaded.manifest
    prompts = {"prompt": manifest.prompt, "follow_up_prompt": manifest.follow_up_prompt}
    return FrozenInputs(
        prompt=Digest.of(canonical_json(prompts)),
        verifier=Digest.of(read_asset(loaded.directory, manifest.verifier.asset)),
        model=suite.manifest.model,
        memory_systems={system.name: system.digest for system in suite.manifest.memory_systems},
        budget=budget,
        analysis=analysis,
    )


def freeze(suite: Suite, directory: Path) -> list[Path]:
    """Write version 1 for every challenge that has none yet; never overwrites. Returns the files written."""
    written = []
    existing = load_preregistrations(directory) if directory.is_dir() else {}
    for loaded in suite.challenges:
        challenge = loaded.manifest.challenge_id
        if challenge in existing:
            continue
        forward = suite.manifest.forward
        budget = Budget(
            attempts=MAX_ATTEMPTS,
            # policy mode reaches no paid provider; forward mode's pair cap, rounded up to whole cents
            max_usd_cents_per_pair=0
            if forward is None
            else int((forward.pair_cap_usd * 100).to_integral_value("ROUND_CEILING")),
            max_tokens_per_arm=2_000_000,
            max_wall_seconds_per_arm=loaded.manifest.agent_timeout_seconds,
        )
        analysis = AnalysisPlan(
            confidence="0.95",
            # stated now, before any outcome: what this many attempts per challenge can detect, alone and pooled
            minimum_detectable_effect=stated_power("0.95", "0.8", MAX_ATTEMPTS, len(suite.challenges)),
            baseline=suite.manifest.baseline,
        )
        frozen = observed_inputs(suite, loaded, budget, analysis)
        prereg = Preregistration(challenge=challenge, version=1, frozen=frozen)
        path = directory / challenge / "v1.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(prereg.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written


def current_preregistration(suite: Suite, loaded: LoadedChallenge, directory: Path, attempts: int) -> Preregistration:
    """The newest version for ``loaded``, after checking nothing it froze has moved; refuses otherwise."""
    challenge = loaded.manifest.challenge_id
    versions = load_preregistrations(directory).get(challenge) if directory.is_dir() else None
    if not versions:
        raise ContractError(
            f"challenge {challenge} has no preregistration under {directory}; "
            f"freeze one with `stele-bench prereg freeze {suite.root.name}` before running it"
        )
    prereg = versions[-1]
    check_unmoved(prereg, observed_inputs(suite, loaded, prereg.frozen.budget, prereg.frozen.analysis))
    if attempts > prereg.frozen.budget.attempts:
        raise ContractError(
            f"{attempts} attempts asked for {challenge}, but v{prereg.version} froze at most "
            f"{prereg.frozen.budget.attempts}; ask for fewer or write a corrected preregistration"
        )
    return prereg
