"""Redaction removes exactly the auto-loaded context (and a fixture's declared paths), with a receipt."""

from __future__ import annotations

import pytest

from bench.builder import StageContext
from bench.builder.execution import execute
from bench.contracts import Digest, PortablePath
from bench.errors import ContractError
from bench.packaging import (
    AUTO_LOADED_CONTEXT_PATTERNS,
    HARNESS_CONTEXT,
    RedactionReceipt,
    RedactParams,
    auto_loaded_match,
    redact_tree,
)
from bench.packaging.redact import DECLARED_REASON, EMPTIED_REASON
from bench.run.catalogue import services
from bench.stages.redact import redact
from bench.store import EntryKind, FileEntry, Store, tree_from_entries, walk_tree

KEPT = {
    "README.md": b"# project\n",
    "src/app.py": b"print('app')\n",
    "src/claude_client.py": b"# talks to an API named claude\n",
    "docs/agents.md": b"lower-case prose about agents\n",
    "docs/.claude-notes": b"a name that only starts like .claude\n",
    "tools/cursor/cursor.py": b"# a directory named cursor, without the dot\n",
}
REMOVED = {
    "CLAUDE.md": b"always run make\n",
    "src/CLAUDE.md": b"nested memory\n",
    "src/deep/AGENTS.md": b"codex rules\n",
    ".claude/settings.json": b"{}\n",
    ".claude/skills/release/SKILL.md": b"how to release\n",
    "web/.cursor/rules/style.mdc": b"use tabs\n",
}


def _tree(store: Store, files: dict[str, bytes]) -> Digest:
    return tree_from_entries(store, [FileEntry(PortablePath(p), EntryKind.FILE, d) for p, d in files.items()])


def _paths(store: Store, tree: Digest) -> set[str]:
    return {path for path, entry in walk_tree(store, tree) if entry.kind is not EntryKind.DIRECTORY}


def test_nested_context_files_and_directories_are_removed_exactly(store: Store) -> None:
    source = _tree(store, KEPT | REMOVED)
    receipt = redact_tree(store, source)
    assert _paths(store, receipt.redacted) == set(KEPT)
    # Directories that held only removed entries go too (git holds no empty directory), each receipted.
    directories = {path for path, entry in walk_tree(store, receipt.redacted) if entry.kind is EntryKind.DIRECTORY}
    assert directories == {"src", "docs", "tools", "tools/cursor"}
    listed = {r.path: r for r in receipt.removed}
    assert set(listed) == set(REMOVED) | {
        ".claude",
        ".claude/skills",
        ".claude/skills/release",
        "web/.cursor",
        "web/.cursor/rules",
        "src/deep",
        "web",
    }
    assert (listed["src/deep"].reason, listed["web"].reason) == (EMPTIED_REASON, EMPTIED_REASON)
    for path, data in REMOVED.items():
        assert (listed[path].digest, listed[path].size) == (Digest.of(data), len(data))
    assert listed["src/CLAUDE.md"].reason == "CLAUDE.md"
    assert listed[".claude/skills/release/SKILL.md"].reason == ".claude/"
    assert listed["web/.cursor"].kind is EntryKind.DIRECTORY


def test_a_rerun_yields_the_same_digests(store: Store) -> None:
    source = _tree(store, KEPT | REMOVED)
    first = execute(StageContext(store, services()), redact, {"tree": source}, RedactParams())
    second = execute(StageContext(store, services()), redact, {"tree": source}, RedactParams())
    assert (first.executed, second.executed) == (True, False)
    assert first.outputs == second.outputs
    assert redact_tree(store, source) == store.get_document(first.outputs["receipt"], RedactionReceipt)


def test_a_clean_tree_comes_back_unchanged(store: Store) -> None:
    source = _tree(store, KEPT)
    receipt = redact_tree(store, source)
    assert (receipt.redacted, receipt.removed) == (source, ())


def test_fixture_paths_go_through_the_same_function_and_receipt(store: Store) -> None:
    source = _tree(store, KEPT | {"notes/answer.md": b"the fix is X\n"})
    receipt = redact_tree(store, source, (PortablePath("notes/answer.md"), PortablePath("tools/cursor")))
    assert _paths(store, receipt.redacted) == set(KEPT) - {"tools/cursor/cursor.py"}
    assert {r.path: r.reason for r in receipt.removed} == {
        "notes/answer.md": DECLARED_REASON,
        "tools/cursor": DECLARED_REASON,
        "tools/cursor/cursor.py": DECLARED_REASON,
        "notes": EMPTIED_REASON,
        "tools": EMPTIED_REASON,
    }


def test_a_declared_path_that_is_absent_is_an_error(store: Store) -> None:
    with pytest.raises(ContractError, match=r"notes/typo\.md"):
        redact_tree(store, _tree(store, KEPT), (PortablePath("notes/typo.md"),))


@pytest.mark.parametrize(
    "path",
    [
        "AGENT.md",
        "x/AGENTS.md",
        "CLAUDE.local.md",
        "GEMINI.md",
        "QWEN.md",
        ".github/copilot-instructions.md",
        ".aider.conf.yml",
        ".clinerules",
        ".cursorrules",
        ".goosehints",
        ".mcp.json",
        ".windsurfrules",
        ".roorules-code",
        ".codex",
        ".continue",
        ".gemini",
        ".github/instructions",
        ".junie",
        ".kiro",
        ".roo",
        ".windsurf",
        ".amazonq",
        ".openhands",
        "pkg/.claude",
        ".rules",
        "AGENTS.override.md",
        ".roomodes",
        ".cline",
        ".qwen",
    ],
)
def test_every_documented_harness_file_is_matched(path: str) -> None:
    assert auto_loaded_match(path) is not None


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "agents.md",
        "src/claude.py",
        "instructions/x.md",
        "github/instructions",
        ".claude-notes",
        "CLAUDE.md.bak",
        "docs/rules",
    ],
)
def test_ordinary_names_are_not_matched(path: str) -> None:
    assert auto_loaded_match(path) is None


def test_every_pattern_cites_the_harness_documentation() -> None:
    assert all(harness.source.startswith("https://") and harness.patterns for harness in HARNESS_CONTEXT)
    assert set(AUTO_LOADED_CONTEXT_PATTERNS) == {p for harness in HARNESS_CONTEXT for p in harness.patterns}
