"""Live progress (issue 21, build item 2), through real doit in a process of its own, off a terminal: ``[k/N]
stage labels · elapsed`` as each stage lands, what the narrator says it produced, notes from inside a running
stage, cached stages counted on one quiet line, a failure in one line, and a closing tally and finale. No colour
off a terminal."""

from __future__ import annotations

import gc
import io
import os
import re
import subprocess
import sys
import weakref
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.tools import run_once

from bench.pipeline.progress import ProgressReporter

DODO = """
import logging, os
from bench.pipeline.progress import ProgressReporter

class Narrator:
    def landed(self, task):
        return f"made {task.outputs['made']}" if "made" in task.outputs else None

    def finale(self, tasks):
        return [f"headline: {len(tasks)} stages seen", "next: open the report"]

class Reporter(ProgressReporter):
    narrator = Narrator()

DOIT_CONFIG = {"reporter": Reporter, "verbosity": 0}

def corpus():
    return {"made": "corpus-1"}

def attempt():
    logging.getLogger("bench.agent").info("control arm: agent running")
    if os.environ.get("FAIL_ATTEMPT"):
        raise RuntimeError("the arm crashed\\nits container exited 137")
    if os.environ.get("REFUSE_PUBLICATION"):
        from bench.leaks import check_leaks
        from bench.publish.checks import PublicationRefused
        raise PublicationRefused(check_leaks("receipts/x.json", b"made in /home/alice/work"))
    return {"made": "pair-1"}

def task_corpus():
    return {"actions": [corpus], "file_dep": ["source.txt"], "meta": {"stage": "corpus", "labels": {}}}

def task_attempt():
    labels = {"challenge": "harbor-holds", "attempt": "1", "arm": "treatment"}
    return {"actions": [attempt], "task_dep": ["corpus"], "meta": {"stage": "paired-attempt", "labels": labels}}

def task_report():
    return {"actions": [lambda: {"made": "report"}], "task_dep": ["attempt"], "meta": {"stage": "report"}}
"""


def doit(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "dodo.py").write_text(DODO)
    (tmp_path / "source.txt").write_text("unchanged between runs, so the corpus is cached the second time\n")
    command = [sys.executable, "-m", "doit", "-f", str(tmp_path / "dodo.py"), "--db-file", str(tmp_path / "db")]
    environment = {**os.environ, **env}
    return subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120)


PLACE = r"\[(\d)/3\]"


