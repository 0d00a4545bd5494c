"""A declared workspace identity: one synthetic commit of exactly the packaged tree, on the declared remote's default
branch, byte-identical in every run and both arms, carrying no history. Read back with the real git."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.errors import ContractError
from bench.pipeline.plan import Upstream
from bench.run.catalogue import services
from bench.run.prereg_freeze import freeze
from bench.run.suite_plan import suite_plan
from bench.sandbox import RunRequest, container_spec
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.layout import USER_GID, USER_UID, WORKSPACE_MTIME
from bench.stages.audit import audit_trees
from bench.stages.workspace_identity import IdentityParams, with_identity, workspace_identity
from bench.store import EntryKind, Store, walk_tree, write_tar
from bench.suite.challenge import Environment
from bench.suite.suite import WorkspaceIdentity, open_suite
from tests.sandbox.sandbox_helpers import make_tree

REPO = Path(__file__).resolve().parents[2]
CORPUS = {
    "README.md": b"# widgets\n",
    "src/widgets/__init__.py": b"VERSION = 1\n",
    "src/widgets/core.py": b"def spin():\n    return 2\n",
    "bin/run": ("x", b"#!/bin/sh\necho run\n"),
    "docs/latest": ("l", "../README.md"),
}
IDENTITY = IdentityParams(remote_url="https://github.com/acme/widgets.git", default_branch="trunk")
# What every container shows of the identity (the same command in both arms).
SHOW = "git remote -v; git branch --show-current; git log --format='%H %an %ad %s' --date=unix; git status --porcelain"


def _git(workspace: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-c", f"safe.directory={workspace}", *argv], cwd=workspace, capture_output=True, text=True, check=True
    )
    return done.stdout


def _unpacked(store: Store, tree: str, into: Path) -> Path:
    """``tree`` laid out as a container's workspace is: every entry dated WORKSPACE_MTIME."""
    archive = into / "workspace.tar"
    with archive.open("wb") as sink:
        write_tar(store, tree, sink, prefix="workspace", uid=USER_UID, gid=USER_GID, mtime=WORKSPACE_MTIME)  # type: ignore[arg-type]
    with tarfile.open(archive) as opened:
        opened.extractall(into, filter="tar")
    return into / "workspace"


def test_the_commit_holds_exactly_the_packaged_tree_and_nothing_before_it(store: Store, tmp_path: Path) -> None:
    packaged = make_tree(store, CORPUS)
    workspace = _unpacked(store, with_identity(store, packaged, IDENTITY), tmp_path)
    assert _git(workspace, "rev-list", "--all").count("\n") == 1  # one commit, no parent, no other ref
    assert (
        _git(workspace, "log", "--format=%P|%an <%ae>|%at|%s")
        == f"|dev <dev@localhost>|{WORKSPACE_MTIME}|Initial commit\n"
    )
    listed = {}
    for line in _git(workspace, "ls-tree", "-r", "HEAD").splitlines():
        meta, path = line.split("\t")
        mode, _, blob = meta.split()
        listed[path] = (mode, _git(workspace, "cat-file", "blob", blob).encode())
    kinds = {EntryKind.FILE: "100644", EntryKind.EXECUTABLE: "100755", EntryKind.SYMLINK: "120000"}
    packaged_files = {
        str(path): (kinds[entry.kind], store.get_bytes(entry.digest))
        for path, entry in walk_tree(store, packaged)
        if entry.kind is not EntryKind.DIRECTORY
    }
    assert listed == packaged_files
    # Every object in .git is reachable from that commit: nothing else of the project's could be read there.
    reachable = {line.split()[0] for line in _git(workspace, "rev-list", "--objects", "--all").splitlines()}
    stored = {p.parent.name + p.name for p in (workspace / ".git" / "objects").glob("??/*")}
    assert stored == reachable
    _git(workspace, "fsck", "--strict", "--no-dangling")
    assert _git(workspace, "status", "--porcelain") == ""  # the worktree is that commit
    assert _git(workspace, "remote", "-v").splitlines() == [
        "origin\thttps://github.com/acme/widgets.git (fetch)",
        "origin\thttps://github.com/acme/widgets.git (push)",
    ]
    assert _git(workspace, "rev-parse", "--abbrev-ref", "HEAD", "@{upstream}").split() == ["trunk", "origin/trunk"]


def test_the_identity_is_the_same_bytes_in_every_run_and_the_stage_rederives_it(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "one"), Store(tmp_path / "two")
    assert with_identity(first, make_tree(first, CORPUS), IDENTITY) == with_identity(
        second, make_tree(second, CORPUS), IDENTITY
    )
    context = StageContext(first, services())
    inputs = {"tree": make_tree(first, CORPUS)}
    ran = execute(context, workspace_identity, inputs, IDENTITY)
    assert ran.executed and ran.outputs["tree"] == with_identity(first, inputs["tree"], IDENTITY)


