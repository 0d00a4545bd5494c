"""Every subcommand's arguments, fuzzed (issue 36, build item 5): whatever the words, the command line answers with
a result or a refusal in one line (one JSON object with --json, valid UTF-8 either way), never a traceback, never a
bug's exit 70, within a deadline and a memory limit.

The arguments come from the parser itself, so a command added later is fuzzed without anyone listing it: a path
argument gets a hostile file (a FIFO, /dev/zero, a symlink loop, a sparse 200 MB file, JSON nested 100,000 deep,
a name that is not UTF-8, a directory whose documents are each of those: tests/fuzz/hostile.py) or random text;
any other argument random text, numbers past every range, NaN and infinity, and bytes that are not UTF-8. Each case
runs ``main()`` in a forked copy of the test process (tests/fuzz/forked_cli.py): a subprocess's isolation at a
call's cost. Commands that reach further than the machine are pointed at nothing: no Docker engine (``DOCKER_HOST``
at a missing socket), an S3 endpoint on a closed port, a provisioner from a short list of harmless programs, an
executor that is local or on a closed port. CI runs ten fixed cases a command; ``FUZZ_EXAMPLES=N`` runs N random
ones, for a deeper search.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forked_cli import run_forked
from hostile import SPECIAL, make_hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.cli import build_parser
from bench.store import Store

NOT_UTF8 = os.fsdecode(b"not-utf8-\xff\xfe")
PATHS = [*SPECIAL, *(f"in-{name}" for name in SPECIAL), NOT_UTF8, "."]
HARMLESS_PROVISIONERS = ["true", "false", "/nonexistent/provisioner", "cat --", "./missing"]
EXECUTORS = ["local", "ray://127.0.0.1:1", "ray:", "ray://[::1]:1", "ray:auto:x", "spark://x"]
NUMBERS = ["0", "-1", "1", "nan", "NaN", "inf", "-inf", "1e400", "9" * 40, "2", "0.5", "1_0", "٣", "²", "0x10", ""]


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _commands(child, (*words, name))
            return
    yield words, parser


COMMANDS = dict(_commands(build_parser()))


def _text() -> st.SearchStrategy[str]:
    """A word as argv can hold it: any text without NUL, or bytes that are not UTF-8, as the system decodes them."""
    plain = st.text(st.characters(blacklist_characters="\x00"), max_size=40)
    raw = st.binary(max_size=24).filter(lambda data: b"\x00" not in data).map(os.fsdecode)
    return st.one_of(st.sampled_from(NUMBERS), plain, raw)


def _relative_name() -> st.SearchStrategy[str]:
    return st.text(st.characters(blacklist_characters="\x00/"), min_size=1, max_size=20).filter(
        lambda name: name not in (".", "..")
    )


def _value(action: argparse.Action) -> st.SearchStrategy[str]:
    kind = getattr(action.type, "__name__", "")
    if action.dest == "provisioner":
        return st.sampled_from(HARMLESS_PROVISIONERS)
    if action.dest == "executor":
        return st.sampled_from(EXECUTORS) | _text()
    if action.dest == "store" and action.option_strings:
        return st.sampled_from([*PATHS, "s3://stele-bench-fuzz/x", "s3://X", "ftp://host/x"]) | _text()
    if kind == "Path" or action.dest in ("repository", "bundle"):
        return st.sampled_from(PATHS) | _relative_name() | _text()
    if action.choices is not None:
        return st.sampled_from([str(choice) for choice in action.choices]) | _text()
    return _text()


@st.composite
def _argv(draw: st.DrawFn, words: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    argv = list(words)
    for action in parser._actions:
        if action.dest in ("help", "json", "debug") or isinstance(action, argparse._SubParsersAction):
            continue
        if not action.option_strings:  # a positional: always given (an optional one nearly always)
            if action.required or draw(st.integers(0, 4)):
                argv.append(draw(_value(action)))
        elif action.required or draw(st.booleans()):
            if action.nargs == 0:
                argv.append(action.option_strings[0])
            else:
                argv += [draw(st.sampled_from(action.option_strings)), draw(_value(action))]
    if draw(st.booleans()):
        argv.insert(draw(st.integers(0, len(argv))), "--json")
    return argv


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a small store, the hostile files beside it, and nowhere for the commands to reach out to."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "stele-bench.toml").write_text("[project]\nformat = 1\n", encoding="utf-8")
    Store(root / "store").put_bytes(b"one object\n")
    make_hostile(root)
    return root


def _environment(home: Path) -> dict[str, str]:
    return {
        "DOCKER_HOST": f"unix://{home}/no-docker.sock",
        "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
        "AWS_ACCESS_KEY_ID": "fuzz",
        "AWS_SECRET_ACCESS_KEY": "fuzz",
        "STELE_BENCH_STORE_CACHE": "off",
        "STELE_BENCH_CACHE": str(home / "cache"),
        "SANDBOX_LEASE_DIR": str(home / "leases"),
        "RECALL_HOME": str(home / "recall"),
        "STELE_BENCH_EXECUTOR": "local",
        "STELE_BENCH_PROJECT": str(home),
    }


def _check(home: Path, argv: list[str]) -> None:
    ran = run_forked(argv, home, _environment(home))
    problems = ran.problems(as_json="--json" in argv)
    assert not problems, f"{argv!r}: {problems}\nstdout: {ran.stdout[-600:]!r}\nstderr: {ran.stderr[-2000:]!r}"


@pytest.mark.parametrize("words", sorted(COMMANDS), ids=" ".join)
def test_fuzzed_arguments_get_a_result_or_a_one_line_refusal(home: Path, words: tuple[str, ...]) -> None:
    @settings(
        max_examples=int(os.environ.get("FUZZ_EXAMPLES", "10")),
        derandomize=not os.environ.get("FUZZ_EXAMPLES"),  # CI: the same cases every run; deeper runs: new ones
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(_argv(words, COMMANDS[words]))
    def case(argv: list[str]) -> None:
        _check(home, argv)

    case()


# Where issue 36 found a hang, unbounded memory or exit 70: each named case, plain and with --json.
NAMED = [
    (["verify", "{}"], ("fifo", "zero", "loop", "big", "dir")),
    (["run", "{}"], ("in-fifo", "in-zero", "in-loop", "fifo", "loop")),
    (["status", "{}"], ("in-fifo", "in-zero", "loop")),
    (["pin", "{}"], ("in-fifo", "in-zero", "loop")),
    (["prereg", "freeze", "{}"], ("in-fifo", "in-zero", "loop")),
    (["gateway", "serve", "--config", "{}", "--log-dir", "logs"], ("fifo", "zero", "loop", "big")),
    (["fence", "check", "--config", "{}", "--pair-cap", "1"], ("fifo", "zero", "loop", "big")),
    (["--store", "{}", "store", "ls"], ("loop", "fifo")),
    (["new", "suite", "suites/x", "--repo", "{}", "--commit", "a" * 40], ("loop", "fifo", "zero")),
    (["store", "put", "{}"], ("fifo", "zero", "loop")),
    (["provision", "digest", "{}"], ("fifo", "zero", "loop")),
    (["store", "gc", "--grace-seconds", "{}"], ("nan", "inf", "-1")),
]


@pytest.mark.parametrize(
    "argv", [[word.replace("{}", hostile) for word in argv] for argv, kinds in NAMED for hostile in kinds], ids=" ".join
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_each_hostile_input_the_issue_named_is_refused_in_one_line(home: Path, argv: list[str], as_json: bool) -> None:
    full = ["--json", *argv] if as_json else argv
    ran = run_forked(full, home, _environment(home))
    assert not ran.problems(as_json), (full, ran.problems(as_json), ran.stderr[-2000:])
    store_location = argv[0] == "--store"  # no store there is the store's refusal (8), as for any empty directory
    assert ran.code in ((2, 8) if store_location else (2, 6, 9)), (full, ran.code, ran.stderr[-2000:])


@pytest.mark.parametrize("raw", [b"\xff", b"caf\xe9", b"\xed\xa0\x80", b"a\x80b/c"], ids=repr)
def test_non_utf8_arguments_come_back_escaped_in_valid_json(home: Path, raw: bytes) -> None:
    word = os.fsdecode(raw)
    for argv in (["--json", "store", "cat", word], ["--json", "verify", word], ["--json", "store", "put", word]):
        ran = run_forked(argv, home, _environment(home))
        assert not ran.problems(as_json=True), (argv, ran.problems(True))
        assert raw not in ran.stdout  # escaped, never echoed raw
