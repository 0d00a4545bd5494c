"""A real Ray cluster on this machine: a head and worker nodes joining it, each a `ray start --block` of its own
process group (so killing a node is one killpg), each on its own loopback address, each offering one `docker`
unit over the machine's one Docker engine.

Ray turns 127.0.0.1 into the machine's routable address; 127.0.0.2 and up are loopback too and are kept as given,
so every connection of the cluster stays on loopback.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RayCluster", "RayNode"]

RAY = [sys.executable, "-m", "ray.scripts.scripts"]  # the `ray` command of this interpreter, wherever pip put it


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RayNode:
    ip: str
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL to the node's every process: raylet, workers, agents (as a lost machine would)."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=60)


@dataclass
class RayCluster:
    """Start with :meth:`start_head`, add nodes with :meth:`join`, stop everything with :meth:`stop`."""

    environment: Mapping[str, str]  # what every node's processes (and so every task) see
    work: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp")))  # short: sockets
    gcs_port: int = field(default_factory=_free_port)
    client_port: int = field(default_factory=_free_port)
    nodes: list[RayNode] = field(default_factory=list)

    @property
    def head_ip(self) -> str:
        return "127.0.0.2"

    @property
    def client_address(self) -> str:
        """What ``--executor`` takes: the head's Ray client server."""
        return f"ray://{self.head_ip}:{self.client_port}"

    def _start(self, ip: str, options: list[str], cache: Path) -> RayNode:
        log = self.work / f"node-{ip}-{len(self.nodes)}.log"
        command = [*RAY, "start", "--block", f"--node-ip-address={ip}", "--num-cpus=1", "--disable-usage-stats"]
        command += ["--object-store-memory=100000000", '--resources={"docker": 1}', *options]
        env = {**os.environ, **self.environment, "STELE_BENCH_STORE_CACHE": str(cache), "RAY_DEDUP_LOGS": "0"}
        with log.open("wb") as output:
            process = subprocess.Popen(
                command, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
            )
        node = RayNode(ip, process, log)
        self.nodes.append(node)
        return node

    def start_head(self) -> RayNode:
        options = [
            "--head",
            f"--port={self.gcs_port}",
            f"--ray-client-server-port={self.client_port}",
            "--include-dashboard=false",
            f"--temp-dir={self.work / 'tmp'}",
        ]
        node = self._start(self.head_ip, options, self.work / "cache-head")
        self.wait_for(1)
        return node

    def join(self, ip: str) -> RayNode:
        node = self._start(ip, [f"--address={self.head_ip}:{self.gcs_port}"], self.work / f"cache-{ip}")
        self.wait_for(sum(1 for n in self.nodes if n.process.poll() is None))
        return node

    def wait_for(self, nodes: int, timeout: float = 240.0) -> None:
        """Until ``nodes`` live nodes offer ``docker`` (a lost node leaves the count when the head notices)."""
        deadline = time.monotonic() + timeout
        status = ""
        while time.monotonic() < deadline:
            done = subprocess.run(
                [*RAY, "status", f"--address={self.head_ip}:{self.gcs_port}"],
                env={**os.environ, **self.environment},
                capture_output=True,
                text=True,
                timeout=120,
            )
            status = done.stdout
            found = re.search(r"/(\d+(?:\.\d+)?) docker", status)
            if found and float(found.group(1)) == nodes:
                return
            time.sleep(2)
        logs = "\n".join(node.log.read_text()[-1500:] for node in self.nodes)
        raise RuntimeError(f"the Ray cluster did not reach {nodes} docker nodes:\n{status}\n{logs}")

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()
        shutil.rmtree(self.work, ignore_errors=True)
