"""The sandbox backend contract: one test class every backend passes (tests/sandbox/test_sandbox_contract.py).

A subclass supplies the backend under test and says how to look at it from outside: ``capabilities`` (what it
declares), the ``backend``/``image`` fixtures, :meth:`another` (a second runner's backend on the same engine),
:meth:`leftovers` (what a runner's lease still labels) and :meth:`spawn_source` (the same backend made in a child
process). What a backend lacks it must refuse with a SandboxError naming the capability; the tests check that too.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

import pytest

from bench.contracts import Digest
from bench.errors import SandboxError
from bench.sandbox import ContainerSpec, Mount, container_spec
from bench.sandbox.backends import (
    Capability,
    Lease,
    ProcessOutcome,
    RunOutcome,
    RunRequest,
    SandboxBackend,
    process_outcome,
)
from bench.store import EntryKind, Store, walk_tree
from bench.suite.challenge import Environment, NetworkMode
from tests.sandbox.sandbox_helpers import make_tree

__all__ = ["SandboxContract"]

ROOT = Path(__file__).resolve().parents[2]
HOME_DIRS = (PurePosixPath("/home/dev/.claude"), PurePosixPath("/home/dev/.claude/projects"))
INTERFACES = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '"
# Run in a child process: make the backend, open a session, say who it is, then wait to be killed.
CHILD = """
import json, sys, time
from pathlib import Path
from bench.contracts import Digest
from bench.sandbox import container_spec
from bench.store import Store
from bench.suite.challenge import Environment, NetworkMode
args = json.loads(sys.argv[1])
store = Store(args["store"])
{make}
spec = container_spec(args["image"], Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=128), ("true",))
with backend.session(spec, Digest(args["tree"])):
    print(backend.lease.owner, flush=True)
    time.sleep(600)
