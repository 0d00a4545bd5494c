"""One arm of an attempt: the harness's agent CLI in its container against a gateway of its own, prompt by prompt.

Per arm run: a fresh model network and relay, a gateway in this process recording into the store (answering from the
challenge's policy, or forwarding to the provider metered and capped), one container session. The initial prompt
runs first; a follow-up prompt (continuity challenges) exists only in the runner's memory until its exec starts, and
resumes the session the first step opened. The challenge's agent timeout covers both steps; past it the container is
killed and the arm is timed out, and what it left (the workspace, the session file) is still read back.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path, PurePosixPath

from ..contracts import Digest, Sha256, environment_value
from ..errors import ContractError
from ..fence import ArmCap, PairCaps
from ..gateway import ArmKey, ArmStop, Gateway, GatewayConfig, Mode, PolicyPin
from ..harness import DEFAULT_HARNESS, Harness, harness_named
from ..sandbox.backends import ProcessOutcome, SandboxBackend, Session, process_outcome
from ..sandbox.layout import RUNNER_SCRATCH, WORKSPACE
from ..sandbox.spec import ContainerSpec
from ..store import Store
from ..suite.challenge import ChallengeManifest
from ..suite.forward import ForwardSettings
from .arm_record import ArmRecord, PromptKind, StepRecord
from .gateway_hooks import gateway_hooks
from .harness_files import container_path, home_dirs
from .recorder import StoreRecorder

__all__ = ["ArmRun", "arm_gateway", "not_started", "run_arm"]

_POLICY_FILE = "policy.json"
_PLAIN = re.compile(r"[A-Za-z0-9._/*-]+")
_LIST_SECONDS = 30.0


@dataclass(frozen=True)
class ArmRun:
    """What every arm of an attempt shares: the sandbox backend (and its store), the start tree, the challenge, the
    model and how it is reached: a policy (policy mode) or the provider settings (forward mode); and the harness
    the agent runs in."""

    backend: SandboxBackend
    start: Digest
    challenge: ChallengeManifest
    model: str
    mode: Mode
    policy: bytes | None = None
    forward: ForwardSettings | None = None
    harness: Harness = field(default_factory=lambda: harness_named(DEFAULT_HARNESS))

    def __post_init__(self) -> None:
        if (self.mode is Mode.POLICY) != (self.policy is not None) or (self.mode is Mode.FORWARD) != (
            self.forward is not None
        ):
            raise ContractError(f"gateway mode {self.mode.value} needs exactly its own input: a policy or forward")

    @property
    def store(self) -> Store:
        return self.backend.store


def _config(run: ArmRun, key: ArmKey, cap: Decimal | None) -> GatewayConfig:
    if run.forward is not None:
        if cap is None:
            raise ContractError(f"forward mode needs a cap for arm {key.label!r}; the attempt computes one per arm")
        return GatewayConfig(
            mode=Mode.FORWARD,
            arms=(key,),
            upstream=environment_value(run.forward.upstream_env, "the provider's base URL"),
            forward=run.forward.terms(),
            caps=PairCaps(arms=(ArmCap(arm=key.label, cap_usd=cap),)),
        )
    assert run.policy is not None  # ArmRun checks the mode has its input
    return GatewayConfig(
        mode=Mode.POLICY, arms=(key,), policy=PolicyPin(path=_POLICY_FILE, sha256=Sha256.of(run.policy))
    )


def _prompts(challenge: ChallengeManifest) -> list[tuple[PromptKind, str]]:
    prompts = [(PromptKind.INITIAL, challenge.prompt)]
    if challenge.follow_up_prompt is not None:
        prompts.append((PromptKind.FOLLOW_UP, challenge.follow_up_prompt))
    return prompts


def _steps(run: ArmRun, session: Session, deadline: float) -> list[StepRecord]:
    steps: list[StepRecord] = []
    resume: str | None = None
    for kind, prompt in _prompts(run.challenge):
        started = _now()
        result = session.exec(run.harness.argv(prompt, run.model, resume), deadline)
        ended = _now(after=True)
        opened = run.harness.session_id_of(result.stdout)
        steps.append(
            StepRecord(
                prompt=kind,
                text=prompt,
                started_at=started,
                ended_at=ended,
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


def _now(after: bool = False) -> str:
    """The runner's clock as the gateway writes it (milliseconds, UTC); an end is rounded up, so a request the
    gateway timed within the exec's last millisecond is inside the step."""
    now = datetime.now(UTC) + (timedelta(milliseconds=1) if after else timedelta(0))
    return now.isoformat(timespec="milliseconds")


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
    path = _resolved(session, container_path(run.harness.session_file(ids.pop(), WORKSPACE)))
    data = None if path is None else session.read_file(path)
    return None if data is None else run.store.put_bytes(data)


