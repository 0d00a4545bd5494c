"""The smallest real plan: for each directory, hash it into a tree, then summarise the tree."""

from __future__ import annotations

from pathlib import Path

from ..builder.stage import NoParams
from ..errors import ContractError
from ..pipeline.builder import PlanBuilder
from ..pipeline.plan import Plan
from ..stages.directory_tree import DirectoryParams, directory_fingerprint, directory_tree
from ..stages.tree_summary import tree_summary
from ..store import Store

__all__ = ["directory_summaries"]


def directory_summaries(base: Path, store: Store, directories: list[str]) -> Plan:
    plan = PlanBuilder()
    for directory in directories:
        path = base / directory
        if not path.is_dir():
            raise ContractError(f"plan input {directory!r} is not a directory under {base}")
        label = directory.replace("/", "-")
        params = DirectoryParams(directory=str(path), fingerprint=directory_fingerprint(path))
        tree = plan.add(f"tree-{label}", directory_tree, params)
        plan.add(f"summary-{label}", tree_summary, NoParams(), tree=tree["tree"])
    return plan.build()
