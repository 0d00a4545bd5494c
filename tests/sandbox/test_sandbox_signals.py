"""SIGTERM to a command running a container removes the container and reports the stop (issue 17, item 5).

A real `python -m bench calibrate` whose verifier hangs in a real container on the engine; the signal arrives while
the container runs, and afterwards nothing labelled with that runner's lease is left on the engine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from bench.sandbox.backends import OWNER_LABEL
from tests.sandbox.sandbox_helpers import write_challenge

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes


def _runner_owner(leases: Path, seconds: float = 60.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for lease in leases.glob("*.json"):
            return lease.stem
        time.sleep(0.1)
    raise AssertionError("the runner never took a lease")


def _theirs(engine: docker.DockerClient, owner: str) -> list[str]:
    mine = {"label": f"{OWNER_LABEL}={owner}"}
    containers = engine.containers.list(all=True, filters=mine)
    return [f"container {c.short_id}" for c in containers] + [
        f"network {n.name}" for n in engine.networks.list(filters=mine)
    ]


def test_sigterm_mid_container_removes_it_and_says_so(
    engine: docker.DockerClient, tiny_image: str, tmp_path: Path
) -> None:
    challenge = write_challenge(tmp_path / "hang", "sleep 120\n", oracle="true\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "hello.txt").write_text("hello\n")
    leases = tmp_path / "leases"
    command = [sys.executable, "-m", "bench", "--store", str(tmp_path / "store"), "--json", "calibrate", str(challenge)]
    command += ["--workspace", str(workspace), "--image", tiny_image]
    environment = {**os.environ, "SANDBOX_LEASE_DIR": str(leases)}
    runner = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    try:
        owner = _runner_owner(leases)
        deadline = time.monotonic() + 60
        while not any(
            c.status == "running" for c in engine.containers.list(filters={"label": f"{OWNER_LABEL}={owner}"})
        ):
            assert time.monotonic() < deadline, "the verifier container never started"
            time.sleep(0.1)
        runner.send_signal(signal.SIGTERM)
        out, err = runner.communicate(timeout=60)
    finally:
        runner.kill()
    assert runner.returncode == 143, err
    assert json.loads(out)["error"]["message"] == "interrupted by SIGTERM"
    assert "Traceback" not in err and "timed out" not in err
    assert _theirs(engine, owner) == []
