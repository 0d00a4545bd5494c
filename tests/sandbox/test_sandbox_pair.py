"""Both arms' specs as data: they differ only in the memory attachment, and nothing visible names the experiment."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.contracts import canonical_bytes
from bench.errors import SandboxError
from bench.sandbox import MemoryAttachment, Mount, ProcessOutcome, RunRequest, container_spec, prepare_pair
from bench.sandbox.backends import LEASE_LABEL, OWNER_LABEL
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.spec import ContainerSpec, identity_terms_in
from bench.store import Store, walk_tree
from bench.suite.challenge import Environment
from tests.sandbox.sandbox_helpers import make_tree

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

# Everything a process inside can read about its own container, then every workspace path and file.
INSPECT = (
    "hostname; env; cat /proc/self/mountinfo /etc/hosts /etc/hostname /proc/1/environ | tr '\\0' '\\n'; "
    "find /workspace; cat $(find /workspace -type f)"
)


@pytest.fixture
def attachment(tmp_path_factory: pytest.TempPathFactory) -> MemoryAttachment:
    hooks = tmp_path_factory.mktemp("hooks")
    (hooks / "recall.sh").write_text("#!/bin/sh\necho recalled\n")
    hooks.chmod(0o755)
    return MemoryAttachment(
        env={"RECALL_URL": "http://127.0.0.1:7000"}, mounts=(Mount.of(hooks, "runner:hooks", "/home/dev/.hooks"),)
    )


def test_a_real_pair_differs_only_in_the_memory_attachment(
    store: Store, backend: DockerBackend, tiny_image: str, environment: Environment, attachment: MemoryAttachment
) -> None:
    command = ("sh", "-c", "echo done > result.txt")
    first = container_spec(tiny_image, environment, command)
    second = container_spec(tiny_image, environment, command, attachment=attachment)
    receipt = prepare_pair(first, second, ("without", "with"))
    assert receipt.only_attachment
    assert [d.field for d in receipt.differences] == ["attachment.env.RECALL_URL", "attachment.mounts"]
    assert [d.first for d in receipt.differences] == [None, None]
    assert receipt.differences[0].second == "http://127.0.0.1:7000"
    start = make_tree(store, {"README": b"a small project\n"})
    results = [backend.run(RunRequest(spec=spec, workspace=start, timeout_seconds=30)) for spec in (first, second)]
    assert [r.outcome for r in results] == [ProcessOutcome.SUCCEEDED, ProcessOutcome.SUCCEEDED]
    assert results[0].tree == results[1].tree  # same work from the same start gives the same tree


def test_a_recorded_spec_names_what_is_mounted_never_where_it_lies_on_the_host(
    tiny_image: str, environment: Environment, attachment: MemoryAttachment
) -> None:
    spec = container_spec(tiny_image, environment, ("true",), attachment=attachment)
    (mount,) = attachment.mounts
    assert mount.host is not None and mount.bound == mount.host  # what the engine binds
    receipt = prepare_pair(container_spec(tiny_image, environment, ("true",)), spec, ("without", "with"))
    for document in (canonical_bytes(receipt), canonical_bytes(spec)):
        assert mount.host.encode() not in document and b"runner:hooks" in document
    recorded = ContainerSpec.model_validate_json(canonical_bytes(spec))
    with pytest.raises(SandboxError, match="names no host path"):
        _ = recorded.effective_mounts()[0].bound  # a record cannot start a container


def test_a_pair_differing_elsewhere_is_refused(tiny_image: str, environment: Environment) -> None:
    first = container_spec(tiny_image, environment, ("true",))
    second = first.model_copy(update={"hostname": "other", "env": {**first.env, "EXTRA": "1"}})
    with pytest.raises(SandboxError, match=r"differ in env\.EXTRA, hostname"):
        prepare_pair(first, second, ("a", "b"))


@pytest.mark.parametrize(
    "update",
    [
        {"hostname": "stele-runner"},
        {"env": {"HOME": "/home/dev", "RUN_CONDITION": "treatment"}},
        {"mounts": (Mount.of(Path("/srv/benchmarks/x"), "runner:x", "/data"),)},
        {"workdir": "/experiment"},
    ],
)
def test_a_spec_naming_the_harness_or_the_experiment_is_refused(
    tiny_image: str, environment: Environment, update: dict
) -> None:
    spec = container_spec(tiny_image, environment, ("true",)).model_copy(update=update)
    with pytest.raises(SandboxError, match="name the harness or the experiment"):
        prepare_pair(spec, spec, ("a", "b"))


def test_ordinary_words_do_not_trip_the_scan() -> None:
    assert identity_terms_in("controller armv7 conditional fixtures-dir PATH=/usr/bin") == []


def test_nothing_visible_inside_an_arm_names_the_harness_condition_or_experiment(
    store: Store, backend: DockerBackend, tiny_image: str, environment: Environment, attachment: MemoryAttachment
) -> None:
    start = make_tree(store, {"src/app.py": b"print('hi')\n", "notes/todo.txt": b"ship it\n"})
    spec = container_spec(tiny_image, environment, ("sh", "-c", INSPECT), attachment=attachment)
    prepare_pair(spec, spec, ("with", "with"))
    result = backend.run(RunRequest(spec=spec, workspace=start, timeout_seconds=30))
    seen = result.output
    assert "/home/dev/.hooks" in seen and "RECALL_URL" in seen and "ship it" in seen  # the scan saw everything
    assert identity_terms_in(seen) == []
    # Engine labels (the owner label, the runner's lease) stay outside the container.
    assert OWNER_LABEL not in seen and LEASE_LABEL not in seen and "sandbox" not in seen
    assert backend.lease.owner not in seen and str(backend.lease.path) not in seen
    assert result.tree is not None
    assert all(not identity_terms_in(str(path)) for path, _ in walk_tree(store, result.tree))
