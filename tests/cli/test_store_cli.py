"""The CLI over a real store: one JSON object with --json, errors on stderr, distinct fsck exit codes."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.builder import StageContext, execute
from bench.contracts import Digest
from bench.run.catalogue import services
from bench.stages.directory_tree import directory_fingerprint, directory_tree
from bench.stages.tree_summary import TreeSummary, tree_summary
from bench.store import Store
from bench.store.actions import ActionResult, producers, record


def cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    options = ["--json"] if args[:1] == ("--json",) else []
    command = [sys.executable, "-m", "bench", "--store", str(store), *options, *args[len(options) :]]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def cli_json(store: Path, *args: str) -> tuple[int, dict[str, object]]:
    done = cli(store, "--json", *args)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout + done.stderr
    return done.returncode, json.loads(lines[0])


@pytest.fixture
def derived(tmp_path: Path) -> tuple[Path, Digest, Digest]:
    """A store holding a directory's tree and its summary, produced through the stage engine."""
    source = tmp_path / "project"
    (source / "src").mkdir(parents=True)
    (source / "src" / "main.py").write_text("print('x')\n")
    (source / "README.md").write_text("# project\n")
    root = tmp_path / "store"
    store = Store(root)
    params = {"directory": str(source), "fingerprint": directory_fingerprint(source)}
    tree = execute(StageContext(store, services()), directory_tree, {}, params).outputs["tree"]
    summary = execute(StageContext(store, services()), tree_summary, {"tree": tree}, {}).outputs["summary"]
    return root, tree, summary


def test_put_cat_ls_and_export(tmp_path: Path) -> None:
    root = tmp_path / "store"
    (tmp_path / "f.txt").write_text("hello")
    code, put = cli_json(root, "store", "put", str(tmp_path / "f.txt"), "--ref", "greeting")
    assert code == 0 and put["digest"] == Digest.of(b"hello")
    assert cli(root, "store", "cat", str(put["digest"])).stdout == "hello"
    assert cli_json(root, "store", "ls")[1] == {"store": str(root.resolve()), "refs": {"greeting": put["digest"]}}
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x").write_text("y")
    tree = cli_json(root, "store", "put", str(tmp_path / "d"))[1]["digest"]
    assert cli(root, "store", "export", str(tree), str(tmp_path / "out")).returncode == 0
    assert (tmp_path / "out" / "x").read_text() == "y"


def test_fsck_exit_codes_distinguish_corrupt_from_missing(derived: tuple[Path, Digest, Digest]) -> None:
    root, tree, summary = derived
    assert cli_json(root, "store", "fsck")[0] == 0
    with contextlib.closing(sqlite3.connect(root / "index.sqlite", isolation_level=None)) as index:
        index.execute("UPDATE objects SET data = ? WHERE hex = ?", (b"X" * summary.size, summary.hex))
        code, report = cli_json(root, "store", "fsck")
        assert code == 3 and report["corrupt"] == [summary]
        index.execute("DELETE FROM objects WHERE hex = ?", (tree.hex,))
    code, report = cli_json(root, "store", "fsck")
    assert code == 5 and tree in report["missing"]
    refused = cli(root, "store", "cat", str(summary))
    assert refused.returncode != 0 and refused.stdout == "" and "corrupt" in refused.stderr


def test_bad_digest_argument_is_a_usage_error(tmp_path: Path) -> None:
    Store(tmp_path / "store").put_bytes(b"x")
    done = cli(tmp_path / "store", "store", "cat", "not-a-digest")
    assert done.returncode == 2 and "no ref named 'not-a-digest'" in done.stderr
    done = cli(tmp_path / "store", "store", "cat", "blake3:zz")
    assert done.returncode == 2 and "is not a store digest, a digest prefix" in done.stderr


def test_lineage_prints_the_chain_to_the_root_inputs(derived: tuple[Path, Digest, Digest]) -> None:
    root, tree, summary = derived
    code, graph = cli_json(root, "lineage", str(summary))
    assert code == 0 and graph["root"] == summary
    objects, actions = graph["objects"], graph["actions"]
    assert isinstance(objects, dict) and isinstance(actions, dict)
    made = actions[objects[summary]["action"]]
    assert made["stage"] == "tree-summary" and objects[summary]["output"] == "summary"
    assert made["inputs"] == {"tree": tree}
    source = actions[objects[tree]["action"]]
    assert source["stage"] == "directory-tree" and source["inputs"] == {}
    assert source["params"]["directory"].endswith("project")
    text = cli(root, "lineage", str(summary)).stdout
    assert "tree-summary" in text and "directory-tree" in text and "from directory" in text


def test_rederive_says_same_then_names_a_tampered_receipt(derived: tuple[Path, Digest, Digest]) -> None:
    root, _tree, summary = derived
    done = cli(root, "rederive", str(summary))
    assert done.returncode == 0 and done.stdout.startswith("same")

    # A hand-edited receipt recorded as if the action had produced it.
    store = Store(root)
    original = store.get_document(summary, TreeSummary)
    forged = store.put_document(original.model_copy(update={"files": original.files + 1}))
    (original_result,) = producers(store, summary)
    recorded = store.get_document(original_result, ActionResult)
    forgery = recorded.model_copy(update={"outputs": {"summary": forged}, "started": recorded.started + 1})
    record(store, forgery, replacing=original_result)  # a writer of the store replaces the key's one result
    code, verdict = cli_json(root, "rederive", str(forged))
    assert code == 1 and verdict["verdict"] == "different"
    assert verdict["differing"] == {"summary": {"recorded": forged, "derived": summary}}


def test_rederive_refuses_an_observed_stage(derived: tuple[Path, Digest, Digest]) -> None:
    root, tree, _ = derived
    done = cli(root, "rederive", str(tree))
    assert done.returncode != 0 and "observed stage 'directory-tree'" in done.stderr
