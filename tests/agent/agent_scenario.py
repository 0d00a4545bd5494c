"""A small self-made continuity challenge for the agent tests: workspace, fixture, policy and verifier.

The memory (two notes) is built so each phrase reaches the model through exactly one channel: the ledger note
matches the prompt's words (prompt-time retrieval), the pairing note is anchored on ``notes.txt`` and shares no word
with either prompt (anchor-triggered recall when the agent reads that file). The policy reads only the request:
it opens ``zeta.cfg`` if and only if the anchor recall reached the model, writes the result file when the
follow-up prompt arrives, and otherwise ends with a text that echoes the retrieval phrase in both arms (a planted
agent-authored echo).
"""

from __future__ import annotations

import json
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bench.agent import ArmRecord, ArmRun, AttemptSetup, run_attempt
from bench.agent.attempt import AttemptOutcome
from bench.builder import StageContext
from bench.builder.execution import execute
from bench.contracts import Digest, PortablePath, Sha256
from bench.gateway import Mode, Policy
from bench.grading import MemoryDeclaration, Transcript
from bench.memory import HOOK_PATH, STATE_PATH, hook_settings
from bench.memory.notes import read_corpus
from bench.packaging.certify import CertifyInputs, CertifyParams
from bench.packaging.surfaces import challenge_inputs, fixture_inputs
from bench.provision import artifact_sha256
from bench.provision.code import store_code
from bench.provision.fixture import load_fixture
from bench.run.catalogue import services
from bench.sandbox.backends import SandboxBackend
from bench.sandbox.layout import WORKSPACE
from bench.stages.audit import AuditParams, audit
from bench.stages.calibrate import calibrate_start
from bench.stages.certify import certify
from bench.stages.grade import ArmGrade, GradeParams, grade
from bench.stages.paired_attempt import PairedAttemptParams
from bench.stages.verify import VerifyParams, verify
from bench.store import EntryKind, FileEntry, Store, export_tree, tree_from_entries
from bench.suite.challenge import ChallengeManifest
from bench.suite.memory_system import Attachment, MemorySystem, StateMount

__all__ = [
    "ANCHOR_PHRASE",
    "CHALLENGE_ID",
    "FOLLOW_UP",
    "PROMPT",
    "RECALL_PHRASE",
    "attempt_params",
    "challenge",
    "neutral_dir",
    "policy_bytes",
    "reference_system",
    "run_policy_attempt",
    "workspace_tree",
    "write_challenge_dir",
    "write_fixture",
]

CHALLENGE_ID = "ledger-pairing"
PROMPT = "Please review the ledger."
FOLLOW_UP = "Now write the outcome file."
RECALL_PHRASE = "quartz ledger convention"
ANCHOR_PHRASE = "pairs with zeta.cfg"
RESULT = "out/result.txt"
VERIFIER = "import pathlib, sys\nsys.exit(0 if pathlib.Path('out/result.txt').read_text() == 'ok\\n' else 1)\n"
ORACLE = (
    "import pathlib\npathlib.Path('out').mkdir(exist_ok=True)\npathlib.Path('out/result.txt').write_text('ok\\n')\n"
)

_LEDGER_NOTE = f"# Ledger conventions\n\nThe {RECALL_PHRASE} applies to every ledger entry.\n"
_PAIRING_NOTE = f"# Pairing of configuration\n\nAnchors: notes.txt\n\nThat text {ANCHOR_PHRASE}; open both together.\n"


def workspace_tree(store: Store, extra: dict[str, str] | None = None) -> Digest:
    files = {"notes.txt": "alpha beta\n", "zeta.cfg": "gamma=1\n", **(extra or {})}
    return tree_from_entries(
        store,
        (
            FileEntry(path=PortablePath(path), kind=EntryKind.FILE, data=text.encode())
            for path, text in sorted(files.items())
        ),
    )


def write_fixture(root: Path) -> None:
    (root / "evidence").mkdir(parents=True)
    (root / "evidence" / "ledger.md").write_text(_LEDGER_NOTE)
    (root / "evidence" / "pairing.md").write_text(_PAIRING_NOTE)
    node = {"key": "topic:pairing", "kind": "topic", "title": "Configuration pairing", "source": "pairing.md"}
    edge = {"src": "topic:pairing", "dst": "doc:pairing.md", "kind": "about"}
    (root / "graph.json").write_text(json.dumps({"nodes": [node], "edges": [edge]}) + "\n")
    manifest = {
        "fixture_id": "ledger",
        "evidence_corpus": {"path": "evidence", "sha256": artifact_sha256(root / "evidence")},
        "graph_arms": [
            {"name": "plain", "graph": {"path": "graph.json", "sha256": artifact_sha256(root / "graph.json")}}
        ],
        "probes": [
            {"name": "ledger", "kind": "full-text", "query": "ledger entry", "expected": ["ledger.md"]},
            {"name": "pairing", "kind": "graph", "query": "notes.txt", "expected": ["pairing.md"]},
        ],
        "memory_phrases": [RECALL_PHRASE, ANCHOR_PHRASE],
    }
    (root / "fixture.json").write_text(json.dumps(manifest))


