"""Workspaces in and out as tar streams, and the challenge's limits as seen from inside the container."""

from __future__ import annotations

import docker
import pytest

from bench.errors import SandboxError
from bench.sandbox import OWNER_LABEL, DockerBackend, RunRequest, RunStatus, container_spec
from bench.sandbox.layout import GATEWAY_ALIAS
from bench.store import EntryKind, Store, walk_tree
from bench.suite.challenge import Environment, NetworkMode
from tests.sandbox.sandbox_helpers import make_tree

CGROUP_LIMITS = (
    "if [ -f /sys/fs/cgroup/cpu.max ]; then cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max; "
    "else echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); "
    "cat /sys/fs/cgroup/memory/memory.limit_in_bytes; fi"
)


def _run(backend: DockerBackend, image: str, environment: Environment, script: str, **kw: object):
    spec = container_spec(image, environment, ("sh", "-c", script))
    request = {"spec": spec, "workspace": None, "timeout_seconds": 30, "read_back": False} | kw
    return backend.run(RunRequest.model_validate(request))


def test_a_workspace_round_trips_unchanged(
    store: Store, backend: DockerBackend, tiny_image: str, environment: Environment
) -> None:
    tree = make_tree(
        store,
        {
            "a.txt": b"alpha\n",
            "bin/run": ("x", b"#!/bin/sh\necho ok\n"),
            "link": ("l", "a.txt"),
            "deep/er/file": b"\x00\xffbinary",
        },
    )
    outcome = _run(backend, tiny_image, environment, "true", workspace=tree, read_back=True)
    assert outcome.tree == tree


def test_the_workspace_belongs_to_the_non_root_user_and_changes_come_back(
    store: Store, backend: DockerBackend, tiny_image: str, environment: Environment
) -> None:
    tree = make_tree(store, {"a.txt": b"alpha\n", "run.sh": b"echo\n"})
    script = "stat -c '%u %n' /workspace /workspace/a.txt; echo beta > b.txt; chmod +x run.sh; ln -s b.txt c"
    outcome = _run(backend, tiny_image, environment, script, workspace=tree, read_back=True)
    assert outcome.output.split() == ["1000", "/workspace", "1000", "/workspace/a.txt"]
    assert outcome.tree is not None
    kinds = {str(path): entry.kind for path, entry in walk_tree(store, outcome.tree)}
    assert kinds == {
        "a.txt": EntryKind.FILE,
        "b.txt": EntryKind.FILE,
        "c": EntryKind.SYMLINK,
        "run.sh": EntryKind.EXECUTABLE,
    }


def test_cpu_and_memory_limits_hold_inside(backend: DockerBackend, tiny_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.NONE, cpus=0.5, memory_mb=96)
    quota, period, memory = _run(backend, tiny_image, environment, CGROUP_LIMITS).output.split()
    assert int(quota) / int(period) == 0.5
    assert int(memory) == 96 * 1024 * 1024


def test_memory_past_the_limit_is_killed(backend: DockerBackend, base_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=64)
    outcome = _run(backend, base_image, environment, "python3 -c 'x = bytearray(200 * 1024 * 1024)'")
    assert outcome.exit_code == 137  # SIGKILL from the OOM killer


def test_network_none_has_only_loopback(backend: DockerBackend, tiny_image: str, environment: Environment) -> None:
    assert _run(backend, tiny_image, environment, "ls /sys/class/net").output.split() == ["lo"]


def test_network_public_has_an_interface(backend: DockerBackend, tiny_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.PUBLIC, cpus=1.0, memory_mb=128)
    assert _run(backend, tiny_image, environment, "ls /sys/class/net").output.split() == ["eth0", "lo"]


@pytest.fixture
def gateway(engine: docker.DockerClient, tiny_image: str):
    """A stand-in model endpoint: busybox httpd answering on the default bridge, labelled like runner objects."""
    script = "mkdir -p /tmp/www && echo model-answer > /tmp/www/v1 && exec httpd -f -p 8080 -h /tmp/www"
    container = engine.containers.run(tiny_image, ["sh", "-c", script], detach=True, labels={OWNER_LABEL: "test"})
    yield container
    container.remove(force=True)


def test_model_only_reaches_the_gateway_and_nothing_else(
    engine: docker.DockerClient, backend: DockerBackend, base_image: str, gateway: docker.models.containers.Container
) -> None:
    environment = Environment(network_mode=NetworkMode.MODEL_ONLY, cpus=1.0, memory_mb=128)
    gateway.reload()
    # The gateway's own address on the default bridge: reachable from there, never from the internal network.
    elsewhere = gateway.attrs["NetworkSettings"]["Networks"]["bridge"]["IPAddress"]
    probe = (
        "import urllib.request\n"
        f"for url in ('http://{GATEWAY_ALIAS}:8080/v1', 'http://{elsewhere}:8080/v1'):\n"
        "    try: print(urllib.request.urlopen(url, timeout=3).read().decode().strip())\n"
        "    except OSError as exc: print('unreachable')\n"
    )
    outcome = _run(backend, base_image, environment, f'python3 -c "{probe}"', gateway=gateway.id)
    assert outcome.output.split() == ["model-answer", "unreachable"]
    gateway.reload()
    assert list(gateway.attrs["NetworkSettings"]["Networks"]) == ["bridge"]  # detached again afterwards
    assert not engine.networks.list(filters={"label": OWNER_LABEL})


def test_model_only_without_a_gateway_is_refused(backend: DockerBackend, tiny_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.MODEL_ONLY, cpus=1.0, memory_mb=128)
    with pytest.raises(SandboxError, match="needs a gateway"):
        _run(backend, tiny_image, environment, "true")


def test_output_is_bounded(backend: DockerBackend, tiny_image: str, environment: Environment) -> None:
    outcome = _run(backend, tiny_image, environment, "yes 0123456789 | head -c 200000", output_limit=1000)
    assert len(outcome.output) == 1000 and outcome.output_bytes == 200000
    assert outcome.status is RunStatus.EXITED
