"""The model-only network from inside an arm container: the relay to the gateway answers, nothing else does.

Also: the relay, the networks and the arm container are gone after the block, on a normal exit and on Ctrl-C.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import PurePosixPath

import docker
import pytest
from agent_scenario import Inputs, challenge, workspace_tree

from bench.agent import ArmRun, arm_spec
from bench.agent.arm import arm_gateway
from bench.agent.harness_files import home_dirs
from bench.agent.recorder import StoreRecorder, read_exchange_log
from bench.gateway import Mode
from bench.harness import harness_named
from bench.sandbox.backends import OWNER_LABEL, ProcessOutcome
from bench.sandbox.backends.docker import DockerBackend, DockerModelNetwork
from bench.sandbox.layout import GATEWAY_ALIAS

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

# Run inside the arm container: try every way out and print what answered.
PROBE = """
import json, os, socket, sys, threading, urllib.error, urllib.request
try:
    found = {"relay": urllib.request.urlopen("http://api:8080/", timeout=5).status}
except urllib.error.HTTPError as exc:  # the gateway answers a keyless request as the provider does: 401
    found = {"relay": exc.code}
def connect(name, host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        found[name] = "open"
    except OSError as exc:
        found[name] = type(exc).__name__
def resolve():
    try:
        found["dns"] = socket.gethostbyname("example.com")
    except OSError as exc:
        found["dns"] = type(exc).__name__
tries = [threading.Thread(target=connect, args=(name, *where)) for name, where in json.loads(sys.argv[1]).items()]
tries.append(threading.Thread(target=resolve, daemon=True))
for attempt in tries:
    attempt.start()
for attempt in tries:
    attempt.join(3)  # the engine's resolver retries upstream servers for 10 s before it gives up
found.setdefault("dns", "no-answer")
print(json.dumps(found), flush=True)
os._exit(0)  # not waiting for a lookup still retrying
"""


@pytest.fixture
def host_service() -> Iterator[int]:
    """A host service listening on every address: what a container on the arm network must not reach."""
    with socket.create_server(("0.0.0.0", 0)) as server:
        yield server.getsockname()[1]


@pytest.fixture
def run(inputs: Inputs, backend: DockerBackend) -> ArmRun:
    store = inputs.store
    return ArmRun(backend, workspace_tree(store), challenge(), "m", Mode.POLICY, policy=store.get_bytes(inputs.policy))


def test_only_the_relay_answers_inside_an_arm_container(
    run: ArmRun, engine: docker.DockerClient, agent_image: str, host_service: int
) -> None:
    spec = arm_spec(run, agent_image, None)
    recorder = StoreRecorder(run.store)
    with (
        run.backend.model_network(agent_image) as network,
        arm_gateway(run, "control", Decimal(0), recorder, network.host_address) as gateway,
    ):
        port = int(gateway.url.rsplit(":", 1)[1])
        assert isinstance(network, DockerModelNetwork)
        network.start_relay(port)
        targets = {
            "gateway-direct": (network.host_address, port),
            "uplink-host": (network.host_address, host_service),
            "arm-bridge-host": (_bridge_address(engine, network.arm_network), host_service),
            "docker0-host": (_bridge_address(engine, "bridge"), host_service),
            "internet": ("1.1.1.1", 443),
        }
        with run.backend.session(spec, run.start, home_dirs(harness_named("claude-code")), network) as box:
            result = box.exec(("python3", "-c", PROBE, json.dumps(targets)), time.monotonic() + 60)
    assert result.outcome is ProcessOutcome.SUCCEEDED, result.stderr
    found = json.loads(result.stdout)
    assert found.pop("relay") == 401 and found.pop("dns") in ("gaierror", "no-answer")
    assert set(found) == set(targets) and "open" not in found.values(), found
    probes = [e for e in read_exchange_log(run.store, recorder.finish()) if e.path == "/"]
    assert len(probes) == 1 and GATEWAY_ALIAS in probes[0].request_headers["host"]


def _bridge_address(engine: docker.DockerClient, name: str) -> str:
    """The host's address on a network's bridge (the default bridge names only its subnet: the first host)."""
    config = engine.networks.get(name).attrs["IPAM"]["Config"][0]
    return str(config.get("Gateway") or next(ipaddress.ip_network(config["Subnet"]).hosts()))


def _owned(engine: docker.DockerClient, owner: str) -> set[str]:
    mine = {"label": f"{OWNER_LABEL}={owner}"}
    containers = {c.id for c in engine.containers.list(all=True, filters=mine)}
    return containers | {n.id for n in engine.networks.list(filters=mine)}


def test_ctrl_c_inside_an_arm_leaves_nothing_behind(run: ArmRun, engine: docker.DockerClient, agent_image: str) -> None:
    owner = run.backend.lease.owner
    before = _owned(engine, owner)
    spec = arm_spec(run, agent_image, None)
    with pytest.raises(KeyboardInterrupt), run.backend.model_network(agent_image) as network:
        network.start_relay(9)
        with run.backend.session(spec, run.start, home_dirs(harness_named("claude-code")), network) as box:
            assert box.read_file(PurePosixPath("/workspace/notes.txt")) == b"alpha beta\n"
            assert len(_owned(engine, owner) - before) == 4  # two networks, the relay, the arm container
            raise KeyboardInterrupt
    assert _owned(engine, owner) == before


def test_past_the_deadline_the_container_is_killed_and_the_workspace_still_read(run: ArmRun, agent_image: str) -> None:
    spec = arm_spec(run, agent_image, None)
    with (
        run.backend.model_network(agent_image) as network,
        run.backend.session(spec, run.start, home_dirs(harness_named("claude-code")), network) as box,
    ):
        box.exec(("sh", "-c", "echo done > /workspace/out.txt"), time.monotonic() + 30)
        slow = box.exec(("sleep", "30"), time.monotonic() + 1)
        after = box.exec(("true",), time.monotonic() + 30)
        final = box.read_back()
    assert slow.outcome is ProcessOutcome.TIMED_OUT and slow.exit_code is None  # killed, not waited out
    assert after.outcome is ProcessOutcome.TIMED_OUT  # a killed session runs nothing more
    assert final != run.start