def write_challenge_dir(directory: Path) -> None:
    """The runner-owned challenge directory of the continuity challenge: its manifest and verifier."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "verify.py").write_text(VERIFIER)
    (directory / "oracle.py").write_text(ORACLE)
    (directory / "challenge.json").write_text(challenge().model_dump_json())


def challenge(follow_up: bool = True, timeout: int = 120) -> ChallengeManifest:
    return ChallengeManifest.model_validate_json(
        json.dumps(
            {
                "challenge_id": CHALLENGE_ID,
                "prompt": PROMPT,
                "follow_up_prompt": FOLLOW_UP if follow_up else None,
                "allowed_output_paths": ["out"],
                "agent_timeout_seconds": timeout,
                "environment": {"network_mode": "model-only", "cpus": 1.0, "memory_mb": 1024},
                "verifier": {
                    "kind": "script",
                    "runtime": "python3",
                    "asset": {"path": "verify.py", "sha256": str(Sha256.of(VERIFIER.encode()))},
                    "timeout_seconds": 60,
                },
                "oracle": {
                    "runtime": "python3",
                    "asset": {"path": "oracle.py", "sha256": str(Sha256.of(ORACLE.encode()))},
                },
            }
        )
    )


def policy_bytes() -> bytes:
    policy = {
        "rules": [
            {
                "name": "follow-anchor",
                "when": {"contains": [ANCHOR_PHRASE], "lacks": ["gamma=1"]},
                "reply": [{"type": "tool_use", "name": "Read", "input": {"file_path": f"{WORKSPACE}/zeta.cfg"}}],
            },
            {
                "name": "write-outcome",
                "when": {"contains": [FOLLOW_UP], "part": "latest"},
                "reply": [
                    {
                        "type": "tool_use",
                        "name": "Write",
                        "input": {"file_path": f"{WORKSPACE}/{RESULT}", "content": "ok\n"},
                    }
                ],
            },
            {
                "name": "open-notes",
                "when": {"turn": 1},
                "reply": [
                    {"type": "text", "text": "Let me open the notes."},
                    {"type": "tool_use", "name": "Read", "input": {"file_path": f"{WORKSPACE}/notes.txt"}},
                ],
            },
        ],
        "default": [{"type": "text", "text": f"Done. I will keep the {RECALL_PHRASE} in mind."}],
    }
    data = json.dumps(policy, indent=1).encode()
    Policy.model_validate_json(data)  # refuse a broken scenario here, not inside the gateway
    return data


def memory_declaration(store: Store, fixture_tree: Digest) -> MemoryDeclaration:
    """The fixture's phrases and the workspace paths its evidence is anchored on."""
    with tempfile.TemporaryDirectory(prefix="fx-") as scratch:
        root = Path(scratch) / "fixture"
        export_tree(store, fixture_tree, root)
        fixture = load_fixture(root)
        documents = read_corpus(root / fixture.evidence_corpus.path)
    anchors = tuple(dict.fromkeys(anchor for document in documents for anchor in document.anchors))
    return MemoryDeclaration(phrases=fixture.memory_phrases, anchored_paths=anchors)


MODEL = "claude-sonnet-4-5"


