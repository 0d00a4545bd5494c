"""Reading an evidence corpus: a folder of markdown notes, ADRs and exported issue threads.

The convention is deliberately small so any project's notes can follow it by adding a line or two:

- every ``*.md`` or ``*.txt`` file below the corpus root is one document; its id is its corpus-relative POSIX path;
  any other file is an error (a file the memory would silently not hold is a check that covers nothing);
- the title is the first ``# `` heading (else the file name);
- header lines, anywhere in the file, each ``Key: value`` at the start of a line:
    ``Kind: decision``   one of ``note``, ``decision``, ``issue``; default ``decision`` under ``adr/`` or
                         ``decisions/``, ``issue`` under ``issues/``, else ``note``;
    ``Anchors: src/cache.py, src/store/``   workspace-relative paths this knowledge is about (a trailing ``/``
                         anchors a whole directory); repeatable;
    ``Related: notes/other.md``   corpus-relative ids of related documents; markdown links to other corpus
                         documents count too;
- ``## `` headings split a document into passages, the unit of full-text and semantic retrieval.

Header lines are metadata: they are kept out of passage text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

__all__ = ["DocKind", "EvidenceNote", "NoteFormatError", "Passage", "read_corpus"]

_HEADER = re.compile(r"^(kind|anchors|related):[ \t]*(.*)$", re.IGNORECASE)
_LINK = re.compile(r"\]\(([^)#\s]+\.(?:md|txt))(?:#[^)]*)?\)")
_SUFFIXES = frozenset({".md", ".txt"})


class NoteFormatError(ValueError):
    """The evidence corpus breaks the convention; the message names the file and line."""


class DocKind(StrEnum):
    NOTE = "note"
    DECISION = "decision"
    ISSUE = "issue"


@dataclass(frozen=True)
class Passage:
    heading: str
    text: str


@dataclass(frozen=True)
class EvidenceNote:
    id: str
    kind: DocKind
    title: str
    anchors: tuple[str, ...]
    related: tuple[str, ...]
    passages: tuple[Passage, ...]


def read_corpus(root: Path) -> list[EvidenceNote]:
    """Every document of the corpus at ``root`` (a directory, or a single file), sorted by id."""
    if root.is_file():
        return [_read(root.name, root.read_text(encoding="utf-8"))]
    if not root.is_dir():
        raise NoteFormatError(f"evidence corpus {root} does not exist; pass the restored artifact path")
    documents = []
    for path in sorted(p for p in root.rglob("*") if not p.is_dir()):
        rel = path.relative_to(root).as_posix()
        if path.suffix.lower() not in _SUFFIXES:
            raise NoteFormatError(
                f"evidence file {rel!r} is not markdown or text; convert it or move it out of the corpus"
            )
        documents.append(_read(rel, path.read_text(encoding="utf-8")))
    if not documents:
        raise NoteFormatError(f"evidence corpus {root} holds no documents")
    ids = {d.id for d in documents}
    for doc in documents:
        unknown = [r for r in doc.related if r not in ids]
        if unknown:
            raise NoteFormatError(f"{doc.id}: Related names {', '.join(unknown)}, which the corpus does not hold")
    return documents


def _read(doc_id: str, text: str) -> EvidenceNote:
    kind: DocKind | None = None
    anchors: list[str] = []
    related: list[str] = []
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header is None:
            body.append(line)
            continue
        key, value = header.group(1).lower(), header.group(2).strip()
        where = f"{doc_id}:{number}"
        if key == "kind":
            kind = _kind(value, where)
        elif key == "anchors":
            anchors.extend(_anchor(v, where) for v in _items(value))
        else:
            related.extend(_resolve(doc_id, v) for v in _items(value))
    # Markdown links are relative to the linking document, Related ids to the corpus root.
    related.extend(_resolve(doc_id, "./" + m) for m in _LINK.findall(text) if "://" not in m and not m.startswith("/"))
    title, passages = _passages(doc_id, body)
    return EvidenceNote(
        id=doc_id,
        kind=kind or _default_kind(doc_id),
        title=title,
        anchors=tuple(dict.fromkeys(anchors)),
        related=tuple(r for r in dict.fromkeys(related) if r != doc_id),
        passages=passages,
    )


def _passages(doc_id: str, lines: list[str]) -> tuple[str, tuple[Passage, ...]]:
    title = PurePosixPath(doc_id).stem
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in lines:
        if line.startswith("# ") and title == PurePosixPath(doc_id).stem and not sections[0][1]:
            title = line[2:].strip()
        elif line.startswith("## "):
            sections.append((line[3:].strip(), []))
        else:
            sections[-1][1].append(line)
    passages = tuple(
        Passage(heading=heading, text="\n".join(body).strip())
        for heading, body in sections
        if "\n".join(body).strip() or heading
    )
    # A document with no body still gets one passage, so its title stays searchable.
    return title, passages or (Passage(heading="", text=""),)


def _items(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _kind(value: str, where: str) -> DocKind:
    try:
        return DocKind(value.lower())
    except ValueError:
        allowed = ", ".join(k.value for k in DocKind)
        raise NoteFormatError(f"{where}: Kind {value!r} is not one of {allowed}") from None


def _anchor(value: str, where: str) -> str:
    parts = value.rstrip("/").split("/")
    if value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
        raise NoteFormatError(f"{where}: anchor {value!r} is not a workspace-relative POSIX path (no /, .., or \\)")
    return value


def _resolve(doc_id: str, target: str) -> str:
    if target.startswith("./") or target.startswith("../"):
        parts: list[str] = list(PurePosixPath(doc_id).parent.parts)
        for part in PurePosixPath(target).parts:
            if part == "..":
                if not parts:
                    raise NoteFormatError(f"{doc_id}: link {target!r} leaves the corpus")
                parts.pop()
            elif part != ".":
                parts.append(part)
        return "/".join(parts)
    return target


def _default_kind(doc_id: str) -> DocKind:
    top = PurePosixPath(doc_id).parts[0].lower() if "/" in doc_id else ""
    if top in ("adr", "adrs", "decisions"):
        return DocKind.DECISION
    if top == "issues":
        return DocKind.ISSUE
    return DocKind.NOTE
