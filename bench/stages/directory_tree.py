"""The ``directory-tree`` stage: a directory on disk hashed into a store tree, observed by its stat data.

With ``tree-summary`` it makes the smallest real plan (:func:`bench.run.directory_plan.directory_summaries`),
which the pipeline's tests and the no-op rerun benchmark run at scale.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..builder.context import StageContext
from ..builder.stage import NoInputs, Ports, StageKind, stage
from ..contracts import ContractModel, Sha256, TreeDigest
from ..store import tree_from_directory

__all__ = ["DirectoryParams", "DirectoryTree", "directory_fingerprint", "directory_tree"]


class DirectoryParams(ContractModel):
    """``directory`` as given (relative to where the plan runs); ``fingerprint`` from its stat data."""

    directory: str
    fingerprint: Sha256


class DirectoryTree(Ports):
    tree: TreeDigest


def directory_fingerprint(directory: Path) -> Sha256:
    """A cheap observation of a directory: names, modes, sizes and mtimes, as Make would look at it.

    Reading a stat is enough to tell that nothing changed; when something did, the stage re-hashes the bytes.
    """
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files) + dirs:
            path = os.path.join(root, name)
            info = os.lstat(path)
            relative = os.path.relpath(path, directory)
            digest.update(f"{relative}\0{info.st_mode}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return Sha256(digest.hexdigest())


@stage("directory-tree", version=2, kind=StageKind.OBSERVED)
def directory_tree(context: StageContext, inputs: NoInputs, params: DirectoryParams) -> DirectoryTree:
    return DirectoryTree(tree=tree_from_directory(context.store, Path(params.directory)))
