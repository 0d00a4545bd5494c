"""Deadlines and cleanup: a late agent is killed and recorded; containers and networks go on every path."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import docker
import pytest

from bench.sandbox import OWNER_LABEL, ArmOutcome, DockerBackend, RunRequest, container_spec, run_arm
from bench.store import Store, walk_tree
from bench.suite.challenge import Environment, NetworkMode
from tests.sandbox.sandbox_helpers import make_tree


def _leftovers(engine: docker.DockerClient) -> list[str]:
    containers = engine.containers.list(all=True, filters={"label": f"{OWNER_LABEL}=runner"})
    networks = engine.networks.list(filters={"label": f"{OWNER_LABEL}=runner"})
    return [c.short_id for c in containers] + [str(n.name) for n in networks]


def test_an_agent_past_its_timeout_is_killed_and_recorded(
    store: Store, engine: docker.DockerClient, backend: DockerBackend, tiny_image: str, environment: Environment
) -> None:
    spec = container_spec(tiny_image, environment, ("sh", "-c", "echo started > progress.txt; sleep 60"))
    result = run_arm(backend, "late", spec, make_tree(store, {"a": b"a"}), 2)
    assert result.outcome is ArmOutcome.TIMED_OUT and result.exit_code is None
    assert result.seconds < 20
    assert "progress.txt" in {str(path) for path, _ in walk_tree(store, result.final)}  # the audit still sees it
    assert _leftovers(engine) == []


@pytest.mark.parametrize("mode", [NetworkMode.NONE, NetworkMode.MODEL_ONLY])
def test_ctrl_c_removes_the_container_and_its_network(
    store: Store, engine: docker.DockerClient, backend: DockerBackend, tiny_image: str, mode: NetworkMode
) -> None:
    environment = Environment(network_mode=mode, cpus=1.0, memory_mb=128)
    gateway = engine.containers.run(tiny_image, ["sleep", "60"], detach=True, labels={OWNER_LABEL: "test"})
    try:
        spec = container_spec(tiny_image, environment, ("sleep", "60"))
        request = RunRequest(spec=spec, workspace=make_tree(store, {"a": b"a"}), timeout_seconds=60, gateway=gateway.id)
        timer = threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            backend.run(request)
        timer.join()
    finally:
        gateway.remove(force=True)
    assert _leftovers(engine) == []


def test_sweep_removes_what_a_killed_runner_left(
    engine: docker.DockerClient, backend: DockerBackend, tiny_image: str
) -> None:
    engine.containers.create(tiny_image, ["true"], labels={OWNER_LABEL: "runner"})
    engine.networks.create("net-orphan", internal=True, labels={OWNER_LABEL: "runner"})
    assert backend.sweep() == 2
    assert _leftovers(engine) == []


def test_the_sweep_command_reports_what_it_removed(
    engine: docker.DockerClient, tiny_image: str, tmp_path: Path
) -> None:
    engine.containers.create(tiny_image, ["true"], labels={OWNER_LABEL: "runner"})
    command = [sys.executable, "-m", "bench", "--store", str(tmp_path / "store"), "--json", "sandbox", "sweep"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"removed": 1}
    assert _leftovers(engine) == []
