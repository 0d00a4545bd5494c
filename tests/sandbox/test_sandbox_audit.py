"""The mutation audit: each kind outside the allowlist is caught, changes inside it pass, receipts are stable."""

from __future__ import annotations

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.contracts import PortablePath
from bench.run.catalogue import services
from bench.sandbox import RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend
from bench.stages.audit import MutationKind, audit, audit_trees
from bench.store import Store
from bench.suite.challenge import Environment
from tests.sandbox.sandbox_helpers import make_tree

START = {
    "src/lib.rs": b"pub fn f() {}\n",
    "src/main.rs": b"fn main() {}\n",
    "tests/it.rs": b"#[test] fn t() {}\n",
    "tests/common.rs": b"// shared\n",
    "scripts/build.sh": ("x", b"#!/bin/sh\n"),
    "docs/guide.md": b"guide\n",
    "docs/latest": ("l", "guide.md"),
    "vendor/pkg/a.rs": b"a\n",
}
ALLOWED = (PortablePath("src/lib.rs"), PortablePath("Cargo.lock"), PortablePath("target"))


def _audit(store: Store, changes: dict, removed: tuple[str, ...] = ()):
    files = {path: value for path, value in START.items() if path not in removed} | changes
    return audit_trees(store, make_tree(store, START), make_tree(store, files), ALLOWED)


@pytest.mark.parametrize(
    ("changes", "removed", "path", "kind"),
    [
        ({"notes.txt": b"new\n"}, (), "notes.txt", MutationKind.ADDED),
        ({}, ("tests/it.rs",), "tests/it.rs", MutationKind.REMOVED),
        ({"tests/it.rs": b"#[test] fn t() { assert!(true) }\n"}, (), "tests/it.rs", MutationKind.CONTENT_CHANGED),
        ({"scripts/build.sh": b"#!/bin/sh\n"}, (), "scripts/build.sh", MutationKind.MODE_CHANGED),
        ({"docs/latest": ("l", "../src/lib.rs")}, (), "docs/latest", MutationKind.SYMLINK_RETARGETED),
        ({"docs/guide.md": ("l", "/etc/passwd")}, (), "docs/guide.md", MutationKind.TYPE_SWAPPED),
        ({"vendor/pkg": b"flattened\n"}, ("vendor/pkg/a.rs",), "vendor/pkg", MutationKind.TYPE_SWAPPED),
        ({}, ("vendor/pkg/a.rs",), "vendor", MutationKind.REMOVED),
    ],
)
def test_each_kind_outside_the_allowlist_forces_reward_zero(
    store: Store, changes: dict, removed: tuple[str, ...], path: str, kind: MutationKind
) -> None:
    receipt = _audit(store, changes, removed)
    assert [(m.path, m.kind, m.allowed) for m in receipt.mutations] == [(path, kind, False)]
    assert receipt.violations == 1 and receipt.reward_forced_zero


def test_changes_inside_the_allowlist_pass_including_the_toolchain_lockfile(store: Store) -> None:
    build = {f"target/debug/deps/obj{i}.o": bytes([i % 256]) * 10 for i in range(50)}
    receipt = _audit(store, {"src/lib.rs": b"pub fn f() -> u8 { 1 }\n", "Cargo.lock": b"version = 3\n", **build})
    kinds = {(m.path, m.kind) for m in receipt.mutations}
    assert kinds == {
        ("Cargo.lock", MutationKind.ADDED),
        ("src/lib.rs", MutationKind.CONTENT_CHANGED),
        ("target", MutationKind.ADDED),
    }  # the whole build directory is one entry, named by its digest
    assert all(m.allowed for m in receipt.mutations) and not receipt.reward_forced_zero


def test_an_undeclared_lockfile_voids_the_run(store: Store) -> None:
    start = make_tree(store, START)
    final = make_tree(store, {**START, "Cargo.lock": b"version = 3\n"})
    receipt = audit_trees(store, start, final, (PortablePath("src/lib.rs"),))
    assert receipt.reward_forced_zero and receipt.mutations[0].path == "Cargo.lock"


