"""The project root (issue 21, build item 1): commands find the project upward from the working directory as git
does; its one store serves every directory inside it; a command that only reads creates nothing; every store
message names its path. Each command runs as a user runs it, in a process of its own from a chosen directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def bench(cwd: Path, *argv: str) -> tuple[int, dict[str, Any], str]:
    """Run `stele-bench --json ARGV` from ``cwd`` with no store or project named by the environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("STELE_BENCH_STORE", "STELE_BENCH_PROJECT")}
    command = [sys.executable, "-m", "bench", "--json", *argv]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr  # one JSON object, on success and on refusal
    return done.returncode, json.loads(lines[0]), done.stderr


def test_outside_any_project_a_read_command_is_refused_naming_where_it_looked_and_creates_nothing(
    tmp_path: Path,
) -> None:
    for argv in (["store", "ls"], ["store", "fsck"], ["ls", "runs"]):
        code, result, err = bench(tmp_path, *argv)
        assert (code, result["error"]["code"]) == (7, "project-not-found"), argv
        assert str(tmp_path) in result["error"]["message"] and "stele-bench.toml" in result["error"]["message"]
        assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []  # no ./store left behind


def test_in_a_project_without_a_store_a_read_command_names_the_store_path_and_creates_nothing(tmp_path: Path) -> None:
    code, made, _ = bench(tmp_path, "init", "project")
    assert code == 0 and made["created"] is True
    root = (tmp_path / "project").resolve()
    assert made["store"] == str(root / "store") and (root / "stele-bench.toml").is_file()
    for argv in (["store", "fsck"], ["store", "ls"]):
        code, result, _ = bench(root / "suites", *argv)
        assert (code, result["error"]["code"]) == (8, "store-not-found"), argv
        assert str(root / "store") in result["error"]["message"]
    assert not (root / "store").exists()


def test_every_directory_of_a_project_and_project_option_from_outside_use_its_one_store(tmp_path: Path) -> None:
    bench(tmp_path, "init", "project")
    root = (tmp_path / "project").resolve()
    deep = root / "suites" / "mine" / "notes"
    deep.mkdir(parents=True)
    (deep / "note.txt").write_text("written from deep inside the project\n")
    code, put, _ = bench(deep, "store", "put", "note.txt", "--ref", "notes/one")
    assert code == 0
    digest = put["digest"]
    code, listed, _ = bench(root, "store", "ls")
    assert code == 0 and listed["refs"] == {"notes/one": digest}
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    code, fsck, _ = bench(outside, "--project", str(root), "store", "fsck")
    assert code == 0 and fsck["store"] == str(root / "store") and fsck["objects"] >= 1
    assert sorted(path.name for path in outside.iterdir()) == []
    assert sorted(path.name for path in deep.iterdir()) == ["note.txt"]  # no store made where the command ran


def test_init_of_an_existing_project_changes_nothing_and_says_so(tmp_path: Path) -> None:
    bench(tmp_path, "init", "project")
    marker = tmp_path / "project" / "stele-bench.toml"
    before = marker.read_bytes()
    code, again, _ = bench(tmp_path / "project", "init")
    assert (code, again["created"], marker.read_bytes()) == (0, False, before)


def test_a_marker_this_version_cannot_read_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "stele-bench.toml").write_text("[project]\nformat = 99\n")
    code, result, err = bench(tmp_path, "store", "ls")
    assert code == 6 and result["error"]["field"] == "project.format" and err.count("\n") == 1
