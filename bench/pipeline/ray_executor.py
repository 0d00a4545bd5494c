"""Stage invocations as Ray tasks, each on a node that has a Docker engine.

A node offers the custom resource ``docker`` (``ray start --resources='{"docker": N}'``: N invocations at once);
every invocation asks for one unit of it and no CPU of Ray's accounting (its containers are limited by their own
specs), and tasks are spread over the nodes. The task opens the runtime's store location on its node, runs the
invocation through the engine and returns its outputs; so a rerun skips whatever the action cache holds, wherever
it ran.

Failures. Ray re-runs a task whose worker or node died (``max_retries``), on any node with a free ``docker``
unit. The engine asks the action cache first, so an invocation whose result reached the store before its node died
is not run again (a completed paired attempt is never paid twice); one whose result did not is run again from
the start, after the runtime's ``recover`` hook (the sandbox sweep: containers and networks whose runner's lease
is dead) clears what the killed run left on this node. A stage that fails is not retried: it is the run's failure.

Progress. Each task prints ``NODE: running NAME (STAGE)`` on its node, which Ray forwards to the driver as it happens,
and the driver prints ``ran STAGE on NODE -> outputs`` when the task returns.

Every node, head included, runs the same stele-bench and Python version, with the store's environment (the AWS
variables) set where Ray is started; tasks run with the project root as working directory (``$STELE_BENCH_ROOT``,
else the checkout this package is in), since plans name challenge files relative to it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import ExecutorError
from ..stages.engine import action_key, cached_result
from .executor import Executor, Ran, invocation_inputs, invoke
from .plan import Invocation
from .runtime import Runtime

__all__ = ["RESOURCE", "RETRIES", "RayExecutor", "on_node", "project_root"]

RESOURCE = "docker"  # the custom resource of a node with a Docker engine; one unit per invocation
RETRIES = 3  # re-runs of a task whose worker or node died
CONNECT_ATTEMPTS = 3  # Ray's client server sometimes fails to start a session (ray-project/ray#63202)

_lock = threading.Lock()
_connected: str | None = None
_task: Any = None  # on_node as a Ray remote function, made once per connected process


def project_root() -> Path:
    """Where a task runs: ``$STELE_BENCH_ROOT``, else the checkout this package is in."""
    return Path(os.environ.get("STELE_BENCH_ROOT") or Path(__file__).resolve().parents[2])


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError(
            "the Ray executor needs Ray", hint="install it: pip install 'stele-bench[cluster]' (ray[client])"
        ) from exc
    return ray


def _connect(address: str) -> Any:
    """This process's connection to the cluster at ``address`` (made once, retried while the client server
    fails to start a session)."""
    global _connected, _task
    ray = _ray()
    with _lock:
        if _connected == address:
            return ray
        if _connected is not None:
            raise ExecutorError(f"this process is connected to Ray at {_connected}, not {address}")
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            try:
                ray.init(address=address, namespace="stele-bench", logging_level="WARNING", log_to_driver=True)
                break
            except (ConnectionError, RuntimeError) as exc:
                if attempt == CONNECT_ATTEMPTS:
                    raise ExecutorError(
                        f"cannot connect to the Ray cluster at {address}: {exc}",
                        hint="check that the head runs (`ray status` there) and that this Ray version matches it",
                    ) from exc
                time.sleep(2.0 * attempt)
        _connected, _task = address, ray.remote(on_node)
        return ray


def _node_label(ray: Any) -> str:
    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} ({context.get_node_id()[:8]})"


def on_node(runtime: Runtime, invocation_json: str, upstream: Mapping[str, str]) -> Ran:
    """The Ray task: run one invocation on this node and say which node it was."""
    ray = _ray()
    node = _node_label(ray)
    os.chdir(project_root())
    invocation = Invocation.model_validate_json(invocation_json)
    print(f"{node}: running {invocation.name} ({invocation.stage})", flush=True)
    if not _cached(runtime, invocation, upstream):
        runtime.recover(runtime.context())  # a killed run's leftovers on this node go before this one starts
    return replace(invoke(runtime, invocation_json, upstream), node=node)


def _cached(runtime: Runtime, invocation: Invocation, upstream: Mapping[str, str]) -> bool:
    store = runtime.open_store()
    stage = runtime.catalogue.get(invocation.stage)
    inputs = stage.parse_inputs(invocation_inputs(invocation, upstream)).flat()
    if not all(store.has(digest) for digest in inputs.values()):
        return False  # the engine refuses it with the missing input's name
    return cached_result(store, action_key(store, stage, inputs, stage.parse_params(invocation.params))) is not None


@dataclass(frozen=True)
class RayExecutor(Executor):
    """Invocations as tasks on the Ray cluster at ``address`` (``ray://HOST:PORT``, ``HOST:PORT`` or ``auto``)."""

    address: str

    def run(self, runtime: Runtime, invocation_json: str, upstream: Mapping[str, str]) -> Ran:
        ray = _connect(self.address)
        name = Invocation.model_validate_json(invocation_json).name
        task = _task.options(
            name=name,
            num_cpus=0,
            resources={RESOURCE: 1},
            max_retries=RETRIES,
            retry_exceptions=False,
            scheduling_strategy="SPREAD",
        )
        try:
            ran: Ran = ray.get(task.remote(runtime, invocation_json, dict(upstream)))
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
            raise ExecutorError(f"invocation {name} was lost with its node {RETRIES + 1} times: {exc}") from exc
        return ran
