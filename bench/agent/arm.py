"""One arm of a pair: the agent CLI in its container against a gateway of its own, prompt by prompt.

Per arm run: a fresh model network and relay, a policy-mode gateway in this process recording into the store, one
container session. The initial prompt runs first; a follow-up prompt (continuity challenges) exists only in the
runner's memory until its exec starts, and resumes the session the first step opened. The challenge's agent
timeout covers both steps; past it the container is killed and the arm is timed out, and what it left (the
workspace, the session file) is still read back.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..contracts import Digest, Sha256
from ..gateway import ArmKey, Gateway, GatewayConfig, Mode, PolicyPin
from ..sandbox.backends import ProcessOutcome, SandboxBackend, Session, process_outcome
from ..sandbox.spec import ContainerSpec
from ..store import Store
from ..suite.challenge import ChallengeManifest
from .arm_record import ArmRecord, Condition, PromptKind, StepRecord
from .claude import AGENT_KEY, HOME_DIRS, claude_argv, session_file, session_id_of
from .recorder import StoreRecorder

__all__ = ["ArmRun", "policy_gateway", "run_arm"]

_POLICY_FILE = "policy.json"


@dataclass(frozen=True)
class ArmRun:
    """What both arms of a pair share: the sandbox backend (and its store), the start tree, challenge, model, policy."""

    backend: SandboxBackend
    start: Digest
    challenge: ChallengeManifest
    model: str
    policy: bytes

    @property
    def store(self) -> Store:
        return self.backend.store


def _gateway_config(condition: Condition, policy: bytes) -> GatewayConfig:
    key = ArmKey(label=condition.value, key_sha256=hashlib.sha256(AGENT_KEY.encode()).hexdigest())
    return GatewayConfig(mode=Mode.POLICY, arms=(key,), policy=PolicyPin(path=_POLICY_FILE, sha256=Sha256.of(policy)))


def _prompts(challenge: ChallengeManifest) -> list[tuple[PromptKind, str]]:
    prompts = [(PromptKind.INITIAL, challenge.prompt)]
    if challenge.follow_up_prompt is not None:
        prompts.append((PromptKind.FOLLOW_UP, challenge.follow_up_prompt))
    return prompts


def _steps(run: ArmRun, session: Session, deadline: float) -> list[StepRecord]:
    steps: list[StepRecord] = []
    resume: str | None = None
    for kind, prompt in _prompts(run.challenge):
        result = session.exec(claude_argv(prompt, run.model, resume), deadline)
        opened = session_id_of(result.stdout)
        steps.append(
            StepRecord(
                prompt=kind,
                session_id=opened,
                resumed=resume,
                stream=run.store.put_bytes(result.stdout),
                stderr=result.stderr,
                exit_code=result.exit_code,
                timed_out=result.timed_out,
                seconds=result.seconds,
            )
        )
        if result.outcome is not ProcessOutcome.SUCCEEDED or opened is None:
            break  # a follow-up needs a session that finished its first step
        resume = opened
    return steps


def _outcome(run: ArmRun, steps: list[StepRecord]) -> ProcessOutcome:
    """Timed out if any step was; succeeded only if every prompt ran and succeeded; failed otherwise."""
    outcomes = [process_outcome(step.timed_out, step.exit_code) for step in steps]
    if ProcessOutcome.TIMED_OUT in outcomes:
        return ProcessOutcome.TIMED_OUT
    every = len(steps) == len(_prompts(run.challenge)) and set(outcomes) == {ProcessOutcome.SUCCEEDED}
    return ProcessOutcome.SUCCEEDED if every else ProcessOutcome.FAILED


def _session_blob(run: ArmRun, session: Session, steps: list[StepRecord]) -> Digest | None:
    ids = {step.session_id for step in steps if step.session_id is not None}
    if len(ids) != 1:
        return None  # no session, or a resume that opened another one: the record shows which
    data = session.read_file(session_file(ids.pop()))
    return None if data is None else run.store.put_bytes(data)


@contextmanager
def policy_gateway(condition: Condition, policy: bytes, recorder: StoreRecorder, host: str) -> Iterator[int]:
    """Serve ``policy`` on ``host`` for one arm and yield the port; stopped (every exchange recorded) on exit."""
    with tempfile.TemporaryDirectory(prefix="gw-") as policy_root:
        (Path(policy_root) / _POLICY_FILE).write_bytes(policy)
        gateway = Gateway(_gateway_config(condition, policy), recorder, policy_root=Path(policy_root))
        gateway.start(host=host, port=0)
        try:
            yield int(gateway.url.rsplit(":", 1)[1])
        finally:
            gateway.stop()


def run_arm(run: ArmRun, condition: Condition, spec: ContainerSpec) -> ArmRecord:
    """Run one arm to its record (``snapshot`` is left to the caller, who owns the memory)."""
    recorder = StoreRecorder(run.store)
    with (
        run.backend.model_network(spec.image_id) as network,
        policy_gateway(condition, run.policy, recorder, network.host_address) as port,
    ):
        network.start_relay(port)
        with run.backend.session(spec, run.start, HOME_DIRS, network) as box:
            steps = _steps(run, box, time.monotonic() + run.challenge.agent_timeout_seconds)
            session = _session_blob(run, box, steps)
            final = box.read_back()
    return ArmRecord(
        condition=condition,
        spec=spec,
        model=run.model,
        start=run.start,
        outcome=_outcome(run, steps),
        steps=tuple(steps),
        session=session,
        exchanges=recorder.finish(),
        final=final,
        snapshot=None,
    )
