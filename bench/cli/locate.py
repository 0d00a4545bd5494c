"""Where a command's store is: ``--store``, else ``$STELE_BENCH_STORE``, else the project's ``store/``.

The project is ``--project``, else ``$STELE_BENCH_PROJECT``, else found by walking up from the working directory
(:mod:`bench.project`). Only commands that write create a store; one that only reads is refused, naming the path,
when nothing was ever written there, instead of leaving an empty store behind.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import BenchError, StoreNotFound
from ..pipeline.runtime import Runtime
from ..project import Project, open_project
from ..run.catalogue import runtime
from ..store import Store

__all__ = ["STORE_VARIABLE", "open_store", "project_of", "store_path", "store_path_or_none", "store_runtime"]

STORE_VARIABLE = "STELE_BENCH_STORE"
_INDEX = "index.sqlite"  # what a store directory holds once anything was written (bench.store.backends.sqlite)


def project_of(args: argparse.Namespace) -> Project:
    """The command's project; refused (exit 7) naming where it looked."""
    return open_project(args.project)


def store_path(args: argparse.Namespace) -> Path:
    if args.store is not None:
        return Path(args.store)
    from_environment = os.environ.get(STORE_VARIABLE)
    if from_environment:
        return Path(from_environment)
    return project_of(args).store


def store_path_or_none(args: argparse.Namespace) -> Path | None:
    """The store path when one can be named (for messages); None when no project or option names one."""
    try:
        return store_path(args).resolve()
    except (BenchError, AttributeError):
        return None


def open_store(args: argparse.Namespace, *, create: bool) -> Store:
    """The store; with ``create`` False a directory that holds none is refused rather than made into one."""
    path = store_path(args)
    if not create and not (path / _INDEX).is_file():
        raise StoreNotFound(path.resolve())
    return Store(path)


def store_runtime(args: argparse.Namespace, *, create: bool) -> Runtime:
    """What stages run with: the catalogue and services over the command's store."""
    return runtime(open_store(args, create=create).location)
