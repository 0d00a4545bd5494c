"""Cleanup and sweeps on the engine: every path removes what it made; a sweep removes only what dead runners left.

The backend-independent half (deadlines, Ctrl-C, live and expired leases, a killed runner) is in
tests/sandbox/contract.py; here are the leases themselves, the model network on Ctrl-C, and the sweep command.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from bench.sandbox import container_spec
from bench.sandbox.backends import IDLE_COMMAND, LEASE_LABEL, OWNER_LABEL, Lease, Standing
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.backends.docker.engine import remove_network
from bench.sandbox.backends.lease import site
from bench.store import Store
from bench.suite.challenge import Environment, NetworkMode
from tests.sandbox.sandbox_helpers import make_tree


def _owned_by(engine: docker.DockerClient, owner: str) -> list[str]:
    mine = {"label": f"{OWNER_LABEL}={owner}"}
    containers = engine.containers.list(all=True, filters=mine)
    return [c.short_id for c in containers] + [str(n.name) for n in engine.networks.list(filters=mine)]


def test_a_lease_is_renewed_while_held_and_removed_on_release(tmp_path: Path) -> None:
    lease = Lease(tmp_path, ttl=5, heartbeat=0.1)
    labels = lease.labels()
    assert labels == {OWNER_LABEL: lease.owner, LEASE_LABEL: f"{site()}:{lease.path}"}
    os.utime(lease.path, (0, 0))
    for _ in range(1200):  # the heartbeat thread renews it when it next runs (a busy machine may delay it)
        if lease.path.stat().st_mtime > 0:
            break
        time.sleep(0.1)
    assert lease.path.stat().st_mtime > 0  # the heartbeat renewed it
    assert json.loads(lease.path.read_text())["pid"] == os.getpid()
    lease.release()
    assert not lease.path.exists()
    with pytest.raises(ValueError, match="lapse"):
        Lease(tmp_path, ttl=1, heartbeat=1)


def test_a_lease_judges_what_others_made(tmp_path: Path) -> None:
    judge, other = Lease(tmp_path), Lease(tmp_path, ttl=60, heartbeat=50)
    labels = other.labels()
    assert judge.standing(judge.labels()) is Standing.OWN
    assert judge.standing(labels) is Standing.LIVE
    assert judge.standing({OWNER_LABEL: "runner"}) is Standing.FOREIGN  # an older runner: no lease to judge
    elsewhere = {**labels, LEASE_LABEL: f"another-site:{other.path}"}
    assert judge.standing(elsewhere) is Standing.FOREIGN
    os.utime(other.path, (time.time() - 120, time.time() - 120))
    assert judge.standing(labels) is Standing.DEAD  # not renewed within its time to live
    os.utime(other.path)
    record = json.loads(other.path.read_text())
    gone = subprocess.Popen(["true"])
    gone.wait()
    other.path.write_text(json.dumps(record | {"pid": gone.pid}))
    assert judge.standing(labels) is Standing.DEAD  # renewed, but its process is gone
    other.release()
    assert judge.standing(labels) is Standing.DEAD  # no lease file at all
    judge.release()


def _hold_and_exit(directory: str) -> None:
    Lease(Path(directory)).hold()


def test_dead_runners_lease_files_go_a_worker_s_at_its_exit_a_killed_one_s_at_the_next_sweep(tmp_path: Path) -> None:
    worker = multiprocessing.get_context("fork").Process(target=_hold_and_exit, args=(str(tmp_path),))
    worker.start()
    worker.join(30)
    assert worker.exitcode == 0 and list(tmp_path.glob("*.json")) == []  # released though it left by os._exit
    killed, live = Lease(tmp_path, ttl=60, heartbeat=50), Lease(tmp_path)
    killed.hold()
    live.hold()
    gone = subprocess.Popen(["true"])
    gone.wait()
    killed.path.write_text(json.dumps(json.loads(killed.path.read_text()) | {"pid": gone.pid}))
    Lease(tmp_path).prune()
    assert not killed.path.exists() and live.path.exists()
    killed.release()
    live.release()


def test_ctrl_c_inside_a_model_network_leaves_nothing_behind(
    engine: docker.DockerClient, store: Store, backend: DockerBackend, base_image: str
) -> None:
    spec = container_spec(
        base_image, Environment(network_mode=NetworkMode.MODEL_ONLY, cpus=1.0, memory_mb=128), IDLE_COMMAND
    )
    with pytest.raises(KeyboardInterrupt), backend.model_network(base_image) as network:
        network.start_relay(9)
        with backend.session(spec, make_tree(store, {"a": b"a"}), network=network):
            assert _owned_by(engine, backend.lease.owner) != []
            raise KeyboardInterrupt
    assert _owned_by(engine, backend.lease.owner) == []


def test_a_sweep_leaves_what_it_cannot_judge_alone(
    engine: docker.DockerClient, backend: DockerBackend, tiny_image: str
) -> None:
    older = engine.containers.create(tiny_image, ["true"], labels={OWNER_LABEL: "runner"})
    elsewhere = {OWNER_LABEL: "f" * 16, LEASE_LABEL: f"another-machine:/tmp/sandbox-leases/{'f' * 16}.json"}
    remote = engine.networks.create("net-elsewhere-" + os.urandom(3).hex(), internal=True, labels=elsewhere)
    try:
        report = backend.sweep()
        assert report.foreign >= 2
        older.reload()
        remote.reload()
    finally:
        older.remove(force=True)
        remote.remove()


def test_the_sweep_command_removes_only_what_dead_runners_left(
    engine: docker.DockerClient, store: Store, tiny_image: str, tmp_path: Path
) -> None:
    environment = Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=128)
    spec = container_spec(tiny_image, environment, IDLE_COMMAND)
    live_lease, dead_lease = Lease(), Lease(ttl=60, heartbeat=50)
    live, dead = DockerBackend(store, engine, live_lease), DockerBackend(store, engine, dead_lease)
    with live.session(spec, make_tree(store, {})), dead.session(spec, make_tree(store, {})):
        os.utime(dead_lease.path, (time.time() - 120, time.time() - 120))
        command = [sys.executable, "-m", "bench", "--store", str(tmp_path / "store"), "--json", "sandbox", "sweep"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert set(report) == {"removed", "live", "foreign"} and report["removed"] >= 1 and report["live"] >= 1
        assert _owned_by(engine, dead_lease.owner) == []
        assert len(_owned_by(engine, live_lease.owner)) == 1  # the live session's container is untouched
    assert _owned_by(engine, live_lease.owner) == []
    live_lease.release()
    dead_lease.release()


def test_a_network_a_container_is_still_attached_to_is_removed(engine: docker.DockerClient, tiny_image: str) -> None:
    """A stop can cut a container's removal short while its network is removed (the soak met it): the container is
    detached and the network removed, never left with an "active endpoints" error."""
    labels = {OWNER_LABEL: "test-detach"}
    network = engine.networks.create("net-test-detach", driver="bridge", internal=True, labels=labels)
    container = engine.containers.run(tiny_image, list(IDLE_COMMAND), detach=True, network=network.name, labels=labels)
    try:
        network.reload()
        assert container.id in (network.attrs.get("Containers") or {})  # attached and running
        remove_network(network)
        assert engine.networks.list(ids=[network.id]) == []
        container.reload()
        assert container.status == "running"  # only detached: its own removal is its owner's
    finally:
        container.remove(force=True)
        for left in engine.networks.list(filters={"label": f"{OWNER_LABEL}=test-detach"}):
            left.remove()
