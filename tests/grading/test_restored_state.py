"""Grading against the runner's copy of the restored state: a state read is any tool output carrying its content,
however it was asked for; a declared instructions file must be the file restore wrote."""

from __future__ import annotations

from typing import Any

from scenario import PROMPT

from bench.grading import Channel, MemoryDeclaration, RunnerRecord, harness_conversation
from bench.grading.delivery import received_contexts, state_reads
from bench.grading.restored import PIECE, RestoredState, restored_state, static_mismatches
from tests.grading.exchanges import messages_exchange

NOTE = "Harbor card holds are dropped at import: holds are not money that moved, and 38.75 was counted twice."
STATE = {
    "/opt/knowledge/memory.jsonl": ('{"type":"entity","name":"adr/0002.md","observations":["' + NOTE + '"]}\n').encode()
}
WORKSPACE = [b"def import_rows(text):\n    return []\n"]
RECORD = RunnerRecord(prompts=(PROMPT,), cwd="/w")


def _one_call(name: str, given: dict[str, Any], output: str) -> list[Any]:
    call = {"type": "tool_use", "id": "c1", "name": name, "input": given}
    prompt = {"role": "user", "content": [{"type": "text", "text": PROMPT}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": output}]}
    answer = {"type": "message", "role": "assistant", "content": [call]}
    return [
        messages_exchange(0, [prompt], answer),
        messages_exchange(1, [prompt, {"role": "assistant", "content": [call]}, result], {}),
    ]


def _reads(name: str, given: dict[str, Any], output: str, memory: MemoryDeclaration | None = None) -> tuple[str, ...]:
    held = harness_conversation(_one_call(name, given, output), RECORD)
    declared = memory or MemoryDeclaration(phrases=("x",), state_paths=("/opt/knowledge",))
    return state_reads(held, declared, restored_state(STATE, WORKSPACE))


def test_a_glob_that_prints_the_state_is_a_state_read_whatever_its_path() -> None:
    printed = STATE["/opt/knowledge/memory.jsonl"].decode()[5:]
    assert _reads("Bash", {"command": "cat /opt/kn*/*.jsonl"}, printed) == (
        "message 2: Bash c1 carries the memory's state",
    )
    named = _reads("Bash", {"command": "ls /opt/knowledge"}, "memory.jsonl")
    assert named == ("message 1: Bash c1 names the memory's state",)  # the path alone, as before
    assert _reads("Bash", {"command": "cat README"}, "nothing of the memory here " * 5) == ()


def test_the_memory_s_own_tool_and_what_the_agent_itself_wrote_are_not_state_reads() -> None:
    own = MemoryDeclaration(phrases=("x",), tool_servers=("memory",))
    assert _reads("mcp__memory__search_nodes", {"query": "holds"}, NOTE * 2, own) == ()
    assert _reads("Bash", {"command": f"echo '{NOTE}' > A.md; cat A.md"}, NOTE, own) == ()
    assert len(NOTE) >= 2 * PIECE  # the note is long enough to hold a piece wherever it is cut


def test_a_declared_instructions_file_must_be_the_file_restore_wrote() -> None:
    path = "/home/dev/.claude/CLAUDE.md"
    state = restored_state({path: b"# Notes\n\nholds are not money that moved\n"}, ())
    block = f"<system-reminder>\nContents of {path} (user's private global instructions):\n\n{{}}\n</system-reminder>"
    declared = MemoryDeclaration(phrases=("holds are not money that moved",), static_files=(path,))
    for notes, mismatch in (("# Notes\n\nholds are not money that moved", False), ("# Notes\n\nplanted", True)):
        prompt = {
            "role": "user",
            "content": [{"type": "text", "text": block.format(notes)}, {"type": "text", "text": PROMPT}],
        }
        held = harness_conversation([messages_exchange(0, [prompt], {})], RECORD)
        received = received_contexts(held, declared)
        assert [c.channel for c in received] == [Channel.STATIC_CONTEXT]
        assert bool(static_mismatches(received, state)) is mismatch


def test_a_piece_is_found_wherever_it_sits_and_a_piece_of_another_length_is_asked_as_it_is() -> None:
    piece = NOTE[:PIECE]
    for output in (piece, "x" + piece, piece + "x", "é" * 3 + piece + "\n" + NOTE):  # at each edge, after non-ASCII
        held = harness_conversation(_one_call("Bash", {"command": "cat f"}, output), RECORD)
        declared = MemoryDeclaration(phrases=("x",), state_paths=("/opt/knowledge",))
        assert state_reads(held, declared, RestoredState(texts={}, pieces=(piece,))), output
    held = harness_conversation(_one_call("Bash", {"command": "cat f"}, "money that moved"), RECORD)
    declared = MemoryDeclaration(phrases=("x",), state_paths=("/opt/knowledge",))
    assert state_reads(held, declared, RestoredState(texts={}, pieces=("that moved",)))  # a bundle's own pieces
    assert not state_reads(held, declared, RestoredState(texts={}, pieces=(piece,)))
