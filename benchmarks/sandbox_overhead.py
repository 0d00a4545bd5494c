"""Sandbox runner overhead against the bare engine, on an 11,000-file workspace (ratios: ours / peer).

1. Per arm, no-op agent: the runner's whole arm (create, tar stream in from the store, run `true`, stream back
   out hashed into a tree, remove) vs `docker run --rm IMAGE true` plus `docker cp` of the same workspace in and
   out. Target at most 2x.
2. Audit: the workspace plus a 20,000-file build directory read back into a tree and audited against the start
   tree, vs `docker cp` of the same workspace out of the same container. Target at most 1.5x.

Medians over a few repetitions; the store is fresh for every repetition (start tree pre-loaded, untimed).
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.contracts import PortablePath
from bench.images import ImageName, build_image
from bench.sandbox import RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend, docker_client
from bench.sandbox.layout import USER_GID, USER_UID, WORKSPACE
from bench.sandbox.tarpipe import chunk_stream, tree_chunks
from bench.stages.audit import audit_trees
from bench.store import Store, tree_from_directory, tree_from_tar
from bench.suite.challenge import Environment, NetworkMode
from benchmarks.corpus_gen import generate_tree

REPETITIONS = 3
ENVIRONMENT = Environment(network_mode=NetworkMode.NONE, cpus=2.0, memory_mb=2048)


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def docker(*argv: str) -> str:
    return subprocess.run(["docker", *argv], check=True, capture_output=True, text=True).stdout.strip()


def peer_arm(image: str, workspace: Path, scratch: Path) -> float:
    """`docker run --rm IMAGE true` plus `docker cp` of the workspace into a container and back out."""
    run = timed(lambda: docker("run", "--rm", "--network", "none", image, "true"))
    container = docker("create", "--network", "none", image, "true")
    try:
        out = scratch / "peer-out"
        copy_in = timed(lambda: docker("cp", f"{workspace}/.", f"{container}:{WORKSPACE}"))
        copy_out = timed(lambda: docker("cp", f"{container}:{WORKSPACE}", str(out)))
        shutil.rmtree(out)
    finally:
        docker("rm", "-f", container)
    return run + copy_in + copy_out


def our_arm(image: str, workspace: Path, scratch: Path) -> float:
    store = Store(scratch / "store-arm")
    tree = tree_from_directory(store, workspace)
    spec = container_spec(image, ENVIRONMENT, ("true",))
    backend = DockerBackend(store)
    seconds = timed(lambda: backend.run(RunRequest(spec=spec, workspace=tree, timeout_seconds=600)))
    shutil.rmtree(scratch / "store-arm")
    return seconds


def audit_pair(image: str, workspace: Path, build: Path, scratch: Path) -> tuple[float, float]:
    """One container holding workspace + build directory: our read-back and audit vs `docker cp` out."""
    store = Store(scratch / "store-audit")
    start = tree_from_directory(store, workspace)
    final_dir = scratch / "final"
    shutil.copytree(workspace, final_dir, symlinks=True)
    shutil.copytree(build, final_dir / "target", symlinks=True)
    staging = Store(scratch / "store-staging")  # the agent's files must be new to the store being timed
    final = tree_from_directory(staging, final_dir)
    container = docker_client().containers.create(image, ["true"], network_mode="none")
    try:
        container.put_archive("/", tree_chunks(staging, final, prefix="workspace", uid=USER_UID, gid=USER_GID))

        def ours() -> None:
            chunks, _ = container.get_archive(WORKSPACE)
            back = tree_from_tar(store, chunk_stream(chunks), strip="workspace")
            receipt = audit_trees(store, start, back, (PortablePath("target"),))
            assert back == final and not receipt.reward_forced_zero

        out = scratch / "peer-out"
        peer = timed(lambda: docker("cp", f"{container.id}:{WORKSPACE}", str(out)))
        mine = timed(ours)
        shutil.rmtree(out)
    finally:
        container.remove(force=True)
        for name in ("final", "store-audit", "store-staging"):
            shutil.rmtree(scratch / name)
    return mine, peer


def main() -> None:
    image = build_image(ImageName.TINY).record.image_id
    work = Path(tempfile.mkdtemp(prefix="sandbox-bench-"))
    try:
        workspace, build = work / "workspace", work / "build"
        size = generate_tree(workspace, 11_000, 80 * 1024 * 1024)
        build_size = generate_tree(build, 20_000, 30 * 1024 * 1024, seed=11)
        print(f"workspace: 11,000 files, {size / 1e6:.0f} MB; build directory: 20,000 files, {build_size / 1e6:.0f} MB")
        our_arm(image, workspace, work)  # warm the engine and page cache
        arms = [(our_arm(image, workspace, work), peer_arm(image, workspace, work)) for _ in range(REPETITIONS)]
        audits = [audit_pair(image, workspace, build, work) for _ in range(REPETITIONS)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for title, pairs, target in (("per-arm overhead", arms, 2.0), ("read-back + audit", audits, 1.5)):
        mine = statistics.median(pair[0] for pair in pairs)
        peer = statistics.median(pair[1] for pair in pairs)
        print(f"{title}: ours {mine:.2f}s, peer {peer:.2f}s, ratio {mine / peer:.2f}x (target <= {target}x)")
    # Ours runs in this process (the engine client and the store are this process's), so its peak is this one's.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process (our side of every row): {peak:.0f} MB")


if __name__ == "__main__":
    main()
