"""Recall of project notes from a local SQLite index, for Claude Code hooks. Standard library only.

This file is also copied as a standalone program next to a read-only index (run it with any python3 >= 3.9):

    python3 hook.py prompt --state state.sqlite   < UserPromptSubmit event JSON
    python3 hook.py recall --state state.sqlite   < PostToolUse event JSON (Read, Edit, Write, MultiEdit)

``prompt`` searches the notes with the words of the prompt (SQLite FTS5, BM25 ranking); ``recall`` walks the note
graph from the file the tool touched (anchors, then one more hop). Each prints one
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}`` object, or nothing when no note
matches. The context starts with a comment naming the route it came by, so a transcript reader can tell the two
apart.

Index layout (written elsewhere): ``node(key, kind, title, body, source)``, ``edge(src, dst, kind)`` and the FTS5
table ``passage(title, heading, body, source UNINDEXED)``; ``source`` is the note's path in the note folder and
file nodes are keyed ``file:<workspace-relative path>`` (a trailing ``/`` covers a directory).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
from pathlib import Path

__all__ = [
    "connect",
    "file_context",
    "file_recall",
    "graph_hits",
    "hook_context",
    "hook_recall",
    "main",
    "match_expression",
    "prompt_context",
    "prompt_recall",
    "search",
]

_WORD = re.compile(r"[A-Za-z0-9_]{3,}")
# Words too common to say what a prompt is about; one string reads better than eighty list items.
_STOPWORD_TEXT = (
    "about after again all also and any are been before being but can code could did does doing file "
    "files for from had has have her how into it's its just make more most not one only other our out "
    "over own please same should some such sure than that the their them then there these they this "
    "those too under use using very was what when where which while who why will with would you your "
    "yours"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_KIND_ORDER = {"decision": 0, "issue": 1, "note": 2}
_MAX_TERMS = 32
_SNIPPET = 700
_FIRST_DIGEST = 1500
_BUDGET = 4000


def connect(path: Path) -> sqlite3.Connection:
    """Open the index read-only; ``immutable`` lets it live on a read-only mount with no journal files."""
    if not path.is_file():
        raise FileNotFoundError(f"index {path} does not exist")
    conn = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def match_expression(text: str) -> str | None:
    """An FTS5 query OR-ing the distinctive words of ``text`` (each quoted, so no word is read as syntax)."""
    terms = [w for w in dict.fromkeys(w.lower() for w in _WORD.findall(text)) if w not in _STOPWORDS]
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms[:_MAX_TERMS])


def search(conn: sqlite3.Connection, text: str, limit: int) -> list[sqlite3.Row]:
    """The best passages for ``text``, at most one per note, best first."""
    expression = match_expression(text)
    if expression is None:
        return []
    rows = conn.execute(
        "SELECT source, title, heading, body, bm25(passage, 2.0, 1.5, 1.0) AS score FROM passage "
        "WHERE passage MATCH ? ORDER BY score, source LIMIT ?",
        (expression, limit * 8),
    ).fetchall()
    best: dict[str, sqlite3.Row] = {}
    for row in rows:
        best.setdefault(row["source"], row)
    return list(best.values())[:limit]


def graph_hits(conn: sqlite3.Connection, rel_path: str, depth: int = 2) -> list[tuple[str, str, str]]:
    """Notes reachable from the file nodes covering ``rel_path``: (source, kind, title), nearest and decisions first."""
    anchors = [
        key
        for (key,) in conn.execute("SELECT key FROM node WHERE kind = 'file'")
        if _covers(key[len("file:") :], rel_path)
    ]
    seen = {key: 0 for key in anchors}
    frontier = list(anchors)
    for level in range(1, depth + 1):
        nxt = []
        for key in frontier:
            for (other,) in conn.execute(
                "SELECT dst FROM edge WHERE src = ? UNION SELECT src FROM edge WHERE dst = ?", (key, key)
            ):
                if other not in seen:
                    seen[other] = level
                    nxt.append(other)
        frontier = nxt
    found: dict[str, tuple[int, str, str]] = {}
    for key, level in seen.items():
        row = conn.execute("SELECT kind, title, source FROM node WHERE key = ?", (key,)).fetchone()
        if row is not None and row["source"] and row["source"] not in found:
            found[row["source"]] = (level, row["kind"], row["title"])
    ordered = sorted(found.items(), key=lambda item: (item[1][0], _KIND_ORDER.get(item[1][1], 9), item[0]))
    return [(source, kind, title) for source, (_, kind, title) in ordered]


def _covers(anchor: str, rel_path: str) -> bool:
    return rel_path == anchor or (anchor.endswith("/") and rel_path.startswith(anchor))


def _digest(conn: sqlite3.Connection, source: str, limit: int) -> str:
    """The note's passages in order, headings kept, clipped to ``limit`` characters."""
    rows = conn.execute("SELECT heading, body FROM passage WHERE source = ? ORDER BY rowid", (source,)).fetchall()
    text = " ".join((f"{r['heading']}: " if r["heading"] else "") + r["body"] for r in rows)
    return _clip(text, limit)


