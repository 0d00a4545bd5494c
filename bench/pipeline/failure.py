"""The error that stopped a pipeline, handed from the pipeline process to the command that started it.

doit keeps a failed task's error only as text (its exceptions need not pickle), so the command line knew only that
the pipeline stopped, and exited 15 whatever the cause: a fence stop, a store outage, a full disk, an unreachable
cluster. So wherever a stage's error surfaces inside doit (a task's action, in whichever doit worker ran it, and
doit's up-to-date check in its main process) it is also written to the run's failure file, once: the first error
of a run is the one that stopped it. ``python -m bench.run.dodo failure=FILE`` names the file; the command that
started the pipeline reads it back (:func:`read_failure`) and raises :class:`PipelineStopped`, which exits with the
cause's code and carries its code, message and stage under ``--json``.

The file is written with ``O_EXCL`` (the first writer wins, whatever the number of workers) and holds one JSON
object: the task, its stage and the cause's :meth:`~bench.errors.BenchError.as_json`.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ..contracts import ContractModel
from ..contracts.files import read_contract
from ..errors import BenchError, StageError, json_ready

__all__ = ["PipelineFailure", "PipelineStopped", "failure_file", "read_failure", "record_failure", "set_failure_file"]


class PipelineFailure(ContractModel):
    """What stopped a pipeline: the task (invocation) and stage it stopped in, and the error as ``--json`` shows it."""

    task: str
    stage: str
    error: dict[str, Any]


class PipelineStopped(StageError):
    """The pipeline stopped on a stage's error; it exits with that error's code (15 when there is none to tell).

    Under ``--json`` the error object is the cause's (its ``code``, ``type``, ``message`` and inputs) with the
    ``stage`` and ``task`` it stopped in, so a script reads a fence stop as ``fence-stopped`` exit 12 whether it
    came from ``fence check`` or from inside a run."""

    cause: dict[str, Any] | None = None  # the stage's error as --json shows it; None: the pipeline recorded none

    def __init__(self, failure: PipelineFailure | None, exit_status: int) -> None:
        if failure is None:
            super().__init__(
                f"the pipeline stopped (doit exit {exit_status}); the line marked FAILED above names the stage"
            )
            return
        said = str(failure.error.get("message", "(no message)"))
        cause = "; ".join(line.strip() for line in said.splitlines() if line.strip())  # one line, as every refusal
        where = failure.stage if failure.task == failure.stage else f"{failure.task} ({failure.stage})"
        super().__init__(f"{where}: {cause}", hint=failure.error.get("hint"))
        self.stage = failure.stage
        self.task = failure.task
        self.cause = failure.error
        code = failure.error.get("exit_code")
        if isinstance(code, int) and code > 0:
            self.exit_code = code

    def as_json(self) -> dict[str, Any]:
        if self.cause is None:
            return super().as_json()
        return {**self.cause, "stage": self.stage, "task": self.task}


_FILE: list[Path] = []  # this process's failure file; forked doit workers inherit it


def set_failure_file(path: Path | None) -> None:
    """Where this process (and the doit workers it forks) records the first stage error; None: nowhere."""
    _FILE[:] = [] if path is None else [path]


def failure_file() -> Path | None:
    return _FILE[0] if _FILE else None


def record_failure(task: str, stage: str, error: BenchError) -> None:
    """Record ``error`` as what stopped the run, unless an earlier one was recorded (or no file is set)."""
    target = failure_file()
    if target is None:
        return
    record = {"task": task, "stage": stage, "error": json_ready(error.as_json())}
    data = json.dumps(record, sort_keys=True, ensure_ascii=True).encode("ascii")
    with contextlib.suppress(FileExistsError):  # an earlier failure stopped the run: it is the one to report
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(descriptor, data)
        finally:
            os.close(descriptor)


def read_failure(path: Path) -> PipelineFailure | None:
    """The failure recorded at ``path``, or None when the run recorded none."""
    if not path.exists():
        return None
    return read_contract(path, PipelineFailure, "the pipeline's failure record")
