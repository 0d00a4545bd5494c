"""The command line refuses hostile arguments in one line, and with --json in one object (issue 17, 4, 6, 8).

Every refusal is ``{"error": {...}}`` with a code and a message on stdout under ``--json``, one line on stderr,
and never a traceback; ``--json``, ``--store`` and ``--debug`` are accepted before and after every command.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import build_parser, main
from bench.contracts import Digest, PortablePath
from bench.store import EntryKind, FileEntry, Store, tree_from_entries, walk_tree
from tests.provision.conftest import write_fixture


def _refusal(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, dict[str, object], str]:
    code = main(argv)
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 1, captured.out
    error = json.loads(lines[0])["error"]
    assert {"code", "type", "message", "exit_code"} <= set(error) and error["exit_code"] == code
    assert len(captured.err.strip().splitlines()) == 1, captured.err  # one line, no traceback
    assert "errors.pydantic.dev" not in captured.err + captured.out
    return code, error, captured.err


@pytest.fixture
def fixture_root(tmp_path: Path) -> Path:
    root = tmp_path / "fixture"
    write_fixture(root)
    return root


PROVISION_REFUSALS = [
    pytest.param(["restore", "--provisioner", "x", "--run-identity", "a b"], "--run-identity", id="run-identity"),
    pytest.param(
        ["snapshot", "--provisioner", "x", "--memory-project", "../x"], "--memory-project", id="project-dotdot"
    ),
    pytest.param(["destroy", "--provisioner", "'unbalanced", "--memory-project", "p"], "--provisioner", id="quote"),
    pytest.param(["destroy", "--provisioner", "", "--memory-project", "p"], "--provisioner", id="empty-provisioner"),
    pytest.param(["destroy", "--provisioner", "x", "--memory-project", "p", "--timeout", "nan"], "--timeout", id="nan"),
    pytest.param(["destroy", "--provisioner", "x", "--memory-project", "p", "--timeout", "0"], "--timeout", id="zero"),
    pytest.param(
        ["destroy", "--provisioner", "x", "--memory-project", "p", "--timeout", "-5"], "--timeout", id="negative"
    ),
    pytest.param(["destroy", "--provisioner", "x", "--memory-project", "p", "--timeout", "inf"], "--timeout", id="inf"),
]


@pytest.mark.parametrize(("argv", "option"), PROVISION_REFUSALS)
def test_bad_provision_arguments_are_usage_errors_naming_the_option(
    capsys: pytest.CaptureFixture[str], fixture_root: Path, argv: list[str], option: str
) -> None:
    verb, *rest = argv
    extra = ["--graph-arm", "plain"] if verb == "restore" else []
    full = ["--json", "provision", verb, "--fixture-root", str(fixture_root), *extra, *rest]
    code, error, _ = _refusal(capsys, full)
    assert (code, error["code"]) == (2, "usage")
    assert f"argument {option}" in str(error["message"])


def test_a_refusal_in_a_subprocess_is_one_line_without_a_traceback(tmp_path: Path, fixture_root: Path) -> None:
    argv = ["provision", "restore", "--provisioner", "'x", "--fixture-root", str(fixture_root)]
    argv += ["--graph-arm", "plain", "--run-identity", "a b"]
    done = subprocess.run([sys.executable, "-m", "bench", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("stele-bench: error: ")


def test_export_onto_an_existing_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "store")
    tree = tree_from_entries(store, [FileEntry(PortablePath("a.txt"), EntryKind.FILE, b"a")])
    target = tmp_path / "existing-file"
    target.write_text("keep me\n")
    argv = ["--store", str(tmp_path / "store"), "store", "export", str(tree), str(target), "--json"]
    code, error, _ = _refusal(capsys, argv)
    assert (code, error["code"]) == (6, "contract") and "is not a directory" in str(error["message"])
    assert target.read_text() == "keep me\n"


def test_fsck_of_a_damaged_index_reports_corruption(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    store = Store(root)
    for number in range(200):
        store.put_bytes(f"object {number}\n".encode() * 50)
    del store
    index = root / "index.sqlite"
    with contextlib.closing(sqlite3.connect(index)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(index.read_bytes())
    for offset in range(100, len(data), 7):
        data[offset] ^= 0x55
    index.write_bytes(bytes(data))
    assert main(["--store", str(root), "store", "fsck", "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "corrupt" and report["index"] == str(index)
    code, error, _ = _refusal(capsys, ["--store", str(root), "--json", "store", "ls"])
    assert (code, error["code"], error["path"]) == (3, "store-corrupt", str(index))


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += [child, *_parsers(child)]
    return found


def test_every_command_takes_the_common_options_after_it_too() -> None:
    parsers = _parsers(build_parser())
    assert len(parsers) > 20
    for parser in parsers:
        options = {option for action in parser._actions for option in action.option_strings}
        assert {"--json", "--store", "--debug"} <= options, parser.prog


@pytest.mark.parametrize(
    "argv",
    [
        ["store", "ls", "--json", "--store", "{store}"],
        ["--store", "elsewhere", "store", "ls", "--store", "{store}", "--json"],
        ["store", "--json", "--store", "{store}", "fsck"],
        ["--json", "--store", "{store}", "store", "fsck"],
        ["schema", "fixture", "--json"],
        ["provision", "digest", "{store}", "--json"],
    ],
    ids=["after", "after-overrides-before", "between", "before", "schema", "provision-digest"],
)
def test_json_and_store_are_accepted_before_and_after_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    store = tmp_path / "store"
    Store(store).put_bytes(b"x")
    assert main([word.replace("{store}", str(store)) for word in argv]) == 0
    assert isinstance(json.loads(capsys.readouterr().out), dict)
    assert not (Path("elsewhere")).exists()


def test_store_ls_all_lists_every_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "store")
    blob = store.put_bytes(b"hello")
    tree = tree_from_entries(store, [FileEntry(PortablePath("a.txt"), EntryKind.FILE, b"hello")])
    store.set_ref("greeting", tree)
    assert main(["--store", str(tmp_path / "store"), "store", "ls", "--all", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["refs"] == {"greeting": tree}
    assert {(o["digest"], o["kind"]) for o in listing["objects"]} == {(blob, "blob"), (tree, "document")}


def test_redact_remove_names_the_option_not_a_fixture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "store")
    tree = tree_from_entries(store, [FileEntry(PortablePath("a.txt"), EntryKind.FILE, b"a")])
    argv = ["--store", str(tmp_path / "store"), "redact", str(tree), "--remove", "typo.md", "--json"]
    code, error, _ = _refusal(capsys, argv)
    assert code == 6 and "--remove" in str(error["message"]) and "the fixture declares" not in str(error["message"])


def test_redaction_leaves_no_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(tmp_path / "store")
    files = {"pkg/inner/notes.md": b"private\n", "pkg/app.py": b"app\n"}
    tree = tree_from_entries(store, [FileEntry(PortablePath(p), EntryKind.FILE, d) for p, d in files.items()])
    argv = ["--store", str(tmp_path / "store"), "redact", str(tree), "--remove", "pkg/inner/notes.md", "--json"]
    assert main(argv) == 0
    receipt = json.loads(capsys.readouterr().out)["receipt"]
    assert [path for path, _ in walk_tree(store, Digest(receipt["redacted"]))] == ["pkg", "pkg/app.py"]
    assert {(r["path"], r["reason"]) for r in receipt["removed"]} == {
        ("pkg/inner/notes.md", "declared for removal"),
        ("pkg/inner", "left empty by the removals within it"),
    }


def test_a_broken_document_is_one_line_naming_the_file_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture_root: Path
) -> None:
    manifest = json.loads((fixture_root / "fixture.json").read_text())
    manifest["probes"][0]["top_k"] = "five"
    (fixture_root / "fixture.json").write_text(json.dumps(manifest))
    argv = ["--json", "provision", "destroy", "--provisioner", "x", "--fixture-root", str(fixture_root)]
    code = main([*argv, "--memory-project", "p"])  # destroy does not read the fixture: restore does
    capsys.readouterr()
    assert code == 11  # the provisioner `x` does not exist: a provisioner refusal
    argv = ["--json", "provision", "restore", "--provisioner", "x", "--fixture-root", str(fixture_root)]
    code, error, err = _refusal(capsys, [*argv, "--graph-arm", "plain", "--run-identity", "r1"])
    assert (code, error["code"], error["path"]) == (6, "contract", str(fixture_root / "fixture.json"))
    assert "probes.0.top_k" in str(error["message"]) and "fixture.json" in err


def test_an_unexpected_error_is_one_line_and_debug_shows_the_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(args: argparse.Namespace, out: object) -> int:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("bench.cli.store_cmd._ls", broken)
    argv = ["--store", str(tmp_path / "store"), "store", "ls", "--json"]
    code, error, err = _refusal(capsys, argv)
    assert (code, error["code"], error["type"]) == (70, "internal", "RecursionError")
    assert "--debug" in err
    assert main([*argv, "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err
