"""The store contract on S3-compatible object storage (a real SeaweedFS on loopback), with and without the local
cache, and what only a remote store does: conditional writes between processes, the cache's epoch, locations."""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import boto3
import botocore.config
import pytest
from s3server import BUCKET, S3Server
from store_contract import StoreContract, action_result

from bench.builder import StageContext, execute
from bench.builder.execution import action_key, cached_result
from bench.contracts import Digest
from bench.errors import StoreError
from bench.stages.directory_tree import directory_fingerprint, directory_tree
from bench.store import Store
from bench.store.actions import record, recorded_from, results_for
from bench.store.backends.s3 import S3Backend
from bench.store.gc import gc
from bench.store.location import store_location

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

REPO = Path(__file__).resolve().parents[2]


def _backend(store: Store) -> S3Backend:
    assert isinstance(store.backend, S3Backend)
    return store.backend


def _object_key(store: Store, digest: Digest) -> str:
    return _backend(store).layout.object_key(digest)


def flip_remote_byte(server: S3Server, store: Store, digest: Digest) -> None:
    """A flipped bit in the bucket: the same key, metadata kept, one byte changed."""
    client: Any = server.client()
    key = _object_key(store, digest)
    stored = client.get_object(Bucket=BUCKET, Key=key)
    data = bytearray(stored["Body"].read())
    data[len(data) // 2] ^= 0x80
    client.put_object(Bucket=BUCKET, Key=key, Body=bytes(data), Metadata=stored["Metadata"])


class TestS3Store(StoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, s3_server: S3Server) -> None:
        self.server = s3_server

    def open_store(self, tmp_path: Path) -> Store:
        bucket, _, prefix = self.server.location()[len("s3://") :].partition("/")
        return Store(S3Backend(bucket, prefix, cache_root=None))

    def corrupt(self, store: Store, digest: Digest) -> None:
        flip_remote_byte(self.server, store, digest)

    def lose(self, store: Store, digest: Digest) -> None:
        client: Any = self.server.client()
        client.delete_object(Bucket=BUCKET, Key=_object_key(store, digest))
        cache = _backend(store).cache
        if cache is not None:
            cache.forget([digest])


class TestCachedS3Store(TestS3Store):
    """The same contract through the local cache every node keeps in front of the bucket."""

    def open_store(self, tmp_path: Path) -> Store:
        bucket, _, prefix = self.server.location()[len("s3://") :].partition("/")
        return Store(S3Backend(bucket, prefix, cache_root=tmp_path / "cache"))

    def corrupt(self, store: Store, digest: Digest) -> None:
        flip_remote_byte(self.server, store, digest)
        cache = _backend(store).cache
        assert cache is not None
        cache.forget([digest])  # the medium is the bucket: a node that had a good copy keeps serving it


# -- between processes: what two workers on two nodes do -------------------------------------------------------


def _increment(location: str, times: int) -> int:
    store = Store(location)
    done = conflicts = 0
    while done < times:
        seen = store.get_ref("counter")
        assert seen is not None
        following = store.put_bytes(str(int(store.get_bytes(seen)) + 1).encode())
        if store.compare_and_set_ref("counter", seen, following):
            done += 1
        else:
            conflicts += 1
    return conflicts


def _record_results(location: str, seed: int) -> list[str]:
    store = Store(location)
    output = store.put_bytes(b"the same output")
    results = [action_result(store, "shared key", {"out": output}, started=seed * 100.0 + i) for i in range(5)]
    return [str(record(store, result)) for result in results]


def test_workers_in_several_processes_never_lose_a_ref_move_and_leave_one_result(s3_server: S3Server) -> None:
    location = s3_server.location("processes")
    store = Store(location)
    store.set_ref("counter", store.put_bytes(b"0"))
    with ProcessPoolExecutor(max_workers=4, mp_context=multiprocessing.get_context("forkserver")) as pool:
        conflicts = list(pool.map(_increment, [location] * 4, [10] * 4))
        recorded = list(pool.map(_record_results, [location] * 4, range(4)))
    counter = store.get_ref("counter")
    assert counter is not None and store.get_bytes(counter) == b"40", f"conflicts resolved: {conflicts}"
    every = {result for results in recorded for result in results}
    key = action_result(store, "shared key", {}).key
    assert len(every) == 1, "20 results of one key, recorded by 4 processes at once: each learns the one that stands"
    assert results_for(store, key) == [Digest(every.pop())]
    assert [result.key for result in recorded_from(store, 0.0)] == [key], "the losers left no log entry"


# -- the cache -----------------------------------------------------------------------------------------------


def _tree_invocation(store: Store, source: Path) -> tuple[Digest, Digest]:
    params = {"directory": str(source), "fingerprint": directory_fingerprint(source)}
    outcome = execute(StageContext(store), directory_tree, {}, params)
    return outcome.key, outcome.outputs["tree"]


def test_a_cached_action_is_found_without_asking_the_bucket(s3_server: S3Server, tmp_path: Path) -> None:
    location = s3_server.location("cache")
    bucket, _, prefix = location[len("s3://") :].partition("/")
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.txt").write_text("cached")
    writer = Store(S3Backend(bucket, prefix, cache_root=tmp_path / "cache"))
    key, tree = _tree_invocation(writer, source)

    rerun = Store(S3Backend(bucket, prefix, cache_root=tmp_path / "cache"))
    dead = botocore.config.Config(retries={"max_attempts": 1}, connect_timeout=2)
    unreachable = boto3.client("s3", endpoint_url="http://127.0.0.1:9", region_name="us-east-1", config=dead)
    _backend(rerun).bucket._made = (os.getpid(), unreachable)  # from here on every remote request fails
    params = directory_tree.parse_params({"directory": str(source), "fingerprint": directory_fingerprint(source)})
    assert action_key(rerun, directory_tree, {}, params) == key
    cached = cached_result(rerun, key)
    assert cached is not None and cached[1].outputs == {"tree": tree}
    with pytest.raises(StoreError, match=re.escape("127.0.0.1:9")):
        rerun.get_ref("anything")  # refs are never cached: this one had to ask, and could not


def test_gc_starts_every_node_on_a_fresh_cache(s3_server: S3Server, tmp_path: Path) -> None:
    location = s3_server.location("epoch")
    bucket, _, prefix = location[len("s3://") :].partition("/")
    node = Store(S3Backend(bucket, prefix, cache_root=tmp_path / "cache"))
    garbage = node.put_bytes(b"nobody points here")
    assert node.has(garbage)
    assert gc(Store(S3Backend(bucket, prefix, cache_root=None)), grace_seconds=0).deleted == 1
    reopened = Store(S3Backend(bucket, prefix, cache_root=tmp_path / "cache"))
    assert not reopened.has(garbage), "a copy cached before gc must not outlive it"
    cache = _backend(reopened).cache
    assert cache is not None and cache.directory != _backend(node).cache.directory  # type: ignore[union-attr]


def test_a_write_seen_by_another_node_is_read_back_whole(s3_server: S3Server, tmp_path: Path) -> None:
    location = s3_server.location("nodes")
    bucket, _, prefix = location[len("s3://") :].partition("/")
    one = Store(S3Backend(bucket, prefix, cache_root=tmp_path / "one"))
    other = Store(S3Backend(bucket, prefix, cache_root=tmp_path / "other"))
    big = os.urandom(3 * 1024 * 1024)
    digest = one.put_bytes(big)
    one.set_ref("shared", digest)
    assert other.get_ref("shared") == digest and other.get_bytes(digest) == big
    assert other.compare_and_set_ref("shared", digest, other.put_bytes(b"moved"))
    assert not one.compare_and_set_ref("shared", digest, one.put_bytes(b"stale")), "the other node moved it"


# -- locations -----------------------------------------------------------------------------------------------


def test_a_location_names_the_same_store_everywhere(s3_server: S3Server, tmp_path: Path) -> None:
    location = s3_server.location("location")
    assert store_location(location + "/") == location
    assert store_location("relative-store") == str(Path("relative-store").resolve())
    store = Store(location)
    assert isinstance(store.backend, S3Backend) and store.location == location
    for bad, named in (("s3://A_B/p", "not an S3 bucket name"), ("gs://bucket/p", "unknown scheme")):
        with pytest.raises(StoreError, match=named):
            Store(bad)
    with pytest.raises(StoreError, match="cannot be a key"):
        store.set_ref("a//b", store.put_bytes(b"x"))


def test_every_store_command_takes_an_s3_location(s3_server: S3Server, tmp_path: Path) -> None:
    location = s3_server.location("cli")
    env = {**os.environ, "STELE_BENCH_STORE_CACHE": str(tmp_path / "cache")}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "bench", "--store", location, *args]
        return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)

    (tmp_path / "file.txt").write_text("through the bucket\n")
    put = cli("store", "put", str(tmp_path / "file.txt"))
    assert put.returncode == 0, put.stderr
    digest = put.stdout.split()[0]
    assert cli("store", "cat", digest).stdout == "through the bucket\n"
    assert cli("store", "fsck").returncode == 0
    listed = boto3.client("s3").list_objects_v2(Bucket=BUCKET, Prefix=location.split("/", 3)[3] + "/objects/")
    assert listed["KeyCount"] == 1
    refused = cli("store", "cat", str(Digest.of(b"never stored")))
    assert refused.returncode != 0 and "is not in the store" in refused.stderr
