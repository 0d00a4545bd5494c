"""The bundled suite on a two-node Ray cluster (a head and a node joining it, on this machine) over a SeaweedFS
store: one node is killed while it runs a paired attempt, the run completes, and its publication equals a local
run's and verifies; a rerun through the cluster executes no stage.

doit plans and the Ray executor runs every invocation (`doit executor=ray://HEAD:PORT`), as `stele-bench run
SUITE --executor ray://HEAD:PORT` does. One module-scoped scenario serves every test: the whole run is minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from bundle_facts import bundle_facts
from demo_runs import DemoRuns
from ray_cluster import RayCluster, RayNode
from s3server import S3Server

from bench.images import ImageName, build_image
from bench.publish.manifest import MANIFEST_NAME
from bench.publish.verification import Trust, verify
from bench.run.catalogue import STAGES
from bench.store import Store, export_tree
from bench.store.actions import ActionKey, ActionResult, recorded_from, results_for
from bench.store.backends.s3 import S3Backend
from bench.store.fsck import FsckStatus, fsck

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

REPO = Path(__file__).resolve().parents[2]
PLAN = "manifests/plans/example.json"
RUN_TIMEOUT = 1800.0
# What a task prints on its node (Ray forwards it to the driver as it happens), and what the driver prints after.
RUNNING = re.compile(r"(127\.0\.0\.\d+) \([0-9a-f]+\): running (\S+) \((\S+)\)")
FINISHED = re.compile(r"^(ran|cached) (\S+) on (127\.0\.0\.\d+) \(")
ATTEMPT = "paired-attempt"  # the stage that runs the arms: the one a killed node must not make anyone pay twice


@dataclass
class ClusterRun:
    lines: list[str]
    executed: list[str]  # stages recorded in the store's action log during the run
    killed: str | None = None  # the invocation the killed node was running

    def started_on(self, invocation: str) -> set[str]:
        return {m.group(1) for line in self.lines if (m := RUNNING.search(line)) and m.group(2) == invocation}

    def finished(self) -> list[tuple[str, str, str]]:
        return [(m.group(1), m.group(2), m.group(3)) for line in self.lines if (m := FINISHED.match(line))]


def _bucket_store(location: str) -> Store:
    bucket, _, prefix = location[len("s3://") :].partition("/")
    return Store(S3Backend(bucket, prefix, cache_root=None))


def _doit(cluster: RayCluster, location: str, database: Path, kill: RayNode | None = None) -> ClusterRun:
    """doit through the cluster; with ``kill``, that node dies as soon as it starts a paired attempt."""
    command = [sys.executable, "-m", "doit", "-n", "2", "-P", "thread", f"plan={PLAN}", f"store={location}"]
    command += [f"executor={cluster.client_address}", "attempts=1"]
    env = {
        **os.environ,
        **cluster.environment,
        "STELE_BENCH_DOIT_DB": str(database),
        "STELE_BENCH_STORE_CACHE": str(database.parent / "driver-cache"),
        "PYTHONUNBUFFERED": "1",
        "PYTHONFAULTHANDLER": "1",  # a crash of the driver says where
    }
    database.parent.mkdir(parents=True, exist_ok=True)
    started = time.time()
    run = ClusterRun(lines=[], executed=[])
    with subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as process:
        watchdog = threading.Timer(RUN_TIMEOUT, process.kill)
        watchdog.start()
        assert process.stdout is not None
        for line in process.stdout:
            run.lines.append(line.rstrip("\n"))
            found = RUNNING.search(line)
            if kill and not run.killed and found and found.group(1) == kill.ip and found.group(3) == ATTEMPT:
                kill.kill()
                run.killed = found.group(2)
        watchdog.cancel()
    (database.parent / "doit.log").write_text(f"{time.time() - started:.1f} s\n" + "\n".join(run.lines))
    assert process.returncode == 0, "\n".join(run.lines[-80:])
    store = _bucket_store(location)
    run.executed = [store.get_document(result.key, ActionKey).stage for result in recorded_from(store, started)]
    return run


@dataclass
class Scenario:
    location: str
    first: ClusterRun
    rerun: ClusterRun
    published: Path
    local: Path
    local_store: Path


@pytest.fixture(scope="module")
def scenario(s3_server: S3Server, demo_runs: DemoRuns, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    tmp = tmp_path_factory.mktemp("cluster")
    for name in (ImageName.BASE, ImageName.AGENT):
        build_image(name)  # reused when built; every node of this cluster shares this machine's engine
    environment = {**s3_server.environment, "STELE_BENCH_ROOT": str(REPO)}
    if "PYTHONPATH" in os.environ:
        environment["PYTHONPATH"] = os.environ["PYTHONPATH"]
    cluster = RayCluster(environment)
    try:
        cluster.start_head()
        second = cluster.join("127.0.0.3")
        location = s3_server.location("suite")
        first = _doit(cluster, location, tmp / "first" / "doit.sqlite", kill=second)
        cluster.wait_for(1)
        cluster.join("127.0.0.3")  # a fresh node takes the lost one's place
        rerun = _doit(cluster, location, tmp / "rerun" / "doit.sqlite")  # a fresh doit DB: every task asks Ray
    finally:
        cluster.stop()
    store = _bucket_store(location)
    tree = store.get_ref("published/example")
    assert tree is not None
    export_tree(store, tree, tmp / "published")
    assert demo_runs.first.result["verified"]
    yield Scenario(location, first, rerun, tmp / "published", demo_runs.published, demo_runs.store)


def test_the_cluster_publishes_what_a_local_run_publishes_and_it_verifies(scenario: Scenario) -> None:
    verification = verify(scenario.published / MANIFEST_NAME, STAGES, Trust(unsigned=True))  # exported here, not signed
    assert verification.differences == [] and verification.claims
    cluster, local = bundle_facts(scenario.published), bundle_facts(scenario.local)
    assert cluster.keys() == local.keys() and len(cluster) > 4
    for name, facts in local.items():
        assert cluster[name] == facts, name
    assert {"paired-attempt", "calibrate", "grade", "publish"} <= set(scenario.first.executed)


def test_fsck_finds_the_clusters_s3_store_healthy(scenario: Scenario) -> None:
    """The demo's store on S3 (SeaweedFS), after a node died mid-attempt: no value taken for a missing reference."""
    report = fsck(_bucket_store(scenario.location))
    assert report.status is FsckStatus.CLEAN, (report.corrupt, report.missing)
    assert report.objects > 500


