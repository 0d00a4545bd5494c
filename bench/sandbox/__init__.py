"""The sandbox seam: containers as data, workspaces as tar streams, the backends that run them.

Layout: ``backends/`` the backend interface (``base.py``), its Docker implementation (``docker/``, the only code
importing the Docker SDK), a process implementation (``process.py``) and the leases a sweep respects; ``spec.py``
the container spec with the one-respect and neutrality checks. Image recipes are :mod:`bench.images`. The stages that
run in it (prebuild, verify, calibrate, audit, workspace-identity) live in :mod:`bench.stages`.
"""

from .backends import (
    Capability,
    ExecResult,
    ModelNetwork,
    ProcessOutcome,
    RunOutcome,
    RunRequest,
    SandboxBackend,
    Session,
    SweepReport,
    default_backend,
    process_outcome,
)
from .spec import (
    ContainerSpec,
    Limits,
    MemoryAttachment,
    Mount,
    NetworkSpec,
    SpecDiffReceipt,
    check_neutral,
    check_one_respect,
    container_spec,
    prepare_pair,
    spec_diff,
)

__all__ = [
    "Capability",
    "ContainerSpec",
    "ExecResult",
    "Limits",
    "MemoryAttachment",
    "ModelNetwork",
    "Mount",
    "NetworkSpec",
    "ProcessOutcome",
    "RunOutcome",
    "RunRequest",
    "SandboxBackend",
    "Session",
    "SpecDiffReceipt",
    "SweepReport",
    "check_neutral",
    "check_one_respect",
    "container_spec",
    "default_backend",
    "prepare_pair",
    "process_outcome",
    "spec_diff",
]
