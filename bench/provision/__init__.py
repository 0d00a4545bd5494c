"""The provisioner boundary: strict wire messages, the adapter that runs a memory system, the fixture contract and
the snapshot receipt that proves the memory was there."""

from .adapter import MemorySession, Provisioner, provisioned
from .errors import ProvisionRefused, RefusalReason
from .fixture import Fixture, FixtureArtifact, FixtureProbe, GraphArm, artifact_sha256, load_fixture, verify_artifact
from .messages import PUBLIC_CONTRACTS, ProbeKind, ProbeStatus, Verb, json_schemas
from .protocol_call import CallRecord, ProcessLimits
from .receipt import Assessment, PairVerdict, ProbeCheck, ProbeOutcome, SnapshotReceipt, assess

__all__ = [
    "PUBLIC_CONTRACTS",
    "Assessment",
    "CallRecord",
    "Fixture",
    "FixtureArtifact",
    "FixtureProbe",
    "GraphArm",
    "MemorySession",
    "PairVerdict",
    "ProbeCheck",
    "ProbeKind",
    "ProbeOutcome",
    "ProbeStatus",
    "ProcessLimits",
    "ProvisionRefused",
    "Provisioner",
    "RefusalReason",
    "SnapshotReceipt",
    "Verb",
    "artifact_sha256",
    "assess",
    "json_schemas",
    "load_fixture",
    "provisioned",
    "verify_artifact",
]
