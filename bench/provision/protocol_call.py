"""One protocol call: run ``<prefix> <verb>`` without a shell, one JSON object in, exactly one JSON object out.

The provisioner runs in its own session (process group) so a Ctrl-C at the terminal reaches the runner, not the
provisioner, and so a timeout or an oversized reply kills everything the provisioner started. stdout is read up to a
byte limit; stderr is kept up to its own limit as operator diagnostics and is never parsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from pydantic import Field, ValidationError

from bench.contracts import ContractModel, canonical_bytes
from bench.contracts.files import field_path, validation_summary
from bench.contracts.strict_json import parse_json_object
from bench.errors import ContractError

from .errors import ProvisionRefused, RefusalReason
from .messages import Verb

__all__ = ["MAX_TIMEOUT_SECONDS", "CallRecord", "ProcessLimits", "interpret_reply", "run_verb"]

ResponseT = TypeVar("ResponseT", bound=ContractModel)
_CHUNK = 1 << 16
_STDERR_TAIL = 600  # characters of stderr quoted in a refusal message, for the operator
MAX_TIMEOUT_SECONDS = 86_400.0  # a day: past that a "timeout" is a typo, and asyncio's timer would overflow at inf


@dataclass(frozen=True)
class ProcessLimits:
    """Bounds on one call. The defaults suit a provisioner backfilling a few thousand documents."""

    timeout_seconds: float = 300.0
    stdout_bytes: int = 1 << 20
    stderr_bytes: int = 64 << 10

    def __post_init__(self) -> None:
        timeout = self.timeout_seconds
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT_SECONDS):
            raise ContractError(
                f"a provisioner timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS:g}, "
                f"got {timeout!r}",
                field="timeout_seconds",
                expected=f"0 < seconds <= {MAX_TIMEOUT_SECONDS:g}",
                actual=repr(timeout),
            )
        for name in ("stdout_bytes", "stderr_bytes"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) > 0):
                raise ContractError(f"{name} must be a positive number of bytes, got {getattr(self, name)!r}")


class CallRecord(ContractModel):
    """What one call did, kept in receipts whether it succeeded or was refused."""

    verb: Verb
    exit_code: int | None
    seconds: Annotated[float, Field(ge=0)]
    stdout_bytes: Annotated[int, Field(ge=0)]
    diagnostics: str
    refusal: RefusalReason | None = None
    message: str | None = None


@dataclass
class _Output:
    stdout: bytes = b""
    overflow: bool = False
    stderr: bytes = b""
    stderr_truncated: bool = False
    exit_code: int | None = None

    def diagnostics(self) -> str:
        text = self.stderr.decode("utf-8", errors="replace")
        return text + ("\n[stderr truncated]" if self.stderr_truncated else "")


async def run_verb(
    prefix: Sequence[str],
    verb: Verb,
    request: ContractModel,
    response_type: type[ResponseT],
    limits: ProcessLimits,
    log: list[CallRecord],
) -> ResponseT:
    """Run one verb and return its validated response; every outcome, refusal included, is appended to ``log``."""
    started = time.monotonic()
    output = _Output()
    try:
        response = await _call([*list(prefix), verb.value], verb, request, response_type, limits, output)
    except ProvisionRefused as refused:
        log.append(_record(verb, output, started, refused))
        raise
    log.append(_record(verb, output, started, None))
    return response


def _record(verb: Verb, output: _Output, started: float, refused: ProvisionRefused | None) -> CallRecord:
    return CallRecord(
        verb=verb,
        exit_code=output.exit_code,
        seconds=time.monotonic() - started,
        stdout_bytes=len(output.stdout),
        diagnostics=output.diagnostics(),
        refusal=refused.reason_code if refused else None,
        message=str(refused) if refused else None,
    )


_Refuse = Callable[..., ProvisionRefused]


def _refuser(verb: Verb, output: _Output) -> _Refuse:
    def refuse(reason: RefusalReason, message: str, obj: dict[str, Any] | None = None) -> ProvisionRefused:
        return ProvisionRefused(reason, message, verb=verb.value, diagnostics=output.diagnostics(), stdout_object=obj)

    return refuse


def interpret_reply(
    verb: Verb,
    stdout: bytes,
    exit_code: int | None,
    response_type: type[ResponseT],
    limits: ProcessLimits | None = None,
    stderr: bytes = b"",
) -> ResponseT:
    """What a finished provisioner's reply means: the validated response, or the :class:`ProvisionRefused` that
    names why not. The one judgement :func:`run_verb` applies to every call."""
    limits = limits or ProcessLimits()
    output = _Output(stdout=stdout, overflow=len(stdout) > limits.stdout_bytes, stderr=stderr, exit_code=exit_code)
    return _interpret(verb, output, limits, response_type, _refuser(verb, output))


async def _call(
    argv: list[str],
    verb: Verb,
    request: ContractModel,
    response_type: type[ResponseT],
    limits: ProcessLimits,
    output: _Output,
) -> ResponseT:
    refuse = _refuser(verb, output)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise refuse(
            RefusalReason.LAUNCH_FAILED, f"cannot start provisioner {argv!r}: {exc}; check the argv prefix"
        ) from exc
    try:
        await asyncio.wait_for(
            _exchange(proc, canonical_bytes(request) + b"\n", limits, output), limits.timeout_seconds
        )
    except TimeoutError:
        raise refuse(
            RefusalReason.TIMEOUT,
            f"provisioner {verb.value} did not finish within {limits.timeout_seconds:g} s and was killed",
        ) from None
    finally:
        await _reap(proc)
    output.exit_code = proc.returncode
    return _interpret(verb, output, limits, response_type, refuse)


def _interpret(
    verb: Verb, output: _Output, limits: ProcessLimits, response_type: type[ResponseT], refuse: _Refuse
) -> ResponseT:
    """Apply the refusals in order: oversized stdout, non-zero exit, not one object, then the contract."""
    if output.overflow:
        raise refuse(
            RefusalReason.STDOUT_TOO_LARGE,
            f"provisioner {verb.value} wrote more than {limits.stdout_bytes} bytes on stdout and was killed; "
            "stdout carries exactly one JSON object, diagnostics go to stderr",
        )
    obj: dict[str, Any] | None = None
    parse_error: ContractError | None = None
    try:
        obj = parse_json_object(output.stdout, f"provisioner {verb.value} stdout", max_bytes=limits.stdout_bytes)
    except ContractError as exc:
        parse_error = exc
    if output.exit_code != 0:
        tail = " | ".join(line.strip() for line in output.diagnostics()[-_STDERR_TAIL:].splitlines() if line.strip())
        raise refuse(
            RefusalReason.NONZERO_EXIT,
            f"provisioner {verb.value} exited with status {output.exit_code}; stderr ends: {tail or '(empty)'}",
            obj,
        )
    if parse_error is not None:
        raise refuse(
            RefusalReason.NOT_ONE_JSON_OBJECT,
            f"{parse_error.message}; stdout carries exactly one JSON object, diagnostics go to stderr",
        )
    return _validate(output.stdout, obj, response_type, refuse)


def _validate(stdout: bytes, obj: dict[str, Any] | None, response_type: type[ResponseT], refuse: _Refuse) -> ResponseT:
    try:
        return response_type.model_validate_json(stdout)
    except ValidationError as exc:
        extra = [field_path(e["loc"]) for e in exc.errors() if e["type"] == "extra_forbidden"]
        if extra:
            raise refuse(
                RefusalReason.UNKNOWN_FIELDS,
                f"{response_type.__name__} does not allow the field(s) {', '.join(extra)}; the protocol is strict: "
                "remove them (see `stele-bench schema`)",
                obj,
            ) from None
        raise refuse(
            RefusalReason.INVALID_RESPONSE,
            f"response is not a valid {response_type.__name__}: {validation_summary(exc)}",
            obj,
        ) from None


async def _exchange(proc: asyncio.subprocess.Process, data: bytes, limits: ProcessLimits, output: _Output) -> None:
    assert proc.stdin and proc.stdout and proc.stderr  # all three are pipes by construction
    stderr_task = asyncio.create_task(_drain(proc.stderr, limits.stderr_bytes, output))
    try:
        await _feed(proc.stdin, data)
        output.stdout, output.overflow = await _read_bounded(proc.stdout, limits.stdout_bytes)
        if output.overflow:
            _kill(proc)
        await stderr_task
        await proc.wait()
    finally:
        stderr_task.cancel()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    # A provisioner may exit without reading its request; its exit status then tells what happened.
    try:
        stdin.write(data)
        await stdin.drain()
        stdin.close()
        await stdin.wait_closed()
    except (BrokenPipeError, ConnectionResetError):
        pass


async def _read_bounded(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(_CHUNK):
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), True
        chunks.append(chunk)
    return b"".join(chunks), False


async def _drain(stream: asyncio.StreamReader, limit: int, output: _Output) -> None:
    # Keep the first `limit` bytes and keep reading, so a chatty provisioner never blocks on a full pipe.
    kept = bytearray()
    while chunk := await stream.read(_CHUNK):
        room = limit - len(kept)
        kept += chunk[: max(room, 0)]
        output.stderr_truncated = output.stderr_truncated or len(chunk) > room
        output.stderr = bytes(kept)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Make sure the provisioner's whole process group is gone, even when the caller is being cancelled."""
    _kill(proc)
    if proc.returncode is None:
        await asyncio.shield(proc.wait())
