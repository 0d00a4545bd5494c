"""The challenge manifest: the question, its allowed outputs, its limits and its digest-pinned verifier.

A challenge directory holds ``challenge.json`` and the runner-owned assets it names (the verifier script, an
optional oracle solution). None of those files ever enters an agent's container; only ``prompt`` (and
``follow_up_prompt``) is agent-visible. ``answer_phrases`` is runner-owned: certification looks for them in the
packaged inputs (a solution leak).

``allowed_output_paths`` are portable paths relative to the workspace root (``src/settings.rs``, ``target``), not
the seed's absolute ``/workspace/...`` spelling: the workspace's mount point is a runner detail that may change,
and a relative path cannot point outside the workspace. A path allows itself and everything beneath it.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from ..contracts import ContractModel, Document, PortablePath, Sha256
from ..contracts.checked_files import read_bounded, resolved
from ..contracts.files import read_contract
from ..errors import ContractError
from ..sandbox.spec import NetworkMode  # the sandbox's own type: a challenge declares one of its modes

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

MANIFEST_NAME = "challenge.json"


class ScriptRuntime(enum.StrEnum):
    """How a runner-owned script is run: the interpreter is part of the experiment."""

    POSIX_SHELL = "posix-shell"
    PYTHON3 = "python3"

    @property
    def interpreter(self) -> tuple[str, ...]:
        return {ScriptRuntime.POSIX_SHELL: ("/bin/sh",), ScriptRuntime.PYTHON3: ("python3",)}[self]


class Environment(ContractModel):
    network_mode: NetworkMode
    cpus: Annotated[float, Field(gt=0)]
    memory_mb: Annotated[int, Field(gt=0)]
    prebuild_argv: tuple[str, ...] = ()


class Asset(ContractModel):
    path: PortablePath  # relative to the challenge directory
    sha256: Sha256


class Verifier(ContractModel):
    kind: Literal["script"]
    runtime: ScriptRuntime
    asset: Asset
    timeout_seconds: Annotated[int, Field(gt=0)]


class Oracle(ContractModel):
    """A runner-owned reference solution: a script run in the workspace that should make the verifier pass."""

    runtime: ScriptRuntime
    asset: Asset
    timeout_seconds: Annotated[int, Field(gt=0)] = 600


class ChallengeManifest(Document):
    kind: Literal["challenge"] = "challenge"
    schema_version: Literal[1] = 1
    challenge_id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
    prompt: Annotated[str, Field(min_length=1)]
    follow_up_prompt: Annotated[str, Field(min_length=1)] | None = None
    allowed_output_paths: tuple[PortablePath, ...]
    agent_timeout_seconds: Annotated[int, Field(gt=0)]
    environment: Environment
    verifier: Verifier
    answer_phrases: tuple[str, ...] = ()
    oracle: Oracle | None = None

    @field_validator("allowed_output_paths", mode="before")
    @classmethod
    def _relative_to_workspace(cls, value: Any) -> Any:
        for path in value if isinstance(value, (list, tuple)) else ():
            if isinstance(path, str) and path.startswith("/"):
                raise ValueError(
                    f"{path!r} is absolute; allowed_output_paths are relative to the workspace root "
                    f"(write {path.split('/', 2)[-1]!r} for {path!r})"
                )
        return tuple(value) if isinstance(value, list) else value


def load_challenge(directory: Path) -> ChallengeManifest:
    """Read ``directory/challenge.json`` through its contract; the error names the file and the field."""
    return read_contract(directory / MANIFEST_NAME, ChallengeManifest, "the challenge manifest")


def read_asset(directory: Path, asset: Asset) -> bytes:
    """The bytes of a runner-owned asset, refused when it escapes ``directory`` or its SHA-256 differs."""
    root = resolved(directory, "the challenge directory")
    path = resolved(root / asset.path, "asset")
    if not path.is_relative_to(root):
        raise ContractError(f"asset {asset.path} resolves to {path}, outside the challenge directory {root}")
    data = read_bounded(path, "asset")
    actual = Sha256.of(data)
    if actual != asset.sha256:
        raise ContractError(
            f"asset {asset.path} has SHA-256 {actual}, but the manifest pins {asset.sha256}; "
            "refusing it: restore the pinned file or issue a new manifest version"
        )
    return data
