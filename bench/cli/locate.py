"""Where a command's store is: ``--store``, else ``$STELE_BENCH_STORE``, else the project's ``store/``; a store
is a directory or an S3 bucket (``s3://BUCKET/PREFIX``, see :mod:`bench.store.location`).

The project is ``--project``, else ``$STELE_BENCH_PROJECT``, else found by walking up from the working directory
(:mod:`bench.project`). Only commands that write create a store; one that only reads is refused, naming the path,
when nothing was ever written there, instead of leaving an empty store behind.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BenchError, StoreNotFound
from ..project import Project, open_project
from ..store import Store
from ..store.location import is_remote, store_location

if TYPE_CHECKING:
    from ..pipeline.runtime import Runtime

__all__ = [
    "STORE_VARIABLE",
    "holds_store",
    "open_store",
    "project_of",
    "store_path",
    "store_path_or_none",
    "store_runtime",
]

STORE_VARIABLE = "STELE_BENCH_STORE"
_INDEX = "index.sqlite"  # what a store directory holds once anything was written (bench.store.backends.sqlite)


def project_of(args: argparse.Namespace) -> Project:
    """The command's project; refused (exit 7) naming where it looked. A project naming a sandbox backend names it
    for every process the command starts, unless ``--sandbox`` or the variable chose already."""
    project = open_project(args.project)
    if project.sandbox_backend is not None:
        from ..sandbox.backends.choice import pin_backend  # only a project naming a backend pays for the import

        pin_backend(project)
    return project


def store_path(args: argparse.Namespace) -> str:
    """The store's location, spelled as every process opens it: an absolute directory or an S3 URL."""
    if args.store is not None:
        return store_location(args.store)
    from_environment = os.environ.get(STORE_VARIABLE)
    if from_environment:
        return store_location(from_environment)
    return store_location(project_of(args).store)


def store_path_or_none(args: argparse.Namespace) -> str | None:
    """The store location when one can be named (for messages); None when no project or option names one."""
    try:
        return store_path(args)
    except (BenchError, AttributeError):
        return None


def holds_store(location: str) -> bool:
    """Whether ``location`` names a store: a bucket, or a directory something was written to."""
    return is_remote(location) or (Path(location) / _INDEX).is_file()


def open_store(args: argparse.Namespace, *, create: bool) -> Store:
    """The store; with ``create`` False a directory that holds none is refused rather than made into one (a
    bucket is opened as it is: a read of what it lacks names the bucket)."""
    location = store_path(args)
    if not create and not holds_store(location):
        raise StoreNotFound(Path(location))
    return Store(location)


def declare_contracts() -> None:
    """Declare every document kind in this process: what reads references by type (fsck, gc, repair) must know each
    stored document's contract, or it would take a digest kept as a value for a reference."""
    from ..run import catalogue  # noqa: F401  (importing it declares every stage's and service's contracts)


def store_runtime(args: argparse.Namespace, *, create: bool) -> Runtime:
    """What stages run with: the catalogue and services over the command's store."""
    from ..run.catalogue import runtime  # every stage and service: only commands that run stages import it

    return runtime(open_store(args, create=create).location)
