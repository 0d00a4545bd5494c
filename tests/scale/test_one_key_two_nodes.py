"""One key on two nodes at once: a real two-node Ray cluster on this machine over a SeaweedFS store, both nodes
executing the same invocation at the same moment (tests/scale/one_key.py): one computes it, the other waits on its
claim and takes its result, and the store keeps one result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from ray_cluster import RayCluster
from s3server import S3Server

from bench.contracts import Digest
from bench.store import Store
from bench.store.actions import recorded_from, results_for

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

REPO = Path(__file__).resolve().parents[2]


def test_one_key_on_two_nodes_at_once_is_computed_once_and_kept_once(s3_server: S3Server) -> None:
    path = os.pathsep.join(part for part in (str(REPO), os.environ.get("PYTHONPATH", "")) if part)
    environment = {**s3_server.environment, "PYTHONPATH": path, "STELE_BENCH_ROOT": str(REPO)}
    location = s3_server.location("one-key")
    cluster = RayCluster(environment)
    try:
        cluster.start_head()
        cluster.join("127.0.0.3")
        done = subprocess.run(
            [sys.executable, "-m", "tests.scale.one_key", cluster.client_address, location],
            cwd=REPO,
            env={**os.environ, **environment},
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        cluster.stop()
    assert done.returncode == 0, done.stderr[-4000:]
    answers = json.loads(done.stdout.splitlines()[-1].removeprefix("ANSWERS "))
    assert {answer["node"] for answer in answers} == {"127.0.0.2", "127.0.0.3"}, "one task on each node"
    assert sorted(answer["executed"] for answer in answers) == [False, True], "computed once"
    (result,) = {answer["result"] for answer in answers}
    (echo,) = {answer["echo"] for answer in answers}
    computer = next(answer["node"] for answer in answers if answer["executed"])
    assert echo == f"one key computed on {computer}", "the waiter took the computer's result"
    store = Store(location)
    key = Digest(answers[0]["key"])
    assert results_for(store, key) == [Digest(result)]
    assert [str(recorded.key) for recorded in recorded_from(store, 0.0)] == [str(key)], "one result in the log"
    assert store.backend.claimant(key) is None, "the claim was released"
