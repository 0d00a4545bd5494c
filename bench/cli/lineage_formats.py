"""Lineage graphs printed as text, JSON, Graphviz dot or Mermaid, each object and action once.

Text is the tree a person reads, depth first from the object asked about; an object already printed is named
again with ``(above)`` instead of its whole history. Dot and Mermaid draw objects as rounded nodes and actions as
boxes, with an edge from each input (labelled with its port) into the action and from the action to each output.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass

from ..builder.lineage_graph import LineageGraph
from ..contracts import Digest

__all__ = ["LineageFormat", "render"]


class LineageFormat(enum.StrEnum):
    TEXT = "text"
    JSON = "json"
    DOT = "dot"
    MERMAID = "mermaid"


def render(graph: LineageGraph, form: LineageFormat) -> str:
    renderers: dict[LineageFormat, Callable[[LineageGraph], str]] = {
        LineageFormat.TEXT: _text,
        LineageFormat.JSON: lambda g: json.dumps(g.as_json(), indent=2, sort_keys=True),
        LineageFormat.DOT: lambda g: _draw(g, _DOT),
        LineageFormat.MERMAID: lambda g: _draw(g, _MERMAID),
    }
    return renderers[form](graph)


def _text(graph: LineageGraph) -> str:
    lines: list[str] = []
    shown: set[Digest] = set()
    # An explicit stack rather than recursion: a long chain of stages must not reach Python's recursion limit.
    stack: list[tuple[Digest, str, str]] = [(graph.root, "", "")]
    while stack:
        digest, indent, port = stack.pop()
        label = f"{indent}{port + ': ' if port else ''}{digest}"
        key = graph.producer.get(digest)
        if digest in shown:
            lines.append(f"{label}  (above)")
            continue
        shown.add(digest)
        if key is None:
            lines.append(f"{label}  (root input)")
            continue
        node = graph.actions[key]
        lines.append(f"{label}  <- {graph.output_name(digest)} of {node.stage} (action {key.short})")
        if not node.inputs:  # an action with no stored inputs reads the outside world: its params are the root
            lines += [f"{indent}    from {name} = {value}" for name, value in sorted(node.params.items())]
        for name, value in reversed(sorted(node.inputs.items())):
            stack.append((value, indent + "    ", name))
    return "\n".join(lines)


def _made_here(graph: LineageGraph, key: Digest) -> list[Digest]:
    """The graph's objects this action is the recorded producer of."""
    return sorted({value for value in graph.actions[key].outputs.values() if graph.producer.get(value) == key})


@dataclass(frozen=True)
class _Syntax:
    """How one graph language writes the nodes and edges :func:`_draw` lists (ids are ``o``/``a`` + hex)."""

    head: tuple[str, ...]
    tail: tuple[str, ...]
    width: int  # hex digits of a digest in a node id
    newline: str  # a line break inside a label
    obj: Callable[[str, str], str]  # (id, label)
    action: Callable[[str, str], str]  # (id, label)
    into: Callable[[str, str, str], str]  # (object id, action id, port)
    out_of: Callable[[str, str], str]  # (action id, object id)


_DOT = _Syntax(
    head=("digraph lineage {", "  rankdir=BT;", "  node [fontname=monospace];"),
    tail=("}",),
    width=64,
    newline="\\n",
    obj=lambda node, label: f'  "{node}" [shape=ellipse, label="{label}"];',
    action=lambda node, label: f'  "{node}" [shape=box, label="{label}"];',
    into=lambda source, target, port: f'  "{source}" -> "{target}" [label="{port}"];',
    out_of=lambda source, target: f'  "{source}" -> "{target}";',
)
_MERMAID = _Syntax(
    head=("flowchart BT",),
    tail=(),
    width=16,
    newline="<br/>",
    obj=lambda node, label: f'  {node}(["{label}"])',
    action=lambda node, label: f'  {node}["{label}"]',
    into=lambda source, target, port: f'  {source} -->|"{port}"| {target}',
    out_of=lambda source, target: f"  {source} --> {target}",
)


def _draw(graph: LineageGraph, syntax: _Syntax) -> str:
    """Every object once, every action once, an edge from each input into its action and from the action to each
    object it is the recorded producer of."""

    def node(prefix: str, digest: Digest) -> str:
        return f"{prefix}{digest.hex[: syntax.width]}"

    lines = list(syntax.head)
    for digest in graph.order:
        output = graph.output_name(digest)
        label = f"{digest.short}{syntax.newline}{output if output else 'root input'}"
        lines.append(syntax.obj(node("o", digest), label))
    for key, action in graph.actions.items():
        lines.append(syntax.action(node("a", key), f"{action.stage}{syntax.newline}{key.short}"))
        for name, value in sorted(action.inputs.items()):
            lines.append(syntax.into(node("o", value), node("a", key), name))
        for value in _made_here(graph, key):
            lines.append(syntax.out_of(node("a", key), node("o", value)))
    return "\n".join([*lines, *syntax.tail])
