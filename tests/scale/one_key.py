"""One action key run on two Ray nodes at once: the driver of tests/scale/test_one_key_two_nodes.py.

    python -m tests.scale.one_key RAY_ADDRESS STORE_LOCATION     (from the repository root)

Two Ray tasks, one per node (each node offers one ``docker`` unit, spread), meet at a barrier in the store (each
sets a ref and waits for the other's), then both execute the same invocation of :data:`slow_echo` through the
engine at the same moment. The stage takes a few seconds and outputs bytes naming the node that computed them, so a
second computation could not hide as the same result. The last line printed is ``ANSWERS <json>``: per task its
node, whether it executed, and the result and output it got.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from bench.builder import NoInputs, Ports, StageContext, StageKind, stage
from bench.builder.execution import execute
from bench.contracts import BlobDigest, ContractModel
from bench.store import Store

SECONDS = 3.0  # long enough that the second task finds the key claimed, not yet recorded


class EchoParams(ContractModel):
    text: str


class EchoOutputs(Ports):
    echo: BlobDigest


@stage("slow-echo", version=1, kind=StageKind.OBSERVED)
def slow_echo(context: StageContext, inputs: NoInputs, params: EchoParams) -> EchoOutputs:
    import ray

    time.sleep(SECONDS)
    node = ray.util.get_node_ip_address()
    return EchoOutputs(echo=context.store.put_bytes(f"{params.text} computed on {node}".encode()))


def _meet_and_execute(location: str, text: str) -> dict[str, Any]:
    import ray

    store = Store(location)
    node = ray.util.get_node_ip_address()
    store.set_ref(f"arrived/{node}", store.put_bytes(node.encode()))
    while len([name for name in store.refs() if name.startswith("arrived/")]) < 2:
        time.sleep(0.05)
    outcome = execute(StageContext(store), slow_echo, {}, {"text": text})
    return {
        "node": node,
        "executed": outcome.executed,
        "key": str(outcome.key),
        "result": str(outcome.result),
        "echo": store.get_bytes(outcome.outputs["echo"]).decode(),
    }


def _connect(address: str) -> None:
    """Connect, again while Ray's client server fails to start a session (ray-project/ray#63202), as the
    executor does."""
    import ray

    for attempt in range(1, 4):
        try:
            ray.init(address=address, namespace="one-key", logging_level="WARNING")
            return
        except (ConnectionError, RuntimeError):
            if attempt == 3:
                raise
            time.sleep(2.0 * attempt)


def main(address: str, location: str) -> None:
    import ray

    _connect(address)
    task = ray.remote(num_cpus=0, resources={"docker": 1}, max_retries=0)(_meet_and_execute)
    runs = [task.options(scheduling_strategy="SPREAD").remote(location, "one key") for _ in range(2)]
    answers = ray.get(runs, timeout=300)
    ray.shutdown()
    print("ANSWERS " + json.dumps(answers), flush=True)


if __name__ == "__main__":
    # Under its own name, not __main__: the nodes import the stage and the task from it by that name.
    from tests.scale import one_key

    one_key.main(*sys.argv[1:])
