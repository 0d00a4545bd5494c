"""doit pipeline of this checkout: the tasks are the package's (bench/run/dodo.py), so an installed stele-bench runs
the same ones.

doit list                    the tasks of the plan
doit                         run what is not cached
doit -n 2                    two workers over one store
doit suite=DIR               a suite directory instead of the bundled example
doit plan=PATH store=DIR     another plan spec or store (a directory or s3://BUCKET/PREFIX)
doit executor=ray://HEAD:PORT -n 8 -P thread
                             each invocation as a Ray task on a node with a Docker engine
"""

from bench.run.dodo import DOIT_CONFIG, task_plan

__all__ = ["DOIT_CONFIG", "task_plan"]