def test_each_stage_lands_as_k_of_n_with_its_labels_elapsed_and_what_it_made(tmp_path: Path) -> None:
    done = doit(tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    landed = [line for line in lines if re.match(PLACE + r" .* · \d+\.\ds done", line)]
    assert [re.match(PLACE, line).group(1) for line in landed] == ["1", "2", "3"]  # type: ignore[union-attr]
    assert "corpus · " in landed[0] and landed[0].endswith("-> made corpus-1")
    assert landed[1].startswith("[2/3] paired-attempt harbor-holds #1 treatment · ") and "made pair-1" in landed[1]
    note = lines.index("        · control arm: agent running")  # a note from inside the stage, under it
    assert lines[note - 1].startswith("[2/3] paired-attempt harbor-holds #1 treatment running")
    assert re.match(r"3 stages in \d+\.\ds: 3 ran, 0 cached, 0 failed$", lines[-3])
    assert lines[-2:] == ["headline: 3 stages seen", "next: open the report"]
    assert "\x1b[" not in done.stdout  # off a terminal: no colour, no status line


def test_cached_stages_are_counted_on_one_quiet_line(tmp_path: Path) -> None:
    doit(tmp_path)
    again = doit(tmp_path)
    lines = again.stdout.splitlines()
    assert lines[0] == "[1/3] 1 cached"  # the corpus, up to date: one line for the run of cached stages
    assert not [line for line in lines if line.startswith("[1/3] corpus")]
    assert re.match(r"3 stages in \d+\.\ds: 2 ran, 1 cached, 0 failed$", lines[-3])


def test_a_failure_is_one_line_naming_the_stage_and_its_last_words_and_what_did_not_run(tmp_path: Path) -> None:
    done = doit(tmp_path, FAIL_ATTEMPT="1", NO_COLOR="1")
    assert done.returncode != 0
    lines = done.stdout.splitlines()
    (failed,) = [line for line in lines if "FAILED" in line]
    assert re.match(r"\[2/3\] paired-attempt harbor-holds #1 treatment · \d+\.\ds FAILED: .*exited 137", failed)
    assert "Traceback" not in done.stdout
    assert re.match(r"3 stages in .*: 1 ran, 0 cached, 1 failed$", lines[-1])  # no headline after a failure


def test_a_refused_publication_names_its_file_and_content(tmp_path: Path) -> None:
    """Its exit code (14) through the pipeline: tests/run/test_run_exit_families.py."""
    done = doit(tmp_path, REFUSE_PUBLICATION="1", NO_COLOR="1")
    (failed,) = [line for line in done.stdout.splitlines() if "FAILED" in line]
    assert "publication refused: receipts/x.json: host-path: home directory at line 1 (/home/alice)" in failed


def test_a_no_op_rerun_leaves_its_tasks_to_reference_counting_not_to_the_collector(tmp_path: Path) -> None:
    """doit's tasks sit in reference cycles through its task dict (an upstream's result check); the reporter empties
    that dict when the run completes, so a rerun's tasks are freed as doit returns, with the collector off."""
    seen: list[weakref.ref[Any]] = []

    class Watching(ProgressReporter):
        def initialize(self, tasks: MutableMapping[str, Any], selected_tasks: list[str] | None) -> None:
            seen.extend(weakref.ref(task) for task in tasks.values())
            super().initialize(tasks, selected_tasks)

    def tree() -> dict[str, str]:
        return {"tree": "t1"}

    def summary(tree: str) -> dict[str, str]:
        return {"summary": f"of {tree}"}

    def task_tree() -> dict[str, Any]:
        return {"actions": [tree], "uptodate": [run_once], "meta": {"stage": "tree"}}

    def task_summary() -> dict[str, Any]:  # getargs: doit checks the upstream's result, holding the task dict
        return {
            "actions": [summary],
            "getargs": {"tree": ("tree", "tree")},
            "task_dep": ["tree"],
            "uptodate": [run_once],
            "meta": {"stage": "summary"},
        }

    config = {"reporter": Watching, "dep_file": str(tmp_path / "db"), "backend": "sqlite3", "verbosity": 0}
    namespace = {"DOIT_CONFIG": config, "task_tree": task_tree, "task_summary": task_summary}
    assert DoitMain(ModuleTaskLoader(namespace)).run([]) == 0  # the first run: runs both, values saved
    seen.clear()
    gc.collect()
    gc.disable()
    try:
        assert DoitMain(ModuleTaskLoader(namespace)).run([]) == 0  # the rerun: both up to date
        assert len(seen) == 2
        assert [ref() for ref in seen] == [None, None]
    finally:
        gc.enable()


class _Task:
    """What the reporter reads of a doit task."""

    def __init__(self, name: str, stage: str, labels: dict[str, str]) -> None:
        self.name, self.actions, self.meta, self.values = name, ["run"], {"stage": stage, "labels": labels}, {}


def test_a_stage_running_long_gets_a_line_at_ten_seconds_and_a_reminder_each_minute() -> None:
    """Driven by the reporter's own clock, so nothing here waits on time: a stage is announced once it has run ten
    seconds, reminded of every minute after, and a stage that lands first is never announced."""
    out = io.StringIO()
    now = [100.0]
    reporter = ProgressReporter(out, {})
    reporter.clock = lambda: now[0]
    reporter.total = 2
    reporter.execute_task(_Task("pair", "paired-attempt", {"challenge": "harbor-holds", "attempt": "1"}))
    now[0] += 9.9
    reporter.tick()
    assert out.getvalue() == ""  # not yet ten seconds
    now[0] += 0.1
    reporter.tick()
    assert out.getvalue() == "[1/2] paired-attempt harbor-holds #1 running ...\n"
    now[0] += 59.0
    reporter.tick()
    assert out.getvalue().count("\n") == 1  # a minute since its line has not passed
    now[0] += 1.0
    reporter.tick()
    assert out.getvalue().splitlines()[-1] == "        ... paired-attempt harbor-holds #1 still running · 1m10s"
    reporter.execute_task(_Task("grade", "grade", {}))
    now[0] += 2.0
    reporter.add_success(_Task("grade", "grade", {}))
    reporter.tick()
    assert out.getvalue().splitlines()[-1] == "[2/2] grade · 2.0s done"  # landed before ten seconds: one line
