"""Build the example project's git history from ``project-src/`` and write it as ``project.bundle``.

Each ``project-src/<NN-step>/`` directory holds the files that step adds or replaces (an overlay on the tree
before it); :data:`HISTORY` gives each step its commit message and time. Author, committer, time zone and
messages are fixed, so the same sources always give the same commit ids: the suite pins the last one.

Run from anywhere: ``python3 challenges/example/make_project.py`` prints the pinned commit id; then run
``pin.py`` to record it in ``suite.json``. Nothing here is packaged for an agent: only the git objects are.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dulwich.bundle import create_bundle_from_repo, write_bundle
from dulwich.index import commit_tree
from dulwich.objects import Blob, Commit
from dulwich.repo import MemoryRepo

__all__ = ["BRANCH", "HISTORY", "build_repo", "write_project_bundle"]

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "project-src"
BUNDLE = HERE / "project.bundle"
BRANCH = b"refs/heads/main"
AUTHOR = b"Ines Albrecht <ines.albrecht@tallybook.example>"
ZONE = 3600  # CET, in seconds east of UTC
DAY = 86_400

# (step directory, commit message, seconds after the first commit)
HISTORY: tuple[tuple[str, str, int], ...] = (
    ("01-start", "Start tallybook: amounts in cents and a CSV ledger file", 0),
    ("02-import", "Import Harbor and Northwind bank exports", 3 * DAY + 5_400),
    ("03-rules", "Sort transactions into categories by payee rules", 9 * DAY + 1_800),
    ("04-accounts", "Record which account each transaction belongs to", 23 * DAY + 7_200),
    ("05-report", "Monthly report and a command line", 31 * DAY + 3_600),
    ("06-editor", "Add editor settings for contributors", 38 * DAY + 600),
)
FIRST_COMMIT_TIME = 1_704_704_400  # 2024-01-08 09:00 UTC


def _overlay(step: Path) -> dict[bytes, bytes]:
    files = {}
    for path in sorted(p for p in step.rglob("*") if p.is_file()):
        files[path.relative_to(step).as_posix().encode()] = path.read_bytes()
    if not files:
        raise SystemExit(f"step {step} holds no files")
    return files


def build_repo(sources: Path = SOURCES) -> MemoryRepo:
    """The example repository in memory, ``main`` at the last step."""
    repo = MemoryRepo()
    tree_files: dict[bytes, bytes] = {}
    parent: list[bytes] = []
    for step, message, offset in HISTORY:
        tree_files.update(_overlay(sources / step))
        entries = []
        for path, data in sorted(tree_files.items()):
            blob = Blob.from_string(data)
            repo.object_store.add_object(blob)
            entries.append((path, blob.id, 0o100644))
        commit = Commit()
        commit.tree = commit_tree(repo.object_store, entries)
        commit.parents = parent
        commit.author = commit.committer = AUTHOR
        commit.author_time = commit.commit_time = FIRST_COMMIT_TIME + offset
        commit.author_timezone = commit.commit_timezone = ZONE
        commit.encoding = b"UTF-8"
        commit.message = message.encode() + b"\n"
        repo.object_store.add_object(commit)
        parent = [commit.id]
    repo.refs[BRANCH] = parent[0]
    repo.refs.set_symbolic_ref(b"HEAD", BRANCH)
    return repo


def write_project_bundle(target: Path = BUNDLE) -> str:
    """Write the bundle (``main`` only) and return the commit id it holds."""
    repo = build_repo()
    bundle = create_bundle_from_repo(repo, refs=[BRANCH])
    with target.open("wb") as handle:
        write_bundle(handle, bundle)
    return repo.refs[BRANCH].decode()


if __name__ == "__main__":
    print(write_project_bundle(Path(sys.argv[1]) if len(sys.argv) > 1 else BUNDLE))
