"""Live progress of a doit run: ``[k/N] stage challenge #attempt arm · elapsed`` as each stage starts and lands.

A doit reporter (doit calls it as stages are selected, start, succeed or fail, in the main process whatever the
number of workers, and however a task executes), so nothing here knows how a stage runs. It prints:

- a line when a stage lands, with its place among the plan's N stages and its time; one when it starts only if
  it is still running ten seconds later (on a terminal the running stages tick in a status line instead);
  what landed is described by a :class:`Narrator` the composing layer provides (an arm's pass or fail and whether
  the memory was delivered, a pair's spend, a calibration's verdict);
- cached stages quietly: one dim ``[k/N] 12 cached`` line when a run of them ends, not a line each;
- what runs inside a long stage: log records of the ``bench`` loggers at INFO (``control arm: agent running``)
  as indented notes, and on a terminal a status line that ticks the elapsed time; elsewhere a reminder a minute;
- at the end the tally (ran, cached, failed, total time) and the narrator's closing lines (the headline).

Colour only on a terminal and without ``NO_COLOR``; a failure is one line (``--failure-verbosity 2`` for doit's
whole report, as the command line's ``--debug`` asks for).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TextIO

__all__ = ["Narrator", "ProgressReporter", "TaskView", "elapsed"]

_TICK_SECONDS = 1.0
_ANNOUNCE_SECONDS = 10.0  # off a terminal, a stage still running after this gets a line of its own
_REMINDER_SECONDS = 60.0
_CLEAR = "\r\x1b[K"


class Narrator(Protocol):
    """What the composing layer says about stages: it knows their documents, the reporter does not."""

    def landed(self, task: TaskView) -> str | None:
        """One phrase about what a finished stage produced, or None."""

    def finale(self, tasks: list[TaskView]) -> list[str]:
        """Closing lines once every stage is done or cached (the headline), or none."""


@dataclass
class TaskView:
    """A doit task as the reporter and a narrator see it: the plan's stage, labels and the outputs it gave."""

    name: str
    stage: str
    labels: dict[str, str]
    store: str
    outputs: dict[str, str] = field(default_factory=dict)
    executed: bool = False

    @classmethod
    def of(cls, task: Any) -> TaskView:
        meta: dict[str, Any] = task.meta or {}
        return cls(
            name=task.name,
            stage=str(meta.get("stage", task.name)),
            labels=dict(meta.get("labels", {})),
            store=str(meta.get("store", "")),
        )

    def title(self) -> str:
        labels = dict(self.labels)
        words = [self.stage]
        if "challenge" in labels:
            words.append(labels.pop("challenge"))
        if "attempt" in labels:
            words.append(f"#{labels.pop('attempt')}")
        words += labels.values()
        return " ".join(words) if len(words) > 1 else self.name