def test_an_identity_naming_the_harness_or_one_git_refuses_is_refused(store: Store) -> None:
    tree = make_tree(store, CORPUS)
    for url, branch in (("https://x.org/stele-bench/w.git", "main"), ("https://x.org/acme/w.git", "treatment")):
        with pytest.raises(ContractError, match="names the harness or a condition"):
            with_identity(store, tree, IdentityParams(remote_url=url, default_branch=branch))
    for branch in ("main.lock", "a..b", "-x", "feature/", ".hidden", "a b"):
        with pytest.raises(ValueError, match="default_branch"):
            WorkspaceIdentity(remote_url="https://github.com/acme/widgets.git", default_branch=branch)
    for url in ("file:///etc", "https://x.org/a b", "https://x.org/$(id)", "ext::sh -c id"):
        with pytest.raises(ValueError, match="remote_url"):
            WorkspaceIdentity(remote_url=url)


def _suite(base: Path, identity: dict[str, str] | None) -> None:
    target = base / "challenges" / "example"
    shutil.copytree(REPO / "challenges" / "example", target, ignore=shutil.ignore_patterns("project-src"))
    if identity is not None:
        manifest = json.loads((target / "suite.json").read_text())
        manifest["project"]["identity"] = identity
        (target / "suite.json").write_text(json.dumps(manifest))
    freeze(open_suite(target), base / "manifests" / "example")


def test_only_a_suite_declaring_an_identity_gets_one_and_its_agent_may_write_the_git_directory(tmp_path: Path) -> None:
    """Without one, the plan is the plan it was (prebuild starts from the redacted tree; the same keys); with one,
    prebuild and calibration start from the identity's tree and the audit leaves ``.git`` to the agent."""
    plain, declared = tmp_path / "plain", tmp_path / "declared"
    _suite(plain, None)
    _suite(declared, {"remote_url": "https://github.com/acme/harbor.git"})
    store = Store.in_memory()
    before = {i.name: i for i in suite_plan(plain, store, "challenges/example", attempts=1).invocations}
    after = {i.name: i for i in suite_plan(declared, store, "challenges/example", attempts=1).invocations}
    assert "workspace-identity" not in before and set(after) == {*before, "workspace-identity"}
    assert after["workspace-identity"].params == {
        "remote_url": "https://github.com/acme/harbor.git",
        "default_branch": "main",
    }
    for challenge in ("harbor-holds", "rule-letter-case"):
        assert before[f"certify-{challenge}"] == after[f"certify-{challenge}"]  # certification reads the corpus
        for stage in ("prebuild", "calibrate"):
            name = f"{stage}-{challenge}"
            assert before[name].inputs["redacted"] == Upstream(invocation="redact", output="tree")
            assert after[name].inputs["redacted"] == Upstream(invocation="workspace-identity", output="tree")
            assert before[name].params == after[name].params
        for system in ("control", "reference"):
            audit = f"audit-{challenge}-1-{system}"
            allowed = before[audit].params["allowed_output_paths"]
            assert after[audit].params["allowed_output_paths"] == [*allowed, ".git"]  # type: ignore[misc]


@pytest.mark.slow
def test_both_arms_see_the_same_repository_and_only_the_agent_s_own_commits_change_it(
    store: Store, backend: DockerBackend, base_image: str, environment: Environment
) -> None:
    """Two containers from one start tree, as the arms are: the same remote, branch and single commit, and reading
    the repository (`git status`, `git log`) writes nothing. A commit the agent makes lies under .git, which the
    audit leaves to the agent when an identity is declared."""
    start = with_identity(store, make_tree(store, CORPUS), IDENTITY)
    spec = container_spec(base_image, environment, ("sh", "-c", SHOW))
    arms = [backend.run(RunRequest(spec=spec, workspace=start, timeout_seconds=60)) for _ in range(2)]
    shown = [arm.output for arm in arms]
    assert shown[0] == shown[1]
    lines = shown[0].splitlines()
    assert lines[:3] == [
        "origin\thttps://github.com/acme/widgets.git (fetch)",
        "origin\thttps://github.com/acme/widgets.git (push)",
        "trunk",
    ]
    assert len(lines) == 4 and lines[3].endswith(f" dev {WORKSPACE_MTIME} Initial commit")  # clean, one commit
    assert [arm.tree for arm in arms] == [start, start]
    commit = "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m more"
    committed = backend.run(
        RunRequest(
            spec=container_spec(base_image, environment, ("sh", "-c", commit)), workspace=start, timeout_seconds=60
        )
    )
    assert committed.exit_code == 0 and committed.tree is not None
    mutations = audit_trees(store, start, committed.tree, (".git",)).mutations
    assert mutations and all(m.path.startswith(".git/") and m.allowed for m in mutations)
