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
import queue
import socket
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..builder.execution import action_key, cached_result
from ..errors import BenchError, ExecutorError
from .executor import Executor, Ran, invocation_inputs, invoke
from .plan import Invocation
from .runtime import Runtime

__all__ = ["RESOURCE", "RETRIES", "RayExecutor", "on_node", "project_root"]

RESOURCE = "docker"  # the custom resource of a node with a Docker engine; one unit per invocation
RETRIES = 3  # re-runs of a task whose worker or node died
CONNECT_ATTEMPTS = 3  # Ray's client server sometimes fails to start a session (ray-project/ray#63202)

REACH_SECONDS = 5.0  # how long a connection to the cluster's port may take before it is unreachable
POLL = 0.2  # seconds the dispatcher waits for a finished task before it looks for new submissions


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


def _connect(ray: Any, address: str) -> None:
    """Connect to the cluster at ``address``, again while the client server fails to start a session."""
    for attempt in range(1, CONNECT_ATTEMPTS + 1):
        try:
            ray.init(address=address, namespace="stele-bench", logging_level="WARNING", log_to_driver=True)
            return
        except (ConnectionError, RuntimeError) as exc:
            if attempt == CONNECT_ATTEMPTS:
                raise ExecutorError(
                    f"cannot connect to the Ray cluster at {address}: {exc}",
                    hint="check that the head runs (`ray status` there) and that this Ray version matches it",
                ) from exc
            time.sleep(2.0 * attempt)


Submission = tuple["Future[Ran]", str, tuple[Runtime, str, dict[str, str]]]


class _Dispatcher:
    """The one thread of this process that talks to Ray. doit's threads hand it invocations and wait on futures:
    a Ray client used from several threads at once crashed the driver here (SIGSEGV mid-run), so every Ray call
    of the process, connecting included, happens on this thread."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._submissions: queue.Queue[Submission] = queue.Queue()
        threading.Thread(target=self._serve, name="ray-dispatcher", daemon=True).start()

    def submit(self, name: str, arguments: tuple[Runtime, str, dict[str, str]]) -> Future[Ran]:
        future: Future[Ran] = Future()
        self._submissions.put((future, name, arguments))
        return future

    def _serve(self) -> None:
        running: dict[Any, tuple[Future[Ran], str]] = {}
        try:
            ray = _ray()
            _connect(ray, self.address)
            # No CPU from Ray's accounting: an invocation's containers are limited by their own specs.
            limits = {"num_cpus": 0, "resources": {RESOURCE: 1}, "max_retries": RETRIES, "retry_exceptions": False}
            task = ray.remote(**limits)(on_node)
            while True:
                for future, name, arguments in self._new(block=not running):
                    running[task.options(name=name, scheduling_strategy="SPREAD").remote(*arguments)] = (future, name)
                if running:
                    done, _ = ray.wait(list(running), num_returns=len(running), timeout=POLL)
                    for ref in done:
                        self._settle(ray, ref, *running.pop(ref))
        except BaseException as exc:  # the dispatcher is gone: no invocation may wait for it forever
            failure = exc if isinstance(exc, ExecutorError) else ExecutorError(f"the Ray executor stopped: {exc!r}")
            for future, _ in running.values():
                future.set_exception(failure)
            while True:
                self._submissions.get()[0].set_exception(failure)

    def _new(self, block: bool) -> list[Submission]:
        taken = [self._submissions.get()] if block else []
        while True:
            try:
                taken.append(self._submissions.get_nowait())
            except queue.Empty:
                return taken

    @staticmethod
    def _settle(ray: Any, ref: Any, future: Future[Ran], name: str) -> None:
        try:
            future.set_result(ray.get(ref))
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as exc:
            lost = ExecutorError(f"invocation {name} was lost with its node {RETRIES + 1} times: {exc}")
            future.set_exception(lost)
        except Exception as exc:  # the stage's own failure: the run's failure, as the stage raised it
            cause = getattr(exc, "cause", None)  # Ray wraps it in a RayTaskError; its family decides the exit code
            future.set_exception(cause if isinstance(cause, BenchError) else exc)


_dispatchers: dict[tuple[int, str], _Dispatcher] = {}
_dispatchers_lock = threading.Lock()


def _dispatcher(address: str) -> _Dispatcher:
    """This process's dispatcher for ``address`` (a forked doit worker makes its own: threads do not survive)."""
    with _dispatchers_lock:
        key = (os.getpid(), address)
        if key not in _dispatchers:
            _dispatchers[key] = _Dispatcher(address)
        return _dispatchers[key]


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
        name = Invocation.model_validate_json(invocation_json).name
        return _dispatcher(self.address).submit(name, (runtime, invocation_json, dict(upstream))).result()

    def check_reachable(self) -> None:
        """A TCP connection to the cluster's address: Ray's own client retries an unreachable one for minutes
        (a run refused only after 104 s), where a refused or silent port is known here within seconds."""
        where = self.address.removeprefix("ray://").rstrip("/")
        host, _, port = where.rpartition(":")
        if where == "auto" or not port.isdigit():
            return  # `auto` finds the cluster on this node; Ray names what it cannot find
        try:
            socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=REACH_SECONDS).close()
        except (OSError, OverflowError, ValueError) as exc:
            raise ExecutorError(
                f"the Ray cluster at {self.address} cannot be reached: {getattr(exc, 'strerror', None) or exc}",
                hint="check that the head runs (`ray status` there) and that its client port is open from here",
            ) from None
