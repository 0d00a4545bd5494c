"""Command-line conventions (issue 21, build item 5): `--version`, help everywhere, one exit code per error family
documented in the README, every environment variable documented, attempts refused before anything starts, and a
completion script bash can use."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bench
from bench import __version__
from bench.cli import ENVIRONMENT, build_parser, main
from bench.cli.completion_cmd import Shell, script
from bench.errors import EXIT_CODES, BenchError

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _json_line(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 1, captured.out  # one JSON object, nothing else on stdout
    parsed: dict[str, object] = json.loads(lines[0])
    return parsed


def test_version_prints_the_package_version_as_text_and_as_one_json_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"stele-bench {__version__}"
    assert main(["--json", "--version"]) == 0
    assert _json_line(capsys) == {"version": __version__}


def _parsers(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.ArgumentParser, str | None]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, child in action.choices.items():
                found.append((f"{path} {name}", child, helps.get(name)))
                found += _parsers(child, f"{path} {name}")
    return found


def test_every_command_and_every_argument_has_help() -> None:
    parser = build_parser()
    assert "developer" not in (parser.description or "") and "Paired benchmarks" in (parser.description or "")
    missing = []
    for path, child, summary in [("stele-bench", parser, "top"), *_parsers(parser, "stele-bench")]:
        if not summary:
            missing.append(path)
        for action in child._actions:
            if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
                continue
            if not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []


def _error_classes() -> set[type[BenchError]]:
    for module in pkgutil.walk_packages(bench.__path__, "bench."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found: set[type[BenchError]] = set()
    pending: list[type[BenchError]] = [BenchError]
    while pending:
        cls = pending.pop()
        found.add(cls)
        pending += cls.__subclasses__()
    return found


def test_exit_codes_are_one_per_family_and_each_is_documented_in_the_readme() -> None:
    classes = _error_classes()
    assert {cls.exit_code for cls in classes} <= set(EXIT_CODES)
    families = {cls.__name__: cls.exit_code for cls in BenchError.__subclasses__()}
    # A usage mistake and a broken contract no longer share 2; every direct family has a code of its own.
    assert families["ContractError"] != next(cls.exit_code for cls in classes if cls.__name__ == "UsageError")
    assert len(set(families.values())) >= len(families) - 1  # ProviderError shares the fence's family on purpose
    for code, meaning in EXIT_CODES.items():
        assert re.search(rf"^\| *`?{code}`? *\|", README, re.M), f"README's exit code table lacks {code} ({meaning})"


def test_every_environment_variable_the_package_reads_is_documented_in_help_and_readme() -> None:
    read: set[str] = set()
    for path in (REPO / "bench").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        read |= set(re.findall(r"environ(?:\.get)?[\[(]\"([A-Z][A-Z0-9_]+)\"", text))
        read |= set(re.findall(r"\"(STELE_BENCH_[A-Z0-9_]+)\"", text))
    assert read and read <= set(ENVIRONMENT), sorted(read - set(ENVIRONMENT))
    epilog = build_parser().epilog or ""
    for name in ENVIRONMENT:
        assert name in epilog
        assert re.search(rf"^\| *`{name}` *\|", README, re.M), f"README's environment table lacks {name}"


@pytest.mark.parametrize("attempts", ["0", "-1", "two"])
def test_attempts_out_of_range_are_a_one_line_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, attempts: str
) -> None:
    store = tmp_path / "store"
    assert main(["--json", "--store", str(store), "demo", f"--attempts={attempts}"]) == 2
    error = _json_line(capsys)["error"]
    assert isinstance(error, dict) and error["code"] == "usage" and "--attempts" in error["message"]
    assert not store.exists()  # refused before anything started


def test_more_attempts_than_the_preregistration_allows_is_refused_before_anything_starts(tmp_path: Path) -> None:
    store = tmp_path / "store"
    command = [sys.executable, "-m", "bench", "--store", str(store), "demo", "--attempts", "9"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr  # one line, not doit's traceback first
    assert "--attempts 9" in done.stderr and "allows at most 5" in done.stderr
    assert not store.exists()


def test_the_bash_completion_script_completes_commands_and_their_verbs(tmp_path: Path) -> None:
    completion = tmp_path / "completion.bash"
    completion.write_text(script(build_parser(), Shell.BASH))

    def complete(*words: str) -> set[str]:
        line = " ".join(["stele-bench", *words])
        program = (
            f"source {completion}; COMP_WORDS=({line}); COMP_CWORD={len(words)}; _stele_bench; "
            'printf "%s\\n" "${COMPREPLY[@]}"'
        )
        done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=120, check=True)
        return set(done.stdout.split())

    assert {"status", "store"} <= complete("st") and "demo" not in complete("st")
    assert complete("store", "f") == {"fsck"}
    assert "--format" in complete("lineage", "--f")
    assert complete("completion", "") >= {"bash", "zsh"}


def test_completion_prints_the_script_and_as_json_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    assert "complete -o default -F _stele_bench stele-bench" in capsys.readouterr().out
    assert main(["--json", "completion", "zsh"]) == 0
    assert "bashcompinit" in json.dumps(_json_line(capsys))