def test_a_new_directory_holding_an_allowed_path_is_judged_entry_by_entry(store: Store) -> None:
    start = make_tree(store, {"a": b"a"})
    final = make_tree(store, {"a": b"a", "out/gen/x": b"x", "out/stray": b"s"})
    receipt = audit_trees(store, start, final, (PortablePath("out/gen"),))
    assert [(m.path, m.allowed) for m in receipt.mutations] == [("out", True), ("out/gen", True), ("out/stray", False)]


def test_no_change_is_clean_and_the_receipt_is_deterministic(store: Store) -> None:
    tree = make_tree(store, START)
    assert audit_trees(store, tree, tree, ALLOWED).mutations == ()
    first = _audit(store, {"notes.txt": b"n", "src/lib.rs": b"changed"})
    second = _audit(store, {"src/lib.rs": b"changed", "notes.txt": b"n"})
    assert store.put_document(first) == store.put_document(second)


def test_the_audit_stage_rederives_its_receipt(store: Store) -> None:
    inputs = {"start": make_tree(store, START), "final": make_tree(store, {**START, "x": b"x"})}
    params = audit.params(allowed_output_paths=ALLOWED)
    first = execute(StageContext(store, services()), audit, inputs, params)
    again = execute(StageContext(store, services()), audit, inputs, params)
    assert first.executed and not again.executed and first.outputs == again.outputs


def test_a_real_agent_edit_to_a_test_is_caught(
    store: Store, backend: DockerBackend, tiny_image: str, environment: Environment
) -> None:
    start = make_tree(store, START)
    script = "echo 'fn main() { 1 }' > src/lib.rs && echo '// skip' >> tests/it.rs && chmod -x scripts/build.sh"
    spec = container_spec(tiny_image, environment, ("sh", "-c", script))
    outcome = backend.run(RunRequest(spec=spec, workspace=start, timeout_seconds=30))
    assert outcome.tree is not None
    receipt = audit_trees(store, start, outcome.tree, ALLOWED)
    assert [(m.path, m.kind, m.allowed) for m in receipt.mutations] == [
        ("scripts/build.sh", MutationKind.MODE_CHANGED, False),
        ("src/lib.rs", MutationKind.CONTENT_CHANGED, True),
        ("tests/it.rs", MutationKind.CONTENT_CHANGED, False),
    ]


def test_bytecode_written_without_its_source_is_a_violation_under_an_allowed_cache(store: Store) -> None:
    """An agent's .pyc stands in for a source it never fixed; one beside its changed source is the toolchain's."""
    start = {"pkg/m.py": b"x = 1\n", "pkg/__pycache__/m.cpython-311.pyc": b"\x00old"}
    allowed = (PortablePath("pkg/__pycache__"), PortablePath("pkg/m.py"), PortablePath("out"))
    alone = audit_trees(
        store,
        make_tree(store, start),
        make_tree(store, {**start, "pkg/__pycache__/m.cpython-311.pyc": b"\x00new"}),
        allowed,
    )
    assert [(m.path, m.kind, m.allowed) for m in alone.mutations] == [
        ("pkg/__pycache__/m.cpython-311.pyc", MutationKind.CONTENT_CHANGED, True),
        ("pkg/__pycache__/m.cpython-311.pyc", MutationKind.BYTECODE_ONLY, False),
    ]
    assert alone.reward_forced_zero
    fixed = {"pkg/m.py": b"x = 2\n", "pkg/__pycache__/m.cpython-311.pyc": b"\x00new"}
    assert not audit_trees(store, make_tree(store, start), make_tree(store, fixed), allowed).reward_forced_zero
    # A new .pyc is what Python writes for a module imported the first time (a prebuild's compileall does it too).
    added = {**start, "out/__pycache__/n.cpython-311.opt-1.pyc": b"\x00", "out/n.pyc": b"\x00"}
    assert not audit_trees(store, make_tree(store, start), make_tree(store, added), allowed).reward_forced_zero
