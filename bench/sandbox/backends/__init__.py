"""Sandbox backends: ``base.py`` the interface every backend implements, ``docker/`` the Docker engine (the only
code importing the ``docker`` SDK), ``process.py`` plain processes in a temporary root, ``lease.py`` the leases
that keep a sweep away from live runners.

Stages receive a backend; :func:`default_backend` is the one place one is made for them.
"""

from __future__ import annotations

from ...store import Store
from .base import (
    IDLE_COMMAND,
    OUTPUT_LIMIT,
    Capability,
    ExecResult,
    ImageInfo,
    ImageSource,
    ModelNetwork,
    ProcessOutcome,
    RunOutcome,
    RunRequest,
    SandboxBackend,
    Session,
    SweepReport,
    process_outcome,
)
from .lease import LEASE_LABEL, OWNER_LABEL, Lease, Standing

__all__ = [
    "IDLE_COMMAND",
    "LEASE_LABEL",
    "OUTPUT_LIMIT",
    "OWNER_LABEL",
    "Capability",
    "ExecResult",
    "ImageInfo",
    "ImageSource",
    "Lease",
    "ModelNetwork",
    "ProcessOutcome",
    "RunOutcome",
    "RunRequest",
    "SandboxBackend",
    "Session",
    "Standing",
    "SweepReport",
    "default_backend",
    "process_outcome",
]


def default_backend(store: Store | None = None, images: ImageSource | None = None) -> SandboxBackend:
    """The backend the runner uses: the local Docker engine (imported here, so the process backend needs no SDK).

    Without ``store`` it serves images and sweeps only; with ``images`` it loads an image its engine lacks from
    there. Close it (or use it in a ``with``) to drop its connection.
    """
    from .docker import DockerBackend

    return DockerBackend(store, images=images)
