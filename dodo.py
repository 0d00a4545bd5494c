"""doit pipeline: the run plan named by `plan=` (default: the bundled demo plan) as one task per stage invocation.

doit list                    the tasks of the plan
doit                         run what is not cached
doit -n 2                    two workers over one store
doit plan=PATH store=DIR     another plan spec or store (a directory or s3://BUCKET/PREFIX)
doit executor=ray://HEAD:PORT -n 8 -P thread
                             each invocation as a Ray task on a node with a Docker engine
"""

import os
from pathlib import Path

from doit import get_var

from bench.cli.signals import install_stop_signals
from bench.pipeline.doit_tasks import doit_tasks
from bench.pipeline.executor import parse_executor
from bench.pipeline.plans import load_plan
from bench.run.catalogue import PLAN_BUILDERS, STAGES, runtime
from bench.store.location import store_location

# SIGTERM unwinds a running stage like Ctrl-C, so its containers, provisioner and gateway are ended on the way out.
install_stop_signals()

DOIT_CONFIG = {
    "dep_file": os.environ.get("STELE_BENCH_DOIT_DB", ".doit.sqlite"),
    "backend": "sqlite3",
    "default_tasks": None,
    "verbosity": 2,
}

PLAN = Path(get_var("plan", "manifests/plans/example.json"))
STORE = store_location(get_var("store", os.environ.get("STELE_BENCH_STORE", "store")))
EXECUTOR = parse_executor(get_var("executor", os.environ.get("STELE_BENCH_EXECUTOR", "local")))
OVERRIDES = {"attempts": int(get_var("attempts"))} if get_var("attempts") else {}


def task_plan():  # doit reads task_* names; the plan yields one top-level task per invocation
    run = runtime(STORE)
    yield from doit_tasks(load_plan(PLAN, run.open_store(), PLAN_BUILDERS, STAGES, OVERRIDES), run, EXECUTOR)
