"""The sandbox backend registry: the configured one chosen by name, an unknown name refused, neutrality in the base."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.errors import UsageError
from bench.sandbox.backends import BACKENDS, SANDBOX_VARIABLE, RunOutcome, RunRequest, SandboxBackend, default_backend
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.backends.process import ProcessBackend


def test_docker_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SANDBOX_VARIABLE, raising=False)
    with default_backend() as backend:
        assert type(backend) is DockerBackend


@pytest.mark.skipif(os.geteuid() != 0, reason="the process backend needs root")
def test_the_variable_chooses_the_process_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SANDBOX_VARIABLE, "process")
    with default_backend() as backend:
        assert type(backend) is ProcessBackend


def test_an_unknown_backend_is_refused_naming_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SANDBOX_VARIABLE, "podman")
    with pytest.raises(UsageError, match=r"'podman'.*known: docker, process") as caught:
        default_backend()
    assert caught.value.exit_code == 2
    assert set(BACKENDS) == {"docker", "process"}


def _sweep(tmp_path: Path, variable: str, *flags: str) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, SANDBOX_VARIABLE: variable}
    command = [sys.executable, "-m", "bench", "--json", *flags, "sandbox", "sweep"]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, done.stdout + done.stderr
    return done.returncode, json.loads(lines[0])


def test_the_command_line_refuses_an_unknown_backend_in_one_json_object(tmp_path: Path) -> None:
    code, answer = _sweep(tmp_path, "podman")
    assert code == 2, answer
    assert answer["error"]["code"] == "usage" and "known: docker, process" in answer["error"]["message"]


def test_the_flag_chooses_over_the_variable_and_is_checked(tmp_path: Path) -> None:
    code, answer = _sweep(tmp_path, "podman", "--sandbox", "docker")
    assert code == 0 and set(answer) == {"removed", "live", "foreign"}, answer
    code, answer = _sweep(tmp_path, "docker", "--sandbox", "podman")
    assert code == 2 and "'podman'" in answer["error"]["message"], answer


def test_a_backend_overriding_run_is_refused_when_defined() -> None:
    with pytest.raises(TypeError, match="overrides run: implement the hooks"):

        class Skipping(ProcessBackend):
            def run(self, request: RunRequest) -> RunOutcome:  # type: ignore[misc]  # the @final mypy also refuses
                return super()._run(request)

    assert issubclass(ProcessBackend, SandboxBackend)