@dataclass(frozen=True)
class Inputs:
    """The runner-owned inputs of the scenario, on disk and in the store."""

    store: Store
    challenge_dir: Path
    fixture_root: Path
    fixture: Digest  # the fixture directory as a tree
    policy: Digest  # the policy file as a blob

    def gates(
        self, backend: SandboxBackend, challenge: ChallengeManifest, start: Digest, image_id: str
    ) -> dict[str, Digest]:
        """The real certification and calibration of ``challenge`` on ``start``: the attempt's two gates."""
        store = self.store
        fixture = fixture_inputs(store, self.fixture_root, load_fixture(self.fixture_root))
        owned = challenge_inputs(store, self.challenge_dir, challenge)
        surfaces = CertifyInputs(
            source=start,
            evidence=fixture.evidence,
            graph=fixture.graph,
            challenge=owned.challenge,
            runner={**fixture.runner, **owned.runner},
        )
        report = execute(StageContext(store, services()), certify, surfaces, CertifyParams(memory_phrases=())).outputs[
            "report"
        ]
        calibration = calibrate_start(backend, store, self.challenge_dir, challenge, image_id, start)
        return {"certification": report, "calibration": store.put_document(calibration.report)}

    def stage_inputs(self, backend: SandboxBackend, image_id: str, policy: bool = True) -> dict[str, Digest]:
        """The ``paired-attempt`` stage's inputs: the start tree, the challenge, the fixture, the gates, and the
        policy in policy mode."""
        start = workspace_tree(self.store)
        return {
            "start": start,
            "challenge": self.store.put_document(challenge()),
            "fixture": self.fixture,
            **({"policy": self.policy} if policy else {}),
            **self.gates(backend, challenge(), start, image_id),
        }


def neutral_dir() -> Path:
    """A fresh directory whose path names nothing: restored state under it is mounted, and mount sources are
    agent-visible (pytest's own directories are named after the tests)."""
    path = Path(tempfile.gettempdir()) / f"r{secrets.token_hex(8)}"
    path.mkdir()
    return path


def reference_system(home: Path, name: str = "reference") -> MemorySystem:
    """The reference memory declared as a suite declares it, keeping its projects under ``home``."""
    return MemorySystem(
        name=name,
        version="1",
        provisioner=("python3", "-m", "bench.memory", "--home", str(home)),
        attachment=Attachment(
            settings=hook_settings(),
            mounts=(
                StateMount(location="state", target=str(STATE_PATH)),
                StateMount(location="hook", target=str(HOOK_PATH)),
            ),
        ),
    )


def run_policy_attempt(
    inputs: Inputs,
    backend: SandboxBackend,
    agent_image: str,
    system: MemorySystem,
    policy: dict[str, object],
    suite_root: Path,
    layers: dict[str, str] | None = None,
) -> AttemptOutcome:
    """Attempt 2 (the treatment first) of the one-prompt challenge with ``system`` alone, answered by ``policy``."""
    store = inputs.store
    run = ArmRun(
        backend,
        workspace_tree(store),
        challenge(follow_up=False),
        MODEL,
        Mode.POLICY,
        policy=json.dumps(policy).encode(),
    )
    setup = AttemptSetup(
        suite_root=suite_root,
        fixture_root=inputs.fixture_root,
        fixture=load_fixture(inputs.fixture_root),
        graph_arm="plain",
        image_id=agent_image,
        systems=(system,),
        layers=layers or {},
    )
    return run_attempt(run, setup, attempt=2)


def provisioner_inputs(store: Store, params: PairedAttemptParams) -> dict[str, Digest]:
    """The attempt's ``provisioners`` input: each declared system's provisioner code, as a plan keys it."""
    return {f"provisioners/{s.name}": store_code(store, s, Path(params.suite_dir)) for s in params.systems}


def attempt_params(agent_image: str) -> PairedAttemptParams:
    """The first attempt of the scenario in policy mode with the reference memory as the one declared system."""
    return PairedAttemptParams(
        challenge_id=CHALLENGE_ID,
        attempt=1,
        model=MODEL,
        image_id=agent_image,
        suite_dir=".",
        graph_arm="plain",
        systems=(reference_system(neutral_dir()),),
        gateway_mode=Mode.POLICY,
    )


@dataclass(frozen=True)
class Graded:
    record: ArmRecord
    grade: ArmGrade
    transcript: Transcript


def grade_arm_stages(inputs: Inputs, agent_image: str, start: Digest, arm: Digest) -> Graded:
    """The arm through the real audit, verify and grade stages, as a run grades it."""
    store = inputs.store
    record = store.get_document(arm, ArmRecord)
    allowed = AuditParams(allowed_output_paths=(PortablePath("out"),))
    audited = execute(StageContext(store, services()), audit, {"start": start, "final": record.final}, allowed)
    pin = VerifyParams(
        challenge_dir=str(inputs.challenge_dir), verifier_sha256=challenge().verifier.asset.sha256, image_id=agent_image
    )
    verified = execute(StageContext(store, services()), verify, {"final": record.final}, pin)
    graded = execute(
        StageContext(store, services()),
        grade,
        {"arm": arm, **verified.outputs, **audited.outputs},
        GradeParams(memory=memory_declaration(store, inputs.fixture)),
    )
    arm_grade = store.get_document(graded.outputs["grade"], ArmGrade)
    return Graded(record, arm_grade, store.get_document(graded.outputs["transcript"], Transcript))
