"""Lineage graphs printed as text, JSON, Graphviz dot or Mermaid, each object and action once.

Text is the tree a person reads, depth first from the object asked about; an object already printed is named
again with ``(above)`` instead of its whole history. Dot and Mermaid draw objects as rounded nodes and actions as
boxes, with an edge from each input (labelled with its port) into the action and from the action to each output.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable

from ..contracts import Digest
from ..stages.lineage_graph import LineageGraph

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
        LineageFormat.DOT: _dot,
        LineageFormat.MERMAID: _mermaid,
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


def _object_label(graph: LineageGraph, digest: Digest) -> str:
    output = graph.output_name(digest)
    return f"{digest.short}\\n{output}" if output else f"{digest.short}\\nroot input"


def _dot(graph: LineageGraph) -> str:
    lines = ["digraph lineage {", "  rankdir=BT;", "  node [fontname=monospace];"]
    for digest in graph.order:
        lines.append(f'  "o{digest.hex}" [shape=ellipse, label="{_object_label(graph, digest)}"];')
    for key, node in graph.actions.items():
        lines.append(f'  "a{key.hex}" [shape=box, label="{node.stage}\\n{key.short}"];')
        for name, value in sorted(node.inputs.items()):
            lines.append(f'  "o{value.hex}" -> "a{key.hex}" [label="{name}"];')
        for value in _made_here(graph, key):
            lines.append(f'  "a{key.hex}" -> "o{value.hex}";')
    lines.append("}")
    return "\n".join(lines)


def _mermaid(graph: LineageGraph) -> str:
    lines = ["flowchart BT"]
    for digest in graph.order:
        label = _object_label(graph, digest).replace("\\n", "<br/>")
        lines.append(f'  o{digest.hex[:16]}(["{label}"])')
    for key, node in graph.actions.items():
        lines.append(f'  a{key.hex[:16]}["{node.stage}<br/>{key.short}"]')
        for name, value in sorted(node.inputs.items()):
            lines.append(f'  o{value.hex[:16]} -->|"{name}"| a{key.hex[:16]}')
        for value in _made_here(graph, key):
            lines.append(f"  a{key.hex[:16]} --> o{value.hex[:16]}")
    return "\n".join(lines)
