"""A tool's output as Codex frames it for the model: the CLI's header lines (wall time, exit code, ...) before
``Output:`` are no part of what the tool answered, so re-deriving a memory tool's answer compares the rest.

The framings are the ones a real `demo --harness codex` carried (MCP tool, exec_command, apply_patch).
"""

from __future__ import annotations

import pytest

from bench.harness import harness_named

SPLIT = harness_named("codex").injection.split_tool_output


@pytest.mark.parametrize(
    ("carried", "own"),
    [
        ('Wall time: 0.1005 seconds\nOutput:\n{"entities":[],"relations":[]}', '{"entities":[],"relations":[]}'),
        (
            "Chunk ID: 431bfd\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 436\n"
            "Output:\nimport csv\n",
            "import csv\n",
        ),
        (
            "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n",
            "Success. Updated the following files:\n",
        ),
    ],
)
def test_the_cli_s_framing_is_not_the_tool_s_output(carried: str, own: str) -> None:
    assert SPLIT(carried) == (own, ())


@pytest.mark.parametrize(
    "text",
    [
        "plain output",
        "Output:\nno header of the CLI's",
        "Wall time: soon\nOutput:\nx",
        "x\nWall time: 1 seconds\nOutput:\n",
    ],
)
def test_an_output_the_cli_did_not_frame_is_kept_whole(text: str) -> None:
    assert SPLIT(text) == (text, ())


def test_only_the_cli_s_own_header_goes_once() -> None:
    inner = "Wall time: 1 seconds\nOutput:\nwritten by the tool"
    assert SPLIT(f"Wall time: 0.2 seconds\nOutput:\n{inner}") == (inner, ())