def _clip(text: str, limit: int = _SNIPPET) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def prompt_recall(conn: sqlite3.Connection, prompt: str, limit: int = 3) -> tuple[str | None, list[str]]:
    """The prompt hook's context for ``prompt`` and the notes it holds, best first (None and [] when none match)."""
    rows = search(conn, prompt, limit)
    if not rows:
        return None, []
    items = []
    for row in rows:
        where = f"{row['title']} > {row['heading']}" if row["heading"] else row["title"]
        items.append((row["source"], f"- {row['source']}: {where}\n  {_clip(row['body'])}"))
    return _assemble("<!-- recall:prompt -->\nProject notes that may bear on this request:", items)


def prompt_context(conn: sqlite3.Connection, prompt: str, limit: int = 3) -> str | None:
    return prompt_recall(conn, prompt, limit)[0]


def file_recall(conn: sqlite3.Connection, rel_path: str, limit: int = 4) -> tuple[str | None, list[str]]:
    """The anchor hook's context for ``rel_path`` and the notes it holds, nearest first (None and [] when none)."""
    hits = graph_hits(conn, rel_path)[:limit]
    if not hits:
        return None, []
    # The first note is read whole (within reason): it is the one anchored nearest to the file.
    items = [
        (source, f"- [{kind}] {source}: {title}\n  {_digest(conn, source, _FIRST_DIGEST if n == 0 else _SNIPPET)}")
        for n, (source, kind, title) in enumerate(hits)
    ]
    return _assemble(f"<!-- recall:anchor {rel_path} -->\nProject notes about {rel_path}:", items)


def file_context(conn: sqlite3.Connection, rel_path: str, limit: int = 4) -> str | None:
    return file_recall(conn, rel_path, limit)[0]


def _assemble(head: str, items: list[tuple[str, str]]) -> tuple[str, list[str]]:
    """The context, and the sources of the items that fit the budget (a later item never jumps an earlier one)."""
    text, sources = head, []
    for source, item in items:
        if len(text) + len(item) + 2 > _BUDGET:
            break
        text += "\n\n" + item
        sources.append(source)
    return text, sources


def _relative(file_path: str, root: str) -> str | None:
    path = os.path.normpath(os.path.join(root, file_path))
    rel = os.path.relpath(path, os.path.normpath(root))
    return None if rel == ".." or rel.startswith("../") else rel.replace(os.sep, "/")


def hook_recall(
    event: str, data: dict[str, object], conn: sqlite3.Connection, root: str | None
) -> tuple[str, str | None, list[str]]:
    """The hook event's name, the context the ``event`` hook injects for the event ``data`` (None: nothing) and the
    notes that context holds, in the order it lists them."""
    if event == "prompt":
        return ("UserPromptSubmit", *prompt_recall(conn, str(data.get("prompt") or "")))
    tool_input = data.get("tool_input") or {}
    file_path = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    cwd = data.get("cwd")
    base = root or (cwd if isinstance(cwd, str) else None) or os.getcwd()
    rel = _relative(file_path, base) if isinstance(file_path, str) and file_path else None
    return ("PostToolUse", *(file_recall(conn, rel) if rel else (None, [])))


def hook_context(
    event: str, data: dict[str, object], conn: sqlite3.Connection, root: str | None
) -> tuple[str, str | None]:
    """The hook event's name and the context the ``event`` hook injects for the event ``data`` (None: nothing)."""
    name, context, _ = hook_recall(event, data, conn, root)
    return name, context


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Recall project notes for the hook event on stdin.")
    parser.add_argument("event", choices=("prompt", "recall"))
    parser.add_argument("--state", type=Path, default=Path(__file__).with_name("state.sqlite"))
    parser.add_argument("--root", help="workspace root for relative paths (default: the event's cwd)")
    args = parser.parse_args(argv)
    try:
        data = json.loads(sys.stdin.read() or "{}")
    except json.JSONDecodeError as exc:
        print(f"recall: the event on stdin is not JSON: {exc}", file=sys.stderr)
        return 1
    try:
        conn = connect(args.state)
    except (FileNotFoundError, sqlite3.Error) as exc:
        print(f"recall: cannot open {args.state}: {exc}", file=sys.stderr)
        return 1
    try:
        name, context = hook_context(args.event, data if isinstance(data, dict) else {}, conn, args.root)
    finally:
        conn.close()
    if context:
        out = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
