"""Every document read from outside goes through the one strict reader (issue 17, items 2 and 6).

Each reader is given a document whose key repeats (a fake value first, the real one last: what ``json.loads``
keeps), and each must refuse it naming the key, however its caller reaches it.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.analysis.prereg import load_preregistrations
from bench.contracts import Sha256
from bench.contracts.strict_json import MAX_DEPTH, parse_json, parse_json_object
from bench.errors import BenchError, ContractError
from bench.fence import load_config
from bench.gateway.policy import load_policy
from bench.packaging.graph import graph_texts
from bench.pipeline.plans import load_plan
from bench.provision import ProvisionRefused, RefusalReason, load_fixture
from bench.provision.messages import DestroyRequest, DestroyResponse, RestoreResponse, Verb
from bench.provision.protocol_call import CallRecord, ProcessLimits, run_verb
from bench.run.catalogue import PLAN_BUILDERS, STAGES
from bench.store import Store
from bench.suite.challenge import load_challenge
from bench.suite.suite import load_suite

REPEATED = b'{"kind": "forged", "kind": "real", "other": 1}\n'


def _file(tmp_path: Path, relative: str, data: bytes = REPEATED) -> Path:
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


READERS: dict[str, Callable[[Path], object]] = {
    "fixture": lambda tmp: load_fixture(_file(tmp, "fixture.json").parent),
    "suite manifest": lambda tmp: load_suite(_file(tmp, "suite.json")),
    "challenge manifest": lambda tmp: load_challenge(_file(tmp, "challenge/challenge.json").parent),
    "preregistration": lambda tmp: load_preregistrations(_file(tmp, "prereg/rename/v1.json").parent.parent),
    "fence config": lambda tmp: load_config(_file(tmp, "fence.json")),
    "plan spec": lambda tmp: load_plan(_file(tmp, "plan.json"), Store.in_memory(), PLAN_BUILDERS, STAGES),
    "gateway policy": lambda tmp: load_policy(_file(tmp, "policy.json"), Sha256.of(REPEATED)),
    "graph arm": lambda tmp: list(graph_texts(REPEATED, "graph.json")),
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_repeated_key_is_refused_by_every_reader_of_outside_json(tmp_path: Path, reader: str) -> None:
    with pytest.raises(BenchError, match="repeats the key 'kind'"):
        READERS[reader](tmp_path)


def test_a_graph_arm_in_json_lines_is_read_strictly_line_by_line() -> None:
    lines = b'{"node": "a"}\n{"node": "b", "node": "hidden"}\n'
    with pytest.raises(ContractError, match="line 2 is refused: it repeats the key 'node'"):
        list(graph_texts(lines, "graph.jsonl"))
    assert [t.text for t in graph_texts(b'{"node": "a"}\n{"node": "b"}\n', "g") if not t.pointer.endswith("#key")] == [
        "a",
        "b",
    ]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (b'{"n": ' + b"1" * 400 + b"}", "outside 64 bits"),
        (b'{"n": 1e400}', "too large for a 64-bit float"),
        (b'{"n": -Infinity}', "-Infinity"),
        (b'{"n": NaN}', "NaN"),
        (b'{"s": "\\ud800"}', "lone surrogate"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nests deeper"),
        (b"[" * 100_000 + b"]" * 100_000, "nests deeper"),
        (b'{"a": 1}{"b": 2}', "second JSON value"),
        (b'{"a": 1} trailing words', "trailing text that is not JSON"),
        ('\u00a0{"a": 1}'.encode(), "not JSON"),  # JSON's whitespace is four characters, not every Unicode space
        (b"", "empty"),
    ],
    ids=[
        "big-int",
        "big-float",
        "-inf",
        "nan",
        "surrogate",
        "depth-65",
        "depth-1e5",
        "two",
        "trailing",
        "nbsp",
        "empty",
    ],
)
def test_the_reader_refuses_and_says_why(document: bytes, problem: str) -> None:
    with pytest.raises(ContractError, match=problem):
        parse_json(document, "the document")


def test_depth_counts_only_the_brackets_outside_strings_whatever_the_strings_hold() -> None:
    deep, edge = "[" * (MAX_DEPTH + 1), "[" * MAX_DEPTH
    # Brackets, quotes, backslashes and characters beyond ASCII (two, three and four UTF-8 bytes) inside strings.
    inside = '"\u00e9 é ✓ 😀 [[{{ \\" \\\\ \\\\\\"]"'
    for wrap in (str, lambda text: text.encode()):
        assert parse_json(wrap(edge + inside + "]" * MAX_DEPTH), "doc")  # exactly the limit: read
        assert parse_json(wrap("[" + inside.replace("[[", "]]") + "]"), "doc")  # closers in a string close nothing
        for document in (deep + inside + "]" * (MAX_DEPTH + 1), deep + '"😀"' + "]" * (MAX_DEPTH + 1)):
            with pytest.raises(ContractError, match="nests deeper"):
                parse_json(wrap(document), "doc")
    with pytest.raises(ContractError, match="nests deeper"):  # a raw lone surrogate in a string: still measured
        parse_json(deep + '"\ud800"' + "]" * (MAX_DEPTH + 1), "doc")


def test_a_lone_surrogate_is_refused_however_it_is_spelled() -> None:
    # Escaped in bytes, escaped in a lowercase or uppercase hex, raw in a string: every route into the value.
    for document in (b'["ok", {"k": "\\udFff"}]', '["\\uD800"]', '["x\ud800"]', '{"\\udc00": 1}'):
        with pytest.raises(ContractError, match="lone surrogate"):
            parse_json(document, "the document")
    assert parse_json(b'["\\ud83d\\ude00", "\\\\ud800"]', "doc") == ["\U0001f600", "\\ud800"]


def test_the_reader_keeps_what_json_allows() -> None:
    assert parse_json_object(b' \t{"a": [1, -2.5e3, "\\u00e9", null, true]}\r\n', "doc") == {
        "a": [1, -2500.0, "\u00e9", None, True]
    }
    assert parse_json(b'{"n": 9223372036854775807}', "doc") == {"n": 2**63 - 1}


def _reply(tmp_path: Path, stdout: bytes) -> tuple[str, ...]:
    script = tmp_path / "reply.py"
    script.write_text(f"import sys\nsys.stdin.read()\nsys.stdout.buffer.write({stdout!r})\n")
    return (sys.executable, str(script))


def _destroy(prefix: tuple[str, ...], response: type[Any] = DestroyResponse) -> ProvisionRefused:
    log: list[CallRecord] = []
    request = DestroyRequest(project="p1")
    with pytest.raises(ProvisionRefused) as caught:
        asyncio.run(run_verb(prefix, Verb.DESTROY, request, response, ProcessLimits(timeout_seconds=20), log))
    assert log[-1].refusal is caught.value.reason_code
    return caught.value


@pytest.mark.parametrize(
    ("stdout", "reason", "problem"),
    [
        (b'{"ok": 1}', RefusalReason.INVALID_RESPONSE, "expected the JSON literal true"),
        (b'{"ok": true}{"ok": true}', RefusalReason.NOT_ONE_JSON_OBJECT, "second JSON value"),
        (b'{"ok": true} done', RefusalReason.NOT_ONE_JSON_OBJECT, "trailing text that is not JSON"),
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, RefusalReason.NOT_ONE_JSON_OBJECT, "nests deeper"),
    ],
    ids=["ok-1", "two-objects", "trailing-garbage", "nested-100000"],
)
def test_provisioner_replies_are_read_strictly(
    tmp_path: Path, stdout: bytes, reason: RefusalReason, problem: str
) -> None:
    refused = _destroy(_reply(tmp_path, stdout))
    assert refused.reason_code is reason
    assert problem in str(refused) and "\n" not in str(refused)


def test_a_provisioner_count_past_64_bits_is_refused(tmp_path: Path) -> None:
    reply = b'{"project": "p1", "queue_before_count": 1' + b"0" * 400 + b', "restore_seconds": 0.1}'
    refused = _destroy(_reply(tmp_path, reply), RestoreResponse)
    assert refused.reason_code is RefusalReason.NOT_ONE_JSON_OBJECT and "outside 64 bits" in str(refused)
    assert RestoreResponse.model_json_schema()["properties"]["queue_before_count"]["maximum"] == 2**63 - 1
