"""The sandbox runner: images, containers as data, workspaces as tar streams, prebuild, audit, verifier.

Layout: ``backends/`` the backend interface (``base.py``), its Docker implementation (``docker/``, the only code
importing the Docker SDK), a process implementation (``process.py``) and the leases a sweep respects; ``spec.py``
the container spec with the one-respect and neutrality checks; ``audit.py`` the mutation audit; ``prebuild.py``,
``verify.py`` and ``calibrate.py`` the runner stages; ``images/`` the locally built images.
"""

from .audit import AuditReceipt, Mutation, MutationKind, audit_trees
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
from .calibrate import CalibrationReport, CalibrationVerdict, calibrate, require_calibrated
from .prebuild import PrebuildParams, PrebuildReceipt, prebuild, start_tree
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
from .verify import VerifierResult, run_verifier

__all__ = [
    "AuditReceipt",
    "CalibrationReport",
    "CalibrationVerdict",
    "Capability",
    "ContainerSpec",
    "ExecResult",
    "Limits",
    "MemoryAttachment",
    "ModelNetwork",
    "Mount",
    "Mutation",
    "MutationKind",
    "NetworkSpec",
    "PrebuildParams",
    "PrebuildReceipt",
    "ProcessOutcome",
    "RunOutcome",
    "RunRequest",
    "SandboxBackend",
    "Session",
    "SpecDiffReceipt",
    "SweepReport",
    "VerifierResult",
    "audit_trees",
    "calibrate",
    "check_neutral",
    "check_one_respect",
    "container_spec",
    "default_backend",
    "prebuild",
    "prepare_pair",
    "process_outcome",
    "require_calibrated",
    "run_verifier",
    "spec_diff",
    "start_tree",
]
