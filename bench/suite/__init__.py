"""The suite's contracts: challenges (the question) and how they are read from disk."""

from .challenge import (
    Asset,
    ChallengeManifest,
    Environment,
    NetworkMode,
    Oracle,
    ScriptRuntime,
    Verifier,
    load_challenge,
    read_asset,
)

__all__ = [
    "Asset",
    "ChallengeManifest",
    "Environment",
    "NetworkMode",
    "Oracle",
    "ScriptRuntime",
    "Verifier",
    "load_challenge",
    "read_asset",
]
