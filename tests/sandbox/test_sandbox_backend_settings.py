"""The sandbox backend chosen by configuration: ``--sandbox`` over ``$STELE_BENCH_SANDBOX`` over the project's
``[sandbox] backend`` in stele-bench.toml over Docker; an unknown name from each source is refused in one line naming
that source (the flag, the variable, or the file and its key) and the known backends."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.cli.locate import project_of
from bench.errors import ContractError, UsageError
from bench.project import MARKER, PROJECT_VARIABLE, open_project
from bench.sandbox.backends import SANDBOX_VARIABLE, default_backend
from bench.sandbox.backends.choice import chosen_backend
from bench.sandbox.backends.process import ProcessBackend

KNOWN = "known: docker, process"


def _project(root: Path, sandbox: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("[project]\nformat = 1\n" + sandbox, encoding="utf-8")
    return root


def _backend_setting(root: Path, name: str) -> Path:
    return _project(root, f'[sandbox]\nbackend = "{name}"\n')


@pytest.fixture
def unchosen(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Neither the variable nor a project named by the environment; restored afterwards, whatever a test pins."""
    for name in (SANDBOX_VARIABLE, PROJECT_VARIABLE):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    return monkeypatch


def test_docker_is_the_default_in_a_project_that_names_no_backend(tmp_path: Path, unchosen: pytest.MonkeyPatch) -> None:
    unchosen.chdir(_project(tmp_path / "p"))
    assert open_project().sandbox_backend is None
    assert chosen_backend()[0] == "docker"


@pytest.mark.skipif(os.geteuid() != 0, reason="the process backend needs root")
def test_the_project_file_chooses_the_backend(tmp_path: Path, unchosen: pytest.MonkeyPatch) -> None:
    unchosen.chdir(_backend_setting(tmp_path / "p", "process"))
    assert chosen_backend()[0] == "process"
    with default_backend() as backend:
        assert type(backend) is ProcessBackend


def test_the_project_named_by_its_variable_chooses_from_anywhere(tmp_path: Path, unchosen: pytest.MonkeyPatch) -> None:
    unchosen.setenv(PROJECT_VARIABLE, str(_backend_setting(tmp_path / "p", "process")))
    unchosen.chdir(tmp_path)
    assert chosen_backend()[0] == "process"


def test_the_variable_chooses_over_the_project_file(tmp_path: Path, unchosen: pytest.MonkeyPatch) -> None:
    unchosen.chdir(_backend_setting(tmp_path / "p", "process"))
    unchosen.setenv(SANDBOX_VARIABLE, "docker")
    assert chosen_backend()[0] == "docker"


def test_an_unknown_name_in_the_project_file_is_refused_naming_the_file_and_key(
    tmp_path: Path, unchosen: pytest.MonkeyPatch
) -> None:
    root = _backend_setting(tmp_path / "p", "podman")
    unchosen.chdir(root)
    with pytest.raises(UsageError) as caught:
        chosen_backend()
    message = str(caught.value)
    assert message == f"unknown sandbox backend 'podman' in {root / MARKER} [sandbox] backend; {KNOWN}"
    assert caught.value.exit_code == 2 and caught.value.actual == "podman"


def test_an_unknown_name_in_the_variable_is_refused_naming_the_variable(unchosen: pytest.MonkeyPatch) -> None:
    unchosen.setenv(SANDBOX_VARIABLE, "podman")
    with pytest.raises(UsageError) as caught:
        default_backend()
    assert str(caught.value) == f"unknown sandbox backend 'podman' in $STELE_BENCH_SANDBOX; {KNOWN}"


@pytest.mark.parametrize(
    "table",
    [
        "[sandbox]\nbackend = 3\n",
        '[sandbox]\nengine = "docker"\n',
        '[sandbox]\nbackend = ""\n',
        '[sandbox]\nbackend = ["docker"]\n',
        '[sandbox]\nbackend = "docker"\nimage = "x"\n',
        "[sandbox]\n",
    ],
)
def test_a_malformed_sandbox_table_is_refused_naming_the_file_and_key(tmp_path: Path, table: str) -> None:
    root = _project(tmp_path / "p", table)
    with pytest.raises(ContractError) as caught:
        open_project(root)
    message = str(caught.value)
    assert str(root / MARKER) in message and "[sandbox] backend" in message and "\n" not in message
    assert caught.value.field == "[sandbox] backend"


def test_opening_a_project_names_its_backend_for_every_process_the_command_starts(
    tmp_path: Path, unchosen: pytest.MonkeyPatch
) -> None:
    """``--project DIR`` from outside it: a pipeline process runs from another directory, so the choice travels as
    the variable, as the flag's does; the variable already set is left alone."""
    root = _backend_setting(tmp_path / "p", "process")
    unchosen.chdir(tmp_path)
    project_of(argparse.Namespace(project=root))
    assert os.environ[SANDBOX_VARIABLE] == "process"
    unchosen.setenv(SANDBOX_VARIABLE, "docker")
    project_of(argparse.Namespace(project=root))
    assert os.environ[SANDBOX_VARIABLE] == "docker"
    unchosen.delenv(SANDBOX_VARIABLE)
    with pytest.raises(UsageError, match=r"in .*stele-bench\.toml \[sandbox\] backend; known: docker, process"):
        project_of(argparse.Namespace(project=_backend_setting(tmp_path / "bad", "lxc")))
    assert SANDBOX_VARIABLE not in os.environ


def _sweep(cwd: Path, variable: str | None, *flags: str) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k not in (SANDBOX_VARIABLE, PROJECT_VARIABLE)}
    if variable is not None:
        env[SANDBOX_VARIABLE] = variable
    command = [sys.executable, "-m", "bench", "--json", *flags, "sandbox", "sweep"]
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, done.stdout + done.stderr  # one JSON object, on success and on refusal
    return done.returncode, json.loads(lines[0]), done.stderr


def test_the_command_line_takes_each_source_in_order_and_refuses_each_naming_it(tmp_path: Path) -> None:
    """A bad name from a source lower in the order is never read: the flag over the variable over the file."""
    root = _backend_setting(tmp_path / "p", "lxc")
    code, answer, _ = _sweep(root, None)
    assert code == 2 and answer["error"]["message"] == f"unknown sandbox backend 'lxc' in {root / MARKER} " + (
        f"[sandbox] backend; {KNOWN}"
    )
    code, answer, _ = _sweep(root, "podman")
    assert (
        code == 2 and answer["error"]["message"] == f"unknown sandbox backend 'podman' in $STELE_BENCH_SANDBOX; {KNOWN}"
    )
    code, answer, _ = _sweep(root, "podman", "--sandbox", "runc")
    assert code == 2 and answer["error"]["message"] == f"unknown sandbox backend 'runc' in --sandbox; {KNOWN}"
    assert answer["error"]["field"] == "--sandbox" and answer["error"]["expected"] == "docker, process"
    code, answer, _ = _sweep(root, "docker")
    assert code == 0 and set(answer) == {"removed", "live", "foreign"}, answer
    code, answer, _ = _sweep(root, "podman", "--sandbox", "docker")
    assert code == 0 and set(answer) == {"removed", "live", "foreign"}, answer
