"""The challenge manifest the packaging tests certify against, as plain JSON fields."""

from __future__ import annotations

from typing import Any

from bench.contracts import Sha256


def challenge_fields(verifier: bytes, **changes: Any) -> dict[str, Any]:
    """A valid challenge manifest pinning ``verifier``; ``changes`` replace top-level fields."""
    return {
        "challenge_id": "settings-label",
        "prompt": "On the Settings screen, rename the update row's label as the product team asked.",
        "allowed_output_paths": ["src"],
        "agent_timeout_seconds": 900,
        "environment": {"network_mode": "none", "cpus": 2, "memory_mb": 2048},
        "verifier": {
            "kind": "script",
            "runtime": "posix-shell",
            "asset": {"path": "verifier.sh", "sha256": Sha256.of(verifier)},
            "timeout_seconds": 60,
        },
        "answer_phrases": ["Automatic Update Checks"],
    } | changes
