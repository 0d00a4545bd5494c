"""A run of a suite through the pipeline, as `demo` and `run` record it: when, what ran, what it published.

Stored as a document under the ref ``runs/<suite>/<UTC start>``, so `stele-bench ls runs` lists runs and gc keeps
each run's published tree (and with it everything the bundle's lineage reaches).
"""

from __future__ import annotations

import time
from typing import Annotated, Literal

from pydantic import Field

from ..contracts import Document, TreeDigest
from ..store import Store

__all__ = ["RUNS_PREFIX", "RunRecord", "record_run", "run_records"]

RUNS_PREFIX = "runs/"


class RunRecord(Document):
    kind: Literal["run-record"] = "run-record"
    schema_version: Literal[1] = 1
    suite_id: str
    plan: str  # how the plan was asked for: "suite=<dir>" or "plan=<spec>"
    attempts: Annotated[int, Field(ge=1)] | None  # None: the suite's own number
    started: float
    ended: float
    executed: Annotated[int, Field(ge=0)]  # stage invocations that ran (the rest were cached)
    stages: tuple[str, ...]  # the stages that ran, each once
    published: TreeDigest
    verified: bool


def record_run(store: Store, record: RunRecord) -> str:
    """Store ``record`` and point a new ref at it; returns the ref's name."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(record.started))
    name = f"{RUNS_PREFIX}{record.suite_id}/{stamp}"
    store.set_ref(name, store.put_document(record))
    return name


def run_records(store: Store) -> list[tuple[str, RunRecord]]:
    """Every recorded run, newest first."""
    found = [
        (name, store.get_document(digest, RunRecord))
        for name, digest in store.refs().items()
        if name.startswith(RUNS_PREFIX)
    ]
    return sorted(found, key=lambda item: item[1].started, reverse=True)