def test_progress_on_the_head_shows_which_node_runs_what(scenario: Scenario) -> None:
    nodes = {node for verb, _, node in scenario.first.finished() if verb == "ran"}
    assert nodes == {"127.0.0.2", "127.0.0.3"}, scenario.first.finished()


def _attempts(store: Store) -> list[ActionResult]:
    recorded = recorded_from(store, 0.0)
    return [result for result in recorded if store.get_document(result.key, ActionKey).stage == ATTEMPT]


def test_a_node_killed_mid_attempt_loses_nothing_and_repays_no_completed_attempt(scenario: Scenario) -> None:
    first = scenario.first
    assert first.killed is not None, "the second node never ran an attempt"
    assert first.started_on(first.killed) == {"127.0.0.3", "127.0.0.2"}, "retried on the head after the kill"
    store = _bucket_store(scenario.location)
    attempts = _attempts(store)
    assert len(attempts) == len(_attempts(Store(scenario.local_store))), "every attempt, the killed one included"
    for attempt in attempts:
        assert len(results_for(store, attempt.key)) == 1, "no attempt was paid for twice"
    ran = [node for verb, stage, node in first.finished() if verb == "ran" and stage == ATTEMPT]
    assert len(ran) == len(attempts), "the killed attempt finished once, on the node that took it over"


def test_a_rerun_through_the_cluster_executes_no_stage(scenario: Scenario) -> None:
    rerun = scenario.rerun
    assert rerun.executed == []
    finished = rerun.finished()
    assert finished and all(verb == "cached" for verb, _, _ in finished)
    assert len(finished) == len(scenario.first.finished()), "every invocation was asked, and every one was cached"
