"""The sandbox backend interface: run one container spec over one workspace tree, and nothing else.

A backend owns the whole life of a container: create it, stream the workspace in as a tar built from a store
tree, run it under the spec's limits with a deadline, stream the workspace back out into a store tree, and
remove the container (and any network made for it) on every path, Ctrl-C included. The Docker engine is the one
implementation today; a Kubernetes Job backend would implement the same two methods.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod

from ..contracts import ContractModel, Digest
from .spec import ContainerSpec

__all__ = ["OUTPUT_LIMIT", "RunOutcome", "RunRequest", "RunStatus", "SandboxBackend"]

# Bytes of combined stdout/stderr kept from one container; the rest is counted, not stored.
OUTPUT_LIMIT = 64 * 1024


class RunStatus(enum.StrEnum):
    EXITED = "exited"  # the command finished; see exit_code
    TIMED_OUT = "timed-out"  # killed at the deadline


class RunRequest(ContractModel):
    spec: ContainerSpec
    workspace: Digest | None  # the tree placed at the workspace path before start; None leaves it empty
    timeout_seconds: float
    read_back: bool = True  # stream the workspace back out into a tree after the command ends
    gateway: str | None = None  # on a model-only network: the engine's name for the gateway container
    output_limit: int = OUTPUT_LIMIT


class RunOutcome(ContractModel):
    status: RunStatus
    exit_code: int | None
    output: str  # combined stdout and stderr, at most output_limit bytes, decoded with replacement
    output_bytes: int  # how many bytes the command printed in all
    seconds: float
    tree: Digest | None  # the workspace as it was when the command ended


class SandboxBackend(ABC):
    """Runs containers for the runner; every container and network it makes is removed before it returns."""

    @abstractmethod
    def run(self, request: RunRequest) -> RunOutcome:
        """Run ``request.spec`` to completion or its deadline and return what happened."""

    @abstractmethod
    def sweep(self) -> int:
        """Remove every container and network this backend's owner label marks; returns how many."""
