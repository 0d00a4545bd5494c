"""Sandbox backends: ``base.py`` the interface every backend implements, ``docker/`` the Docker engine (the only
code importing the ``docker`` SDK), ``process.py`` plain processes in a temporary root, ``lease.py`` the leases
that keep a sweep away from live runners, ``choice.py`` the registry of backends by name.

Stages receive a backend; :func:`default_backend` (the one ``$STELE_BENCH_SANDBOX`` names, Docker by default) is
the one place one is made for them.
"""

from __future__ import annotations

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
from .choice import BACKENDS, SANDBOX_VARIABLE, default_backend
from .lease import LEASE_LABEL, OWNER_LABEL, Lease, Standing

__all__ = [
    "BACKENDS",
    "IDLE_COMMAND",
    "LEASE_LABEL",
    "OUTPUT_LIMIT",
    "OWNER_LABEL",
    "SANDBOX_VARIABLE",
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
