"""Where a symlink in a tree points: inside the tree, or somewhere a packaged corpus must never reach.

A link is resolved the way the kernel would inside an exported tree: component by component from the link's
directory, following any other link of the tree met on the way. A target that is absolute, climbs above the
root, or cannot be resolved (a loop) is refused. A target that simply does not exist inside the tree is fine:
a dangling link reaches nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

__all__ = ["check_symlinks"]

_MAX_HOPS = 40  # the kernel's own limit on links followed in one lookup (MAXSYMLINKS)


class _Refused(Exception):
    pass


def check_symlinks(links: Mapping[str, bytes]) -> Iterator[tuple[str, str]]:
    """``(path, reason)`` for every link in ``links`` (tree path -> target bytes) that leaves the tree."""
    targets = {path: os.fsdecode(target) for path, target in links.items()}
    for path in sorted(targets):
        try:
            _resolve(path.split("/")[:-1], targets[path], targets, 0)
        except _Refused as refused:
            yield path, f"is a symlink to {targets[path]!r}, which {refused}"


def _resolve(start: list[str], target: str, links: Mapping[str, str], hops: int) -> list[str]:
    if target.startswith("/"):
        raise _Refused("is absolute; a packaged tree may only link inside itself")
    stack = list(start)
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                raise _Refused("resolves outside the tree")
            stack.pop()
            continue
        stack.append(part)
        inner = links.get("/".join(stack))
        if inner is not None:
            if hops >= _MAX_HOPS:
                raise _Refused(f"does not resolve within {_MAX_HOPS} links (a symlink loop)")
            stack = _resolve(stack[:-1], inner, links, hops + 1)
    return stack