"""


class SandboxContract:
    capabilities: ClassVar[frozenset[Capability]]

    # -- what a subclass supplies -----------------------------------------------------------------

    @pytest.fixture
    def backend(self, store: Store) -> Iterator[SandboxBackend]:
        raise NotImplementedError

    @pytest.fixture
    def image(self) -> str:
        raise NotImplementedError

    def another(self, store: Store, lease: Lease) -> SandboxBackend:
        """The backend of another runner (its own lease) on the same engine."""
        raise NotImplementedError

    def leftovers(self, owner: str) -> set[str]:
        """Every resource still labelled with runner ``owner``."""
        raise NotImplementedError

    def spawn_source(self) -> str:
        """Python lines making ``backend`` from ``store`` (and ``args``) in a child process."""
        raise NotImplementedError

    # -- helpers ----------------------------------------------------------------------------------

    @staticmethod
    def spec(image: str, script: str, mode: NetworkMode = NetworkMode.NONE, **fields: Any) -> ContainerSpec:
        environment = Environment(network_mode=mode, cpus=1.0, memory_mb=256)
        return container_spec(image, environment, ("sh", "-c", script), **fields)

    @staticmethod
    def run(backend: SandboxBackend, spec: ContainerSpec, workspace: Digest | None = None, **kw: Any) -> RunOutcome:
        request = {"spec": spec, "workspace": workspace, "timeout_seconds": 30, "read_back": False} | kw
        return backend.run(RunRequest.model_validate(request))

    # -- what it declares -------------------------------------------------------------------------

    def test_it_declares_its_capabilities(self, backend: SandboxBackend) -> None:
        assert backend.capabilities == self.capabilities

    def test_images_are_served_or_refused_by_name(self, backend: SandboxBackend, image: str, tmp_path: Path) -> None:
        assert backend.image(image).image_id == image
        if Capability.IMAGES in self.capabilities:
            with pytest.raises(SandboxError, match="stele-bench image build"):
                backend.image("sha256:" + "0" * 64)
        else:
            with pytest.raises(SandboxError, match="images"):
                backend.image("sha256:" + "0" * 64)
            with pytest.raises(SandboxError, match="lacks the images capability"):
                backend.import_image(b"", tag="x:y", labels={}, env={})

    # -- one-shot runs ----------------------------------------------------------------------------

    def test_a_workspace_round_trips_unchanged(self, store: Store, backend: SandboxBackend, image: str) -> None:
        files = {"a.txt": b"alpha\n", "bin/run": ("x", b"#!/bin/sh\necho ok\n"), "link": ("l", "a.txt")}
        tree = make_tree(store, {**files, "deep/er/file": b"\x00\xffbinary"})  # type: ignore[dict-item]
        outcome = self.run(backend, self.spec(image, "true"), tree, read_back=True)
        assert outcome.tree == tree

    def test_an_absent_workspace_is_an_empty_one(self, store: Store, backend: SandboxBackend, image: str) -> None:
        outcome = self.run(backend, self.spec(image, "ls -A; echo made > new.txt"), None, read_back=True)
        assert outcome.output == "" and outcome.tree == make_tree(store, {"new.txt": b"made\n"})

    def test_the_workspace_belongs_to_the_user_and_changes_come_back(
        self, store: Store, backend: SandboxBackend, image: str
    ) -> None:
        tree = make_tree(store, {"a.txt": b"alpha\n", "run.sh": b"echo\n", "gone.txt": b"x"})
        script = "stat -c '%u %n' /workspace /workspace/a.txt; echo beta > b.txt; chmod +x run.sh; ln -s b.txt c"
        outcome = self.run(backend, self.spec(image, f"{script}; rm gone.txt"), tree, read_back=True)
        assert outcome.output.split() == ["1000", "/workspace", "1000", "/workspace/a.txt"]
        assert outcome.tree is not None
        kinds = {str(path): entry.kind for path, entry in walk_tree(store, outcome.tree)}
        assert kinds == {
            "a.txt": EntryKind.FILE,
            "b.txt": EntryKind.FILE,
            "c": EntryKind.SYMLINK,
            "run.sh": EntryKind.EXECUTABLE,
        }

    def test_the_specs_user_workdir_hostname_and_env_hold_inside(self, backend: SandboxBackend, image: str) -> None:
        spec = self.spec(image, 'id -u; id -g; pwd; hostname; echo "$HOME $GREETING"', env={"GREETING": "hi"})
        assert self.run(backend, spec).output.splitlines() == ["1000", "1000", "/workspace", "devbox", "/home/dev hi"]

    @pytest.mark.parametrize(
        ("script", "code", "outcome"),
        [("exit 0", 0, ProcessOutcome.SUCCEEDED), ("exit 3", 3, ProcessOutcome.FAILED)],
    )
    def test_exit_codes_come_back_as_outcomes(
        self, backend: SandboxBackend, image: str, script: str, code: int, outcome: ProcessOutcome
    ) -> None:
        ran = self.run(backend, self.spec(image, script))
        assert (ran.exit_code, ran.timed_out, ran.outcome) == (code, False, outcome)
        assert process_outcome(ran.timed_out, ran.exit_code) is outcome

    def test_output_is_bounded_and_counted(self, backend: SandboxBackend, image: str) -> None:
        outcome = self.run(backend, self.spec(image, "yes 0123456789 | head -c 200000"), output_limit=1000)
        assert len(outcome.output) == 1000 and outcome.output_bytes == 200000
        assert outcome.output.startswith("0123456789\n") and outcome.outcome is ProcessOutcome.SUCCEEDED

    def test_past_its_deadline_a_run_is_killed_and_its_workspace_still_read(
        self, store: Store, backend: SandboxBackend, image: str
    ) -> None:
        spec = self.spec(image, "echo started > progress.txt; sleep 60")
        outcome = self.run(backend, spec, make_tree(store, {"a": b"a"}), timeout_seconds=2, read_back=True)
        assert outcome.outcome is ProcessOutcome.TIMED_OUT and outcome.exit_code is None
        assert outcome.tree is not None
        assert "progress.txt" in {str(path) for path, _ in walk_tree(store, outcome.tree)}  # the audit still sees it
        assert self.leftovers(backend.lease.owner) == set()

    def test_a_read_only_mount_appears_at_its_target(self, backend: SandboxBackend, image: str, tmp_path: Path) -> None:
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        (shared / "note").write_text("mounted\n")
        mount = Mount.of(shared, "runner:shared", "/mnt/task")
        script = "cat /mnt/task/note; touch /mnt/task/new 2>/dev/null && echo writable || echo read-only"
        assert self.run(backend, self.spec(image, script, mounts=(mount,))).output.split() == ["mounted", "read-only"]
        assert not (shared / "new").exists()

    # -- networks ---------------------------------------------------------------------------------

    def test_network_none_has_only_loopback(self, backend: SandboxBackend, image: str) -> None:
        assert self.run(backend, self.spec(image, INTERFACES)).output.split() == ["lo"]

    def test_network_public_has_a_route_out_or_is_refused(self, backend: SandboxBackend, image: str) -> None:
        spec = self.spec(image, INTERFACES, mode=NetworkMode.PUBLIC)
        if Capability.NETWORK_PUBLIC in self.capabilities:
            interfaces = self.run(backend, spec).output.split()
            assert "lo" in interfaces and len(interfaces) > 1
        else:
            with pytest.raises(SandboxError, match="network-public"):
                self.run(backend, spec)

    def test_a_model_only_container_needs_a_model_network(self, backend: SandboxBackend, image: str) -> None:
        with pytest.raises(SandboxError, match="model"):
            self.run(backend, self.spec(image, "true", mode=NetworkMode.MODEL_ONLY))
        if Capability.NETWORK_MODEL_ONLY not in self.capabilities:
            with pytest.raises(SandboxError, match="lacks the network-model-only capability"):
                backend.model_network(image)
        assert self.leftovers(backend.lease.owner) == set()

    # -- sessions ---------------------------------------------------------------------------------

    def test_a_session_runs_several_commands_in_one_workspace(
        self, store: Store, backend: SandboxBackend, image: str
    ) -> None:
        spec = self.spec(image, "sleep infinity")
        with backend.session(spec, make_tree(store, {"a.txt": b"alpha\n"}), HOME_DIRS) as box:
            wrote = box.exec(("sh", "-c", "echo one > one.txt; echo kept > $HOME/.claude/projects/s.jsonl"), _in(30))
            read = box.exec(("cat", "one.txt", "a.txt"), _in(30))
            failed = box.exec(("sh", "-c", "echo oops >&2; exit 5"), _in(30))
            assert box.read_file(PurePosixPath("/workspace/one.txt")) == b"one\n"
            assert box.read_file(PurePosixPath("/home/dev/.claude/projects/s.jsonl")) == b"kept\n"
            assert box.read_file(PurePosixPath("/workspace/missing")) is None
            final = box.read_back()
        assert wrote.outcome is ProcessOutcome.SUCCEEDED
        assert (read.outcome, read.stdout) == (ProcessOutcome.SUCCEEDED, b"one\nalpha\n")
        assert (failed.outcome, failed.exit_code, failed.stdout, failed.stderr) == (
            ProcessOutcome.FAILED,
            5,
            b"",
            "oops\n",
        )
        assert final == make_tree(store, {"a.txt": b"alpha\n", "one.txt": b"one\n"})
        assert self.leftovers(backend.lease.owner) == set()

    def test_a_session_past_its_deadline_is_killed_and_runs_nothing_more(
        self, store: Store, backend: SandboxBackend, image: str
    ) -> None:
        with backend.session(self.spec(image, "sleep infinity"), make_tree(store, {"a": b"a"})) as box:
            box.exec(("sh", "-c", "echo done > out.txt"), _in(30))
            slow = box.exec(("sleep", "30"), _in(1))
            after = box.exec(("true",), _in(30))
            final = box.read_back()
        assert slow.outcome is ProcessOutcome.TIMED_OUT and slow.exit_code is None  # killed, not waited out
        assert after.outcome is ProcessOutcome.TIMED_OUT  # a killed session runs nothing more
        assert "out.txt" in {str(path) for path, _ in walk_tree(store, final)}

    def test_a_session_spec_naming_the_harness_is_refused_before_anything_starts(
        self, store: Store, backend: SandboxBackend, image: str
    ) -> None:
        spec = self.spec(image, "sleep infinity").model_copy(update={"hostname": "stele-runner"})
        with pytest.raises(SandboxError, match="name the harness"), backend.session(spec, make_tree(store, {})):
            pass
        assert self.leftovers(backend.lease.owner) == set()

    def test_a_run_spec_naming_the_experiment_is_refused_before_anything_starts(
        self, backend: SandboxBackend, image: str
    ) -> None:
        # The base class checks, not the backend: a run's env is as visible to the agent as a session's.
        spec = self.spec(image, "true", env={"ARM": "benchmark-memory"})
        with pytest.raises(SandboxError, match="name the harness"):
            self.run(backend, spec)
        assert self.leftovers(backend.lease.owner) == set()

    # -- cleanup on every path --------------------------------------------------------------------

    def test_ctrl_c_during_a_run_leaves_nothing_behind(self, store: Store, backend: SandboxBackend, image: str) -> None:
        token = secrets.token_hex(8)  # names the command's shell among this machine's processes
        pressed = threading.Thread(target=_ctrl_c_once_running, args=(token,), daemon=True)
        pressed.start()
        with pytest.raises(KeyboardInterrupt):
            script = f"sleep 60; : {token}"
            self.run(backend, self.spec(image, script), make_tree(store, {"a": b"a"}), timeout_seconds=60)
        pressed.join()
        assert self.leftovers(backend.lease.owner) == set()

    def test_ctrl_c_inside_a_session_leaves_nothing_behind(
        self, store: Store, backend: SandboxBackend, image: str
    ) -> None:
        with (
            pytest.raises(KeyboardInterrupt),
            backend.session(self.spec(image, "sleep 60"), make_tree(store, {})) as box,
        ):
            box.exec(("true",), _in(30))
            raise KeyboardInterrupt
        assert self.leftovers(backend.lease.owner) == set()

    # -- sweeps: only what dead runners left --------------------------------------------------------

    def test_a_sweep_leaves_a_live_runners_session_alone(self, store: Store, image: str) -> None:
        live, sweeper = self.another(store, Lease()), self.another(store, Lease())
        with live.session(self.spec(image, "sleep infinity"), make_tree(store, {"a": b"kept\n"})) as box:
            report = sweeper.sweep()
            assert self.leftovers(live.lease.owner) != set() and report.live >= 1
            assert box.exec(("cat", "a"), _in(30)).stdout == b"kept\n"  # still there and still running
        assert self.leftovers(live.lease.owner) == set()

    def test_a_sweep_removes_what_an_expired_lease_left(self, store: Store, image: str) -> None:
        dead = Lease(ttl=60, heartbeat=50)  # no renewal during the test
        gone, sweeper = self.another(store, dead), self.another(store, Lease())
        with ExitStack() as stack:
            stack.enter_context(gone.session(self.spec(image, "sleep infinity"), make_tree(store, {})))
            assert self.leftovers(dead.owner) != set()
            long_ago = time.time() - 120
            os.utime(dead.path, (long_ago, long_ago))
            report = sweeper.sweep()
            assert report.removed >= 1 and self.leftovers(dead.owner) == set()
            assert not dead.path.exists()  # the dead lease is buried with what it held
        dead.release()

    def test_a_sweep_removes_what_a_killed_runner_left(self, store: Store, image: str) -> None:
        arguments = {"store": store.location, "image": image, "tree": make_tree(store, {"a": b"a"})}
        command = [sys.executable, "-c", CHILD.format(make=self.spawn_source()), json.dumps(arguments)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        try:
            assert child.stdout is not None
            owner = child.stdout.readline().decode().strip()
            assert owner, child.stderr.read().decode() if child.stderr else ""
            assert self.leftovers(owner) != set()
        finally:
            child.kill()  # SIGKILL: no cleanup runs
            child.communicate()
        report = self.another(store, Lease()).sweep()
        assert report.removed >= 1 and self.leftovers(owner) == set()


def _in(seconds: float) -> float:
    return time.monotonic() + seconds


def _ctrl_c_once_running(token: str, seconds: float = 120.0) -> None:
    """Ctrl-C to this process once a process whose command line holds ``token`` runs (the run's command, seen
    from here for either backend: a container's processes are this machine's too), not after a fixed delay, which
    on a busy machine lands while the workspace is still being copied in."""
    deadline = time.monotonic() + seconds  # a hang guard, not a timing assertion
    while not any(token.encode() in _command_line(entry) for entry in Path("/proc").iterdir() if entry.name.isdigit()):
        if time.monotonic() > deadline:
            return  # the run then ends on its own and the test fails: it did not raise
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGINT)


def _command_line(process: Path) -> bytes:
    try:
        return (process / "cmdline").read_bytes()
    except OSError:  # ended between listing and reading
        return b""
