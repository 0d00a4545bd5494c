"""The model-only arrangement on Docker: an arm network whose one reachable peer is a relay to the runner's gateway.

Why a relay. The gateway is runner code (pydantic, the store); the images have neither, and putting the runner's
code and environment into a container the agent's network can reach would widen what the agent can touch. So the
gateway runs in the runner process and a relay container forwards TCP to it. The relay is a few lines of
standard-library Python on the agent image's python3 and holds nothing but the gateway's address.

Two engine networks per arm run:

- the *arm network*: internal (no route out) and with ``inhibit_ipv4``, so the host has no address on its bridge.
  On Docker 20.10 a plain internal network still gives the host an address on the bridge, and a container on it
  reached every host service listening on all addresses (measured: the bridge address and 172.17.0.1 both
  answered). Without a host address there is nothing but the other containers on the network: the relay, which
  answers as :data:`~bench.sandbox.layout.GATEWAY_ALIAS` on :data:`~bench.sandbox.layout.RELAY_PORT`.
- the *uplink*: internal as well (the relay needs no egress), but with the host address kept; the gateway listens
  on exactly that address, so nothing else on the host, and nothing on the arm network, can reach it directly.

Both networks and the relay carry the runner's lease labels (so a sweep finds them after a crash) and are removed
on every way out of :func:`docker_model_network`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ....errors import SandboxError
from ....stopping import stop_deferred
from ...layout import GATEWAY_ALIAS, RELAY_PORT, USER
from ..base import ModelNetwork
from .engine import NO_HOST_ADDRESS, Client, Container, created, engine_errors, remove_container, remove_network

__all__ = ["DockerModelNetwork", "docker_model_network"]

_READY = "ready"
_READY_SECONDS = 20.0
_RELAY = f"""
import socket, sys, threading
target = (sys.argv[1], int(sys.argv[2]))
def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for end in (src, dst):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
def serve(client):
    try:
        upstream = socket.create_connection(target, timeout=10)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    pump(upstream, client)
listener = socket.create_server(("0.0.0.0", {RELAY_PORT}), backlog=64)
print("{_READY}", flush=True)
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


class DockerModelNetwork(ModelNetwork):
    """The two networks of one arm run; start the relay once the gateway listens on ``host_address``."""

    def __init__(
        self, client: Client, image_id: str, uplink: Any, arm: Any, host_address: str, labels: Mapping[str, str]
    ) -> None:
        self.client = client
        self.image_id = image_id
        self.uplink = uplink
        self.arm = arm
        self.arm_network = str(arm.name)  # the engine network an arm container joins
        self.host_address = host_address
        self.labels = dict(labels)
        self.relay: Container | None = None

    def start_relay(self, gateway_port: int) -> None:
        with engine_errors("starting the model relay"), stop_deferred():  # held before a stop unwinds (created())
            relay = self.client.containers.create(
                self.image_id,
                ["python3", "-c", _RELAY, self.host_address, str(gateway_port)],
                user=USER,
                network=self.uplink.name,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                labels=self.labels,
            )
            self.relay = relay
            self.arm.connect(relay, aliases=[GATEWAY_ALIAS])
            relay.start()
        deadline = time.monotonic() + _READY_SECONDS
        with engine_errors("waiting for the model relay"):
            while _READY not in relay.logs().decode("utf-8", "replace"):
                relay.reload()
                if relay.status == "exited" or time.monotonic() > deadline:
                    output = relay.logs().decode("utf-8", "replace")[-2000:]
                    raise SandboxError(f"the model relay did not start listening (status {relay.status}): {output}")
                time.sleep(0.05)


def _network(client: Client, options: dict[str, str] | None, labels: Mapping[str, str]) -> Any:
    with engine_errors("creating a network"):
        return client.networks.create(
            f"net-{secrets.token_hex(6)}", driver="bridge", internal=True, options=options, labels=dict(labels)
        )


def _host_address(network: Any) -> str:
    with engine_errors(f"inspecting network {network.name}"):
        network.reload()
    configs = network.attrs.get("IPAM", {}).get("Config") or []
    gateway = configs[0].get("Gateway") if configs else None
    if not gateway:
        raise SandboxError(f"network {network.name} has no host address; the engine's IPAM gave {configs}")
    return str(gateway).split("/", 1)[0]


@contextmanager
def docker_model_network(client: Client, image_id: str, labels: Mapping[str, str]) -> Iterator[DockerModelNetwork]:
    """Make the uplink and the arm network; remove the relay and both networks on every way out."""
    with (
        created(lambda: _network(client, None, labels), remove_network) as uplink,
        created(lambda: _network(client, NO_HOST_ADDRESS, labels), remove_network) as arm,
    ):
        network = DockerModelNetwork(client, image_id, uplink, arm, _host_address(uplink), labels)
        try:
            yield network
        finally:
            if network.relay is not None:
                remove_container(network.relay)