def _resolved(session: Session, path: PurePosixPath) -> PurePosixPath | None:
    """``path``, or the one file its ``*`` wildcards name (a harness whose session file is named by its start time
    too); None unless exactly one matches."""
    if "*" not in str(path):
        return path
    # The pattern is the harness's own (a session id the CLI printed is checked to be plain: no quoting needed)
    if not _PLAIN.fullmatch(str(path)):
        return None
    listed = session.exec(("sh", "-c", f"ls -1d -- {path}"), time.monotonic() + _LIST_SECONDS)
    found = listed.stdout.decode("utf-8", "replace").splitlines() if listed.exit_code == 0 else []
    return PurePosixPath(found[0]) if len(found) == 1 else None


@contextmanager
def arm_gateway(
    run: ArmRun, condition: str, cap: Decimal | None, recorder: StoreRecorder, host: str
) -> Iterator[Gateway]:
    """Serve one arm on ``host`` (policy, or forward capped at ``cap``); stopped (every exchange recorded) on exit."""
    key = ArmKey(label=condition, key_sha256=hashlib.sha256(run.harness.agent_key.encode()).hexdigest())
    with tempfile.TemporaryDirectory(prefix=RUNNER_SCRATCH["gateway"]) as policy_root:
        if run.policy is not None:
            (Path(policy_root) / _POLICY_FILE).write_bytes(run.policy)
        config = _config(run, key, cap).model_copy(update={"dialect": run.harness.dialect})
        gateway = Gateway(config, recorder, policy_root=Path(policy_root), hooks=gateway_hooks(run.harness))
    gateway.start(host=host, port=0)
    try:
        yield gateway
    finally:
        gateway.stop()


def run_arm(run: ArmRun, condition: str, spec: ContainerSpec, cap: Decimal | None = None) -> ArmRecord:
    """Run one arm to its record (``snapshot`` is left to the caller, who owns the memory).

    ``cap`` is the most the arm may spend in forward mode (None in policy mode, where nothing is spent).
    """
    recorder = StoreRecorder(run.store)
    with (
        run.backend.model_network(spec.image_id) as network,
        arm_gateway(run, condition, cap, recorder, network.host_address) as gateway,
    ):
        network.start_relay(int(gateway.url.rsplit(":", 1)[1]))
        with run.backend.session(spec, run.start, home_dirs(run.harness), network) as box:
            steps = _steps(run, box, time.monotonic() + run.challenge.agent_timeout_seconds)
            session = _session_blob(run, box, steps)
            final = box.read_back()
    (spend,) = gateway.spending()
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
        spent_usd=spend.spent_usd,
        cap_usd=cap,
        bounded_answers=spend.upper_bound_answers,
        bounded_usd=spend.bounded_usd,
        cap_refusals=spend.cap_refusals,
        stop=spend.stop,
        harness=run.harness.name,
    )


def not_started(run: ArmRun, condition: str, spec: ContainerSpec, stop: ArmStop) -> ArmRecord:
    """The record of an arm that never ran because an earlier arm of its attempt ended with ``stop``: no step, no
    exchange, nothing spent, its final tree the start tree, so its pair is recorded and excluded, not lost."""
    return ArmRecord(
        condition=condition,
        spec=spec,
        model=run.model,
        start=run.start,
        outcome=ProcessOutcome.FAILED,
        steps=(),
        session=None,
        exchanges=StoreRecorder(run.store).finish(),
        final=run.start,
        snapshot=None,
        spent_usd=Decimal(0),
        stop=stop,
        started=False,
        harness=run.harness.name,
    )
