"""Docker-only container facts: the challenge's limits as seen from inside, the engine's networks, the model-only
arrangement (its relay answers, nothing else does). What every backend must do is in tests/sandbox/contract.py.
"""

from __future__ import annotations

import http.server
import ipaddress
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import docker
import pytest

from bench.errors import SandboxError
from bench.sandbox import RunOutcome, RunRequest, container_spec
from bench.sandbox.backends import IDLE_COMMAND, OWNER_LABEL, ProcessOutcome
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.layout import GATEWAY_ALIAS, RELAY_PORT
from bench.store import Store
from bench.suite.challenge import Environment, NetworkMode
from tests.sandbox.sandbox_helpers import make_tree

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

CGROUP_LIMITS = (
    "if [ -f /sys/fs/cgroup/cpu.max ]; then cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/memory.max; "
    "else echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); "
    "cat /sys/fs/cgroup/memory/memory.limit_in_bytes; fi"
)


def _run(backend: DockerBackend, image: str, environment: Environment, script: str, **kw: object) -> RunOutcome:
    spec = container_spec(image, environment, ("sh", "-c", script))
    request = {"spec": spec, "workspace": None, "timeout_seconds": 30, "read_back": False} | kw
    return backend.run(RunRequest.model_validate(request))


def test_cpu_and_memory_limits_hold_inside(backend: DockerBackend, tiny_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.NONE, cpus=0.5, memory_mb=96)
    quota, period, memory = _run(backend, tiny_image, environment, CGROUP_LIMITS).output.split()
    assert int(quota) / int(period) == 0.5
    assert int(memory) == 96 * 1024 * 1024


def test_memory_past_the_limit_is_killed(backend: DockerBackend, base_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=64)
    outcome = _run(backend, base_image, environment, "python3 -c 'x = bytearray(200 * 1024 * 1024)'")
    assert outcome.exit_code == 137 and outcome.outcome is ProcessOutcome.FAILED  # SIGKILL from the OOM killer


def test_network_none_has_only_loopback(backend: DockerBackend, tiny_image: str, environment: Environment) -> None:
    assert _run(backend, tiny_image, environment, "ls /sys/class/net").output.split() == ["lo"]


def test_network_public_has_an_interface(backend: DockerBackend, tiny_image: str) -> None:
    environment = Environment(network_mode=NetworkMode.PUBLIC, cpus=1.0, memory_mb=128)
    assert _run(backend, tiny_image, environment, "ls /sys/class/net").output.split() == ["eth0", "lo"]


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"model-answer\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def _stand_in_gateway(host: str) -> Iterator[int]:
    """A stand-in model endpoint in this process, listening only on ``host`` (as the real gateway does)."""
    server = http.server.ThreadingHTTPServer((host, 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def host_service() -> Iterator[int]:
    """A host service listening on every address: what a container on the arm network must not reach."""
    with socket.create_server(("0.0.0.0", 0)) as server:
        yield server.getsockname()[1]


def test_model_only_reaches_the_gateway_and_nothing_else(
    engine: docker.DockerClient, store: Store, backend: DockerBackend, base_image: str, host_service: int
) -> None:
    environment = Environment(network_mode=NetworkMode.MODEL_ONLY, cpus=1.0, memory_mb=128)
    spec = container_spec(base_image, environment, IDLE_COMMAND)
    with backend.model_network(base_image) as network, _stand_in_gateway(network.host_address) as port:
        network.start_relay(port)
        bridge = engine.networks.get("bridge").attrs["IPAM"]["Config"][0]  # names only its subnet: the first host
        docker0 = str(bridge.get("Gateway") or next(ipaddress.ip_network(bridge["Subnet"]).hosts()))
        targets = [(network.host_address, port), (network.host_address, host_service), (docker0, host_service)]
        probe = (
            "import socket, sys, urllib.request\n"
            f"print(urllib.request.urlopen('http://{GATEWAY_ALIAS}:{RELAY_PORT}/v1', timeout=5).read().decode())\n"
            f"for host, port in {targets!r}:\n"
            "    try: socket.create_connection((host, port), timeout=2).close(); print('open')\n"
            "    except OSError: print('unreachable')\n"
        )
        with backend.session(spec, make_tree(store, {}), network=network) as box:
            result = box.exec(("python3", "-c", probe), time.monotonic() + 60)
    assert result.outcome is ProcessOutcome.SUCCEEDED, result.stderr
    assert result.stdout.decode().split() == ["model-answer", "unreachable", "unreachable", "unreachable"]
    mine = {"label": f"{OWNER_LABEL}={backend.lease.owner}"}
    assert not engine.networks.list(filters=mine) and not engine.containers.list(all=True, filters=mine)


def test_a_model_network_is_given_to_model_only_containers_only(
    store: Store, backend: DockerBackend, tiny_image: str
) -> None:
    model_only = Environment(network_mode=NetworkMode.MODEL_ONLY, cpus=1.0, memory_mb=128)
    with (
        pytest.raises(SandboxError, match="needs a model network"),
        backend.session(container_spec(tiny_image, model_only, IDLE_COMMAND), make_tree(store, {})),
    ):
        pass
    none = Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=128)
    with (
        backend.model_network(tiny_image) as network,
        pytest.raises(SandboxError, match="network mode is none"),
        backend.session(container_spec(tiny_image, none, IDLE_COMMAND), make_tree(store, {}), network=network),
    ):
        pass
