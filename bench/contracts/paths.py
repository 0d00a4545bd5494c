"""Portable relative POSIX paths: the only spelling of a path inside any contract."""

from __future__ import annotations

import re
import unicodedata
from typing import ClassVar

from .digests import _PatternStr

__all__ = ["PortablePath", "check_entry_name", "check_portable_path"]

_DRIVE = re.compile(r"^[A-Za-z]:")
# Components of ASCII word characters and a few punctuation marks, none starting with '.': portable by every
# rule below (ASCII is NFC; no drive, NUL, backslash, '.' or '..' component is possible), so one match decides.
# Paths are checked per file when a tree is built, where the general checks cost more than hashing the file.
_PLAIN = re.compile(r"[\w+=@,~-][\w.+=@,~-]*(?:/[\w+=@,~-][\w.+=@,~-]*)*", re.ASCII)
_PLAIN_NAME = re.compile(r"[\w+=@,~-][\w.+=@,~-]*", re.ASCII)  # one component of _PLAIN


def check_entry_name(name: str) -> str | None:
    """Why ``name`` cannot be one component of a path, or None when it can."""
    if name == "":
        return "it has an empty component (a doubled, leading or trailing '/')"
    if name in (".", ".."):
        return f"it has a {name!r} component"
    if "\x00" in name:
        return "it contains NUL"
    if "/" in name:
        return "it contains '/'"
    if "\\" in name:
        return "it contains a backslash"
    return None


def check_portable_path(value: str) -> str | None:
    """Why ``value`` is not a portable relative POSIX path, or None when it is."""
    if value.startswith("/"):
        return "it is absolute"
    if _DRIVE.match(value):
        return "it starts with a drive letter"
    if unicodedata.normalize("NFC", value) != value:
        return "it is not in Unicode NFC form (the same name could be spelled two ways)"
    for component in value.split("/"):
        reason = check_entry_name(component)
        if reason is not None:
            return reason
    return None


class PortablePath(_PatternStr):
    """A relative POSIX path with no absolute root, drive, backslash, '.', '..', empty component or NUL.

    The pattern is what JSON Schema readers see; the component checks give each refusal its own reason.
    """

    pattern: ClassVar[re.Pattern[str]] = re.compile(
        r"^(?![A-Za-z]:)(?!\.{1,2}(/|\Z))(?!.*/\.{1,2}(/|\Z))"  # no drive, no '.' or '..' component
        r"[^/\\\x00]+(/[^/\\\x00]+)*\Z"  # non-empty components without backslash or NUL
    )
    meaning = "a portable relative POSIX path"
    quick_match = _PLAIN.fullmatch

    def __new__(cls, value: str) -> PortablePath:
        if isinstance(value, str) and _PLAIN.fullmatch(value):
            return str.__new__(cls, value)
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not {cls.meaning}: it is not a string")
        reason = check_portable_path(value)
        if reason is not None:
            raise ValueError(f"{value!r} is not {cls.meaning}: {reason}")
        return super().__new__(cls, value)

    @classmethod
    def joined(cls, parent: str, name: str) -> PortablePath:
        """``parent`` (empty, or a portable path and a '/') followed by the one component ``name``. Only ``name``
        is matched when it is plain: a walk builds a path per file, and matching each whole path again cost a
        twentieth of ingesting a tree; anything else gets the full check and its message."""
        if _PLAIN_NAME.fullmatch(name):
            return str.__new__(cls, parent + name)
        return cls(parent + name)

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.split("/"))
