"""Lineage as a graph: every object and every action behind a digest, each exactly once.

:func:`~bench.builder.lineage.lineage` gives the same walk as a tree, in which an input shared by many actions (the
redacted corpus under every challenge, a start tree under every arm) is repeated under each: the published ref of
the demo printed 11,291 lines for 133 distinct objects. Here a shared object is one node with many consumers, and
the renderers (:mod:`bench.cli.lineage_formats`) print each node once.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..contracts import Digest
from ..errors import StageError
from ..store import Store
from .lineage import producer_of

__all__ = ["ActionNode", "LineageGraph", "lineage_graph"]


@dataclass(frozen=True)
class ActionNode:
    """One recorded action: its key, the result that recorded it, and what it read and wrote."""

    key: Digest
    result: Digest
    stage: str
    params: dict[str, Any]
    inputs: dict[str, Digest]
    outputs: dict[str, Digest]


@dataclass
class LineageGraph:
    """The objects reachable from ``root`` through their producing actions; ``producer`` maps an object to the
    key of the action that made it (root inputs have none)."""

    root: Digest
    order: list[Digest] = field(default_factory=list)  # objects, breadth first from the root
    producer: dict[Digest, Digest] = field(default_factory=dict)
    actions: dict[Digest, ActionNode] = field(default_factory=dict)

    def output_name(self, digest: Digest) -> str | None:
        key = self.producer.get(digest)
        if key is None:
            return None
        return next(name for name, value in self.actions[key].outputs.items() if value == digest)

    def as_json(self) -> dict[str, Any]:
        objects: dict[str, Any] = {}
        for digest in self.order:
            key = self.producer.get(digest)
            objects[digest] = (
                {"root_input": True} if key is None else {"action": key, "output": self.output_name(digest)}
            )
        actions = {
            key: {
                "stage": node.stage,
                "result": node.result,
                "params": node.params,
                "inputs": node.inputs,
                "outputs": node.outputs,
            }
            for key, node in self.actions.items()
        }
        return {"root": self.root, "objects": objects, "actions": actions}


def lineage_graph(store: Store, digest: Digest) -> LineageGraph:
    """Walk from ``digest`` down to its root inputs, visiting each object and each action once."""
    graph = LineageGraph(root=digest)
    pending: deque[Digest] = deque([digest])
    seen = {digest}
    while pending:
        current = pending.popleft()
        graph.order.append(current)
        produced = producer_of(store, current)
        if produced is None:
            if not store.has(current):
                raise StageError(f"{current} is neither stored nor produced by any recorded action")
            continue
        result_digest, result, key = produced
        graph.producer[current] = result.key
        if result.key not in graph.actions:
            graph.actions[result.key] = ActionNode(
                key=result.key,
                result=result_digest,
                stage=key.stage,
                params=dict(key.params),
                inputs=dict(key.inputs),
                outputs=dict(result.outputs),
            )
        for value in key.inputs.values():
            if value not in seen:
                seen.add(value)
                pending.append(value)
    return graph
