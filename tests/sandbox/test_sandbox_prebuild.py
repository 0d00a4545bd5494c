"""Prebuild: once, under the challenge's limits, over the redacted tree; a failure, or a start tree naming the
harness, stops the pair with a reason."""

from __future__ import annotations

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.errors import SandboxError
from bench.run.catalogue import services
from bench.sandbox import ProcessOutcome
from bench.sandbox.backends.docker import DockerBackend
from bench.stages.prebuild import PrebuildParams, prebuild, run_prebuild, start_tree
from bench.store import Store, walk_tree
from bench.suite.challenge import Environment, NetworkMode
from tests.sandbox.sandbox_helpers import make_tree

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

LIMITS = "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes"


def _params(image: str, argv: tuple[str, ...], **kw: object) -> PrebuildParams:
    environment = Environment(network_mode=NetworkMode.MODEL_ONLY, cpus=1.0, memory_mb=160, prebuild_argv=argv)
    return PrebuildParams(image_id=image, environment=environment, **kw)  # type: ignore[arg-type]


def test_prebuild_output_is_the_start_tree_and_runs_under_the_limits(
    store: Store, backend: DockerBackend, tiny_image: str
) -> None:
    redacted = make_tree(store, {"src/a.c": b"int main(){}\n"})
    argv = ("sh", "-c", f"mkdir -p build && ({LIMITS}) > build/limit && ls /sys/class/net > build/net")
    receipt = run_prebuild(backend, redacted, _params(tiny_image, argv))
    assert receipt.outcome is ProcessOutcome.SUCCEEDED and receipt.reason is None
    start = start_tree(receipt)
    files = {str(p): store.get_bytes(e.digest) for p, e in walk_tree(store, start) if p.startswith("build/")}
    assert files == {"build/limit": str(160 * 1024 * 1024).encode() + b"\n", "build/net": b"lo\n"}


def test_no_prebuild_argv_starts_from_the_redacted_tree(store: Store, backend: DockerBackend, tiny_image: str) -> None:
    redacted = make_tree(store, {"a": b"a"})
    receipt = run_prebuild(backend, redacted, _params(tiny_image, ()))
    assert receipt.outcome is None and start_tree(receipt) == redacted  # nothing to run


@pytest.mark.parametrize(
    ("argv", "timeout", "outcome", "reason"),
    [
        (("sh", "-c", "echo missing dependency >&2; exit 3"), 30.0, ProcessOutcome.FAILED, "exited 3"),
        (("sleep", "30"), 1.0, ProcessOutcome.TIMED_OUT, "deadline"),
    ],
)
def test_a_failed_prebuild_stops_the_pair_with_a_recorded_reason(
    store: Store,
    backend: DockerBackend,
    tiny_image: str,
    argv: tuple[str, ...],
    timeout: float,
    outcome: ProcessOutcome,
    reason: str,
) -> None:
    receipt = run_prebuild(backend, make_tree(store, {"a": b"a"}), _params(tiny_image, argv, timeout_seconds=timeout))
    assert receipt.outcome is outcome and receipt.start is None and reason in (receipt.reason or "")
    with pytest.raises(SandboxError, match="the pair is stopped"):
        start_tree(receipt)
    stored = store.put_document(receipt)
    assert store.get_document(stored, type(receipt)) == receipt


def test_a_prebuild_that_writes_the_harness_name_stops_the_pair(
    store: Store, backend: DockerBackend, tiny_image: str
) -> None:
    argv = ("sh", "-c", "mkdir -p build && printf 'ok\\nroot=/x/Stele_Bench/y\\n' > build/cache && touch stelebench.o")
    receipt = run_prebuild(backend, make_tree(store, {"a": b"a"}), _params(tiny_image, argv))
    assert receipt.outcome is ProcessOutcome.SUCCEEDED and receipt.start is None  # it ran; its output is refused
    reason = receipt.reason or ""
    assert "build/cache:2: stele_bench" in reason and "stelebench.o: stelebench" in reason


def test_the_prebuild_stage_runs_once(store: Store, tiny_image: str) -> None:
    redacted = make_tree(store, {"a": b"a"})
    params = _params(tiny_image, ("sh", "-c", "echo built > out"))
    first = execute(StageContext(store, services()), prebuild, {"redacted": redacted}, params)
    again = execute(StageContext(store, services()), prebuild, {"redacted": redacted}, params)
    assert first.executed and not again.executed and again.outputs == first.outputs
    assert set(first.outputs) == {"prebuild", "start"}
