"""The sandbox runner: images, containers as data, workspaces as tar streams, prebuild, audit, verifier.

Layout: ``base.py`` is the backend interface and ``docker_backend.py`` its Docker implementation; ``spec.py`` the
container spec and the one-respect check; ``audit.py`` the mutation audit; ``prebuild.py``, ``arm.py``,
``verifier.py`` and ``calibrate.py`` the runner steps; ``images/`` the locally built images.
"""

from .arm import ArmOutcome, ArmResult, prepare_pair, run_arm
from .audit import AuditReceipt, Mutation, MutationKind, audit_trees
from .base import RunOutcome, RunRequest, RunStatus, SandboxBackend
from .calibrate import CalibrationReport, CalibrationVerdict, calibrate, require_calibrated
from .docker_backend import OWNER_LABEL, DockerBackend, docker_client
from .prebuild import PrebuildOutcome, PrebuildParams, PrebuildReceipt, prebuild, start_tree
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
    spec_diff,
)
from .verifier import VerifierOutcome, VerifierResult, run_verifier

__all__ = [
    "OWNER_LABEL",
    "ArmOutcome",
    "ArmResult",
    "AuditReceipt",
    "CalibrationReport",
    "CalibrationVerdict",
    "ContainerSpec",
    "DockerBackend",
    "Limits",
    "MemoryAttachment",
    "Mount",
    "Mutation",
    "MutationKind",
    "NetworkSpec",
    "PrebuildOutcome",
    "PrebuildParams",
    "PrebuildReceipt",
    "RunOutcome",
    "RunRequest",
    "RunStatus",
    "SandboxBackend",
    "SpecDiffReceipt",
    "VerifierOutcome",
    "VerifierResult",
    "audit_trees",
    "calibrate",
    "check_neutral",
    "check_one_respect",
    "container_spec",
    "docker_client",
    "prebuild",
    "prepare_pair",
    "require_calibrated",
    "run_arm",
    "run_verifier",
    "spec_diff",
    "start_tree",
]