def elapsed(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, second = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{second:02d}s"
    hours, minute = divmod(minutes, 60)
    return f"{hours}h{minute:02d}m"


class _Style:
    def __init__(self, stream: TextIO) -> None:
        self.live = _is_terminal(stream)
        self.colour = self.live and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"

    def paint(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour else text


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class ProgressReporter:
    """A doit reporter class; subclass it with a ``narrator`` to describe what stages produce."""

    desc = "stele-bench progress: [k/N] stage labels · elapsed, cached stages counted quietly"
    narrator: ClassVar[Narrator | None] = None

    def __init__(self, outstream: TextIO, options: Mapping[str, Any]) -> None:
        self.clock: Callable[[], float] = time.monotonic  # a test drives its own: no assertion waits on time
        self.out = outstream
        self.style = _Style(outstream)
        self.full_failures = int(options.get("failure_verbosity") or 0) > 0
        self.lock = threading.RLock()
        self.total = 0
        self.position = 0
        self.cached_streak = 0
        self.counts = {"ran": 0, "cached": 0, "failed": 0, "not run": 0}
        self.started = self.clock()
        self.running: dict[str, tuple[int, float, TaskView]] = {}
        self.announced: dict[str, float] = {}  # running stages given a line of their own, and when
        self.views: dict[str, TaskView] = {}
        self.tasks: MutableMapping[str, Any] = {}
        self._stop = threading.Event()
        _NoteHandler.install(self)

    # -- doit's reporter interface ---------------------------------------------------------------

    def initialize(self, tasks: MutableMapping[str, Any], selected_tasks: list[str] | None) -> None:
        self.tasks = tasks  # doit's own: emptied when the run is complete (see complete_run)
        wanted = selected_tasks or [name for name in tasks if not name.startswith("_")]
        self.total = len(_closure(tasks, wanted))
        self.started = self.clock()
        threading.Thread(target=self._tick, name="progress", daemon=True).start()

    def get_status(self, task: Any) -> None:
        pass

    def execute_task(self, task: Any) -> None:
        if not task.actions or task.name.startswith("_"):
            return
        view = self._view(task)
        with self.lock:
            self._flush_cached()
            self.position += 1
            self.running[task.name] = (self.position, self.clock(), view)
            self._status()
            self.out.flush()

    def add_success(self, task: Any) -> None:
        with self.lock:
            place, began, view = self._finish(task)
            view.outputs = _outputs(task)
            view.executed = (task.values or {}).get("_executed", "true") == "true"
            self.counts["ran" if view.executed else "cached"] += 1
            said = self.narrator.landed(view) if self.narrator is not None else None
            verb = self.style.paint("done", "32") if view.executed else self.style.paint("cached", "2")
            detail = f" -> {said}" if said else ""
            self._line(f"{self._place(place)} {view.title()} · {elapsed(self.clock() - began)} {verb}{detail}")

    def add_failure(self, task: Any, fail: Any) -> None:
        from doit.exceptions import UnmetDependency  # here, so `ls` can format durations without loading doit

        if isinstance(fail, UnmetDependency):  # downstream of a failure: counted, not a line each
            with self.lock:
                self.counts["not run"] += 1
            return
        with self.lock:
            place, began, view = self._finish(task)
            self.counts["failed"] += 1
            message = fail.get_msg() if hasattr(fail, "get_msg") else str(fail)
            took = elapsed(self.clock() - began)
            failed = self.style.paint("FAILED", "31;1")
            self._line(f"{self._place(place)} {view.title()} · {took} {failed}: {_last_line(message)}")
            if self.full_failures:
                self._line(message.rstrip())

    def skip_uptodate(self, task: Any) -> None:
        if task.name.startswith("_"):
            return
        with self.lock:
            self.position += 1
            self.cached_streak += 1
            self.counts["cached"] += 1
            self._view(task)

    def skip_ignore(self, task: Any) -> None:
        with self.lock:
            self._line(f"{self._place(self.position)} {self._view(task).title()} ignored")

    def cleanup_error(self, exception: Any) -> None:
        with self.lock:
            self._line(f"cleanup failed: {_last_line(exception.get_msg())}")

    def runtime_error(self, msg: str) -> None:
        with self.lock:
            self._line(f"{self.style.paint('stopped', '31;1')}: {_last_line(msg)}")

    def teardown_task(self, task: Any) -> None:
        pass

    def complete_run(self) -> None:
        self._stop.set()
        with self.lock:
            self._flush_cached()
            counts = self.counts
            took = elapsed(self.clock() - self.started)
            not_run = f", {counts['not run']} not run (after the failure)" if counts["not run"] else ""
            self._line(
                f"{self.total} stages in {took}: {counts['ran']} ran, {counts['cached']} cached, "
                f"{counts['failed']} failed{not_run}"
            )
            if self.narrator is not None and not counts["failed"]:
                for view in self.views.values():
                    view.outputs = view.outputs or _outputs(self.tasks.get(view.name))
                for line in self.narrator.finale(list(self.views.values())):
                    self._line(line)
            self.out.flush()
            # doit's tasks hold their dict in reference cycles (an upstream's result check, an action's task); emptied
            # here, at the end of the run, they are freed by reference counting as doit returns, not walked by the
            # interpreter's collections on its way out: 0.15 s of a 4,000-task no-op rerun's exit (issue 18).
            self.tasks.clear()

    # -- drawing ----------------------------------------------------------------------------------

    def _view(self, task: Any) -> TaskView:
        view = self.views.get(task.name)
        if view is None:
            view = self.views[task.name] = TaskView.of(task)
        return view

    def _finish(self, task: Any) -> tuple[int, float, TaskView]:
        self._flush_cached()
        found = self.running.pop(task.name, None)
        self.announced.pop(task.name, None)
        if found is None:  # failed before it started (an unmet dependency): it takes a place of its own
            self.position += 1
            return self.position, self.clock(), self._view(task)
        return found

    def _place(self, position: int) -> str:
        width = len(str(self.total or position))
        return f"[{position:>{width}}/{self.total}]"

    def _flush_cached(self) -> None:
        if self.cached_streak:
            streak, self.cached_streak = self.cached_streak, 0
            self._line(self.style.paint(f"{self._place(self.position)} {streak} cached", "2"))

    def _line(self, text: str) -> None:
        """A permanent line; on a terminal the status line is wiped first and drawn again after."""
        prefix = _CLEAR if self.style.live else ""
        self.out.write(f"{prefix}{text}\n")
        self._status()
        self.out.flush()

    def note(self, text: str) -> None:
        with self.lock:
            if not self.style.live:
                self._announce(self.clock(), 0.0)  # a note belongs under the stage it comes from
            self._line(self.style.paint(f"        · {text}", "2"))

    def _announce(self, now: float, after: float) -> None:
        """Off a terminal: a line for each stage running longer than ``after`` seconds without one yet, and a
        reminder for each that has gone a minute since its last line."""
        for name, (place, began, view) in self.running.items():
            said = self.announced.get(name)
            if said is None and now - began >= after:
                self.announced[name] = now
                self._line(f"{self._place(place)} {view.title()} running ...")
            elif said is not None and now - said >= _REMINDER_SECONDS:
                self.announced[name] = now
                self._line(f"        ... {view.title()} still running · {elapsed(now - began)}")

    def _status(self) -> None:
        if not (self.style.live and self.running):
            return
        now = self.clock()
        parts = [f"{view.title()} {elapsed(now - began)}" for _, began, view in self.running.values()]
        self.out.write(f"{_CLEAR}{self._place(self.position)} running: {', '.join(parts)}")

    def _tick(self) -> None:
        while not self._stop.wait(_TICK_SECONDS):
            self.tick()

    def tick(self) -> None:
        """What a second's passing shows: the status line redrawn, or the lines of stages running long."""
        with self.lock:
            if self.style.live:
                self._status()
                self.out.flush()
            else:
                self._announce(self.clock(), _ANNOUNCE_SECONDS)


class _NoteHandler(logging.Handler):
    """Log records of the ``bench`` loggers at INFO and above become notes under the running stage. A stage that
    runs in a forked worker inherits the handler and writes to the same stream."""

    current: ClassVar[_NoteHandler | None] = None

    def __init__(self, reporter: ProgressReporter) -> None:
        super().__init__(logging.INFO)
        self.reporter = reporter

    @classmethod
    def install(cls, reporter: ProgressReporter) -> None:
        logger = logging.getLogger("bench")
        if cls.current is not None:
            logger.removeHandler(cls.current)
        cls.current = cls(reporter)
        logger.addHandler(cls.current)
        logger.setLevel(logging.INFO)
        logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.reporter.note(record.getMessage())
        except Exception:  # a note must never fail the stage that wrote it
            self.handleError(record)


def _closure(tasks: Mapping[str, Any], wanted: list[str]) -> set[str]:
    """The stages among the named tasks and every task they depend on, as doit will select them. A stage's task is
    known by the stage its meta names (:func:`~bench.pipeline.doit_tasks.doit_tasks` gives each one), not by reading
    ``task.actions``: doit makes a task's action objects on that first read, each one a reference cycle with its
    task, for tasks a no-op rerun never runs."""
    found: set[str] = set()
    pending = list(wanted)
    while pending:
        name = pending.pop()
        task = tasks.get(name)
        if name in found or task is None:
            continue
        if "stage" in (task.meta or {}) and not name.startswith("_"):
            found.add(name)
        pending += list(task.task_dep) + list(task.setup_tasks)
    return found


def _outputs(task: Any) -> dict[str, str]:
    values: Mapping[str, Any] = getattr(task, "values", None) or {}
    return {name: str(value) for name, value in values.items() if not name.startswith("_")}


def _last_line(message: str) -> str:
    """The line of a failure that says what failed: the exception's own last line, without doit's decoration."""
    lines = [line.strip() for line in str(message).strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"
