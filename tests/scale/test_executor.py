"""The executor seam: what `executor=` names, and the one progress line a finished invocation prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.contracts import Digest
from bench.errors import ContractError
from bench.pipeline.executor import LocalExecutor, Ran
from bench.pipeline.executor_choice import parse_executor
from bench.pipeline.ray_executor import RayExecutor


@pytest.mark.parametrize(
    ("spelled", "expected"),
    [
        ("local", LocalExecutor()),
        ("", LocalExecutor()),
        ("ray://head.example:10001", RayExecutor("ray://head.example:10001")),  # through the client server
        ("ray:10.0.0.5:6379", RayExecutor("10.0.0.5:6379")),  # a driver on a cluster node
        ("ray:auto", RayExecutor("auto")),
    ],
)
def test_an_executor_is_named_by_one_value(spelled: str, expected: object) -> None:
    assert parse_executor(spelled) == expected


@pytest.mark.parametrize("spelled", ["ray:", "ray://", "dask://scheduler:8786", "Local"])
def test_an_executor_that_names_nothing_runnable_is_refused(spelled: str) -> None:
    with pytest.raises(ContractError) as refused:
        parse_executor(spelled)
    assert refused.value.field == "executor" and repr(spelled) in str(refused.value)


def test_progress_names_the_node_that_ran_an_invocation() -> None:
    digest = str(Digest.of(b"out"))
    key = Digest.of(b"the action")
    assert Ran("grade", {"grade": digest}, True, key, node="10.0.0.7 (4437f18b)").line() == (
        f"ran grade on 10.0.0.7 (4437f18b) -> grade={Digest(digest).short}"
    )
    assert Ran("grade", {"grade": digest}, False, key).line() == f"cached grade -> grade={Digest(digest).short}"


def test_the_demo_refuses_an_unknown_executor_before_it_builds_anything(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "bench", "--store", str(tmp_path / "store"), "--json", "demo", "--executor"]
    done = subprocess.run([*command, "dask://scheduler:8786"], capture_output=True, text=True, check=False)
    refusal = json.loads(done.stdout)
    assert done.returncode == 2 and refusal["error"]["field"] == "executor", done.stdout
    assert "dask://scheduler:8786" in refusal["error"]["message"]
    assert "building" not in done.stderr and not (tmp_path / "store").exists()
