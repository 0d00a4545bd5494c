"""What a command imports (issue 39): `--version` and `--help` load no command module and no third-party package,
`ls runs` only the store, the contracts and the run record, never the catalogue of stages, the agent, the sandbox,
packaging, analysis or publication. Each case runs `main` in a fresh interpreter and reads `sys.modules` after it,
so an import added at the top of a module on the way shows up here, whatever the machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import main

# Run in the child: the modules `main(argv)` added to those the interpreter had loaded at start-up.
_CHILD = """
import contextlib, io, json, sys
before = set(sys.modules)
from bench.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as stop:  # argparse's own `--help` of a command exits
        code = stop.code
added = set(sys.modules) - before
print(json.dumps({"code": code, "modules": sorted(added)}))
"""

# What every command loads to parse its arguments and report: the table, output, signals and the error tree.
_FRONT = {"bench", "bench.cli", "bench.cli.commands", "bench.cli.output", "bench.stop_signals", "bench.errors"}
_FRONT |= {"bench.stopping"}
# `ls runs` reads the store's refs and run records, nothing else; prefixes name a package and all of its modules.
_LS_RUNS = (
    "bench.cli.locate",
    "bench.cli.ls_cmd",
    "bench.project",
    "bench.contracts",
    "bench.store",
    "bench.run",  # the package's own __init__ is a docstring
    "bench.run.run_record",
    "bench.pipeline",  # likewise
    "bench.pipeline.progress",
)
_NEVER_FOR_LS = ("bench.run.catalogue", "bench.agent", "bench.sandbox", "bench.packaging", "bench.analysis")
_NEVER_FOR_LS += ("bench.publish", "bench.gateway", "bench.store.backends.s3")
_LS_PACKAGES = {"pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection", "blake3"}


def _imports(*argv: str, cwd: Path | None = None) -> tuple[int, set[str]]:
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, *argv], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )
    assert run.stdout, run.stderr
    answer = json.loads(run.stdout.splitlines()[-1])
    return answer["code"], set(answer["modules"])


def _third_party(modules: set[str]) -> set[str]:
    tops = {name.split(".")[0] for name in modules}  # private tops (`_sysconfigdata_*`) belong to the stdlib
    return {top for top in tops if not top.startswith("_")} - set(sys.stdlib_module_names) - {"bench"}


def _bench(modules: set[str]) -> set[str]:
    return {name for name in modules if name == "bench" or name.startswith("bench.")}


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


@pytest.mark.parametrize("argv", [["--version"], ["--json", "--version"], ["--help"]])
def test_version_and_help_load_no_command_module_and_no_third_party_package(argv: list[str]) -> None:
    code, modules = _imports(*argv)
    assert code == 0
    assert _bench(modules) <= _FRONT, sorted(_bench(modules) - _FRONT)
    assert _third_party(modules) == set()


@pytest.fixture
def project_with_store(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    assert main(["init", str(project)]) == 0
    (tmp_path / "note.txt").write_text("something stored\n", encoding="utf-8")
    assert main(["--project", str(project), "store", "put", str(tmp_path / "note.txt")]) == 0
    return project


def test_ls_runs_loads_the_store_and_the_run_record_only(project_with_store: Path) -> None:
    code, modules = _imports("ls", "runs", cwd=project_with_store)
    assert code == 0
    allowed = _FRONT | {name for name in _bench(modules) if _under(name, _LS_RUNS)}
    assert _bench(modules) <= allowed, sorted(_bench(modules) - allowed)
    assert not [name for name in modules if _under(name, _NEVER_FOR_LS)]
    assert _third_party(modules) <= _LS_PACKAGES, sorted(_third_party(modules) - _LS_PACKAGES)


def test_a_command_s_help_loads_its_own_module_and_no_other_command(project_with_store: Path) -> None:
    code, modules = _imports("ls", "--help", cwd=project_with_store)
    assert code == 0
    commands = {name for name in modules if name.startswith("bench.cli.") and name.endswith("_cmd")}
    assert commands == {"bench.cli.ls_cmd"}
    assert not [name for name in modules if _under(name, _NEVER_FOR_LS)]


def test_walking_the_tree_loads_every_command_of_the_table() -> None:
    from bench.cli import build_parser
    from bench.cli.commands import COMMANDS

    table = next(action for action in build_parser()._actions if action.dest == "command")
    assert table.choices is not None
    parsers = dict(table.choices)  # every command's module imported, each parser prepared with the common options
    assert list(parsers) == [command.name for command in COMMANDS]
    for name, parser in parsers.items():
        assert parser.prog == f"stele-bench {name}"
        assert {"--json", "--store", "--debug"} <= set(parser._option_string_actions)
