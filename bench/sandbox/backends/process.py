"""The sandbox backend without an engine: the host's programs run as plain processes in a temporary root.

A *root* is a directory per run or session: ``/workspace`` (streamed in from a store tree with the host's ``tar``
and streamed back out the same way, never buffered whole), the agent user's home, ``/tmp``, an ``/etc`` naming the
agent user, and mount points for the host's program directories, device nodes, ``/proc``, ``/sys`` and the spec's
mounts. Each command runs through :mod:`.launch` in fresh mount, UTS, IPC and PID namespaces (and a network
namespace with only loopback for mode ``none``), chrooted into the root as the spec's user, with the spec's
environment, hostname and working directory. It needs root.

What it cannot do it refuses, naming the capability: images (the host's programs are the image, named
:data:`HOST_IMAGE_ID`; specs naming another image are refused), limits (cpus, memory and pids are not enforced),
and the model-only network. Roots live under ``sandbox-roots/<owner>/``, next to the lease locator of the runner
that made them, so a sweep removes only a dead runner's roots. A command's processes die with the runner thread
that started it (``PR_SET_PDEATHSIG``), so run and exec from a thread that outlives the run or session.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path, PurePosixPath
from typing import IO, ClassVar

from ...contracts import Digest
from ...errors import SandboxError
from ...store import Store, tree_from_tar
from ..layout import USER_GID, USER_UID, WORKSPACE
from ..spec import ContainerSpec, NetworkMode
from ..tarpipe import tree_chunks
from . import launch
from .base import (
    STDERR_LIMIT,
    Capability,
    ExecResult,
    ImageInfo,
    ModelNetwork,
    RunOutcome,
    RunRequest,
    SandboxBackend,
    Session,
    SweepReport,
)
from .lease import LEASE_LABEL, OWNER_LABEL, Lease, Standing
from .process_rootfs import SYSTEM, make_root, remove_root

__all__ = ["HOST_IMAGE_ID", "ProcessBackend", "ProcessSession"]

HOST_IMAGE_ID = "sha256:" + hashlib.sha256(b"the host's programs").hexdigest()
_LOCATOR = "lease"  # the file beside a runner's roots naming its lease, as a container's label does
_KILL_WAIT = 30.0


def default_boxes() -> Path:
    return Path(tempfile.gettempdir()) / "sandbox-roots"


class _Root:
    """One temporary root: its directory, what the launcher binds into it, and the commands running in it."""

    def __init__(self, path: Path, spec: ContainerSpec, store: Store) -> None:
        self.path = path
        self.spec = spec
        self.store = store
        self.running: set[subprocess.Popen[bytes]] = set()
        self.lock = threading.Lock()

    def launch(self, argv: tuple[str, ...], stdout: int, stderr: int) -> subprocess.Popen[bytes]:
        uid, gid = _user(self.spec)
        config = {
            "root": str(self.path),
            "argv": list(argv),
            "env": self.spec.effective_env(),
            "workdir": self.spec.workdir,
            "uid": uid,
            "gid": gid,
            "hostname": self.spec.hostname,
            "isolate_network": self.spec.network.mode is NetworkMode.NONE,
            "system": [name for name in SYSTEM if (self.path / name).is_dir() and not (self.path / name).is_symlink()],
            "mounts": [[m.bound, m.target, m.read_only] for m in self.spec.effective_mounts()],
            "parent": os.getpid(),
        }
        command = [sys.executable, "-I", str(Path(launch.__file__)), json.dumps(config)]
        try:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, start_new_session=True
            )
        except OSError as exc:
            raise SandboxError(f"cannot start the launcher for {argv[0]}: {exc}") from exc
        with self.lock:
            self.running.add(process)
        return process

    def finish(self, process: subprocess.Popen[bytes], deadline: float) -> tuple[bool, int | None]:
        """Wait for ``process`` until ``deadline``; past it kill its process group. Returns (timed out, code)."""
        try:
            try:
                return False, process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill(process)
                return True, None
        finally:
            self.kill(process)  # Ctrl-C or an error while waiting: nothing of it may outlive this call
            with self.lock:
                self.running.discard(process)

    def kill(self, process: subprocess.Popen[bytes]) -> None:
        """Kill the launcher's group, so its namespace and everything in it; a reaped launcher is left alone."""
        if process.poll() is None:  # not reaped, so its pid (the group's id) cannot have been reused
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(_KILL_WAIT)

    def kill_all(self) -> None:
        with self.lock:
            running = list(self.running)
        for process in running:
            self.kill(process)

    def put_workspace(self, workspace: Digest) -> None:
        chunks = tree_chunks(self.store, workspace, prefix=WORKSPACE.lstrip("/"), uid=USER_UID, gid=USER_GID)
        untar = subprocess.Popen(
            ["tar", "-x", "-p", "--numeric-owner", "-f", "-", "-C", str(self.path)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert untar.stdin is not None and untar.stderr is not None
        try:
            with untar.stdin:
                for chunk in chunks:
                    untar.stdin.write(chunk)
        except BrokenPipeError:
            pass  # tar stopped early: its status and message say why
        finally:
            chunks.close()
            errors = untar.stderr.read()
            untar.stderr.close()
            code = untar.wait()
        if code != 0:
            raise SandboxError(f"tar refused the workspace (exit {code}): {errors.decode('utf-8', 'replace')[-500:]}")

    def read_back(self) -> Digest:
        tar = subprocess.Popen(
            ["tar", "-c", "--numeric-owner", "-f", "-", "-C", str(self.path), WORKSPACE.lstrip("/")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert tar.stdout is not None and tar.stderr is not None
        try:
            with tar.stdout:
                tree = tree_from_tar(self.store, tar.stdout, strip=WORKSPACE.lstrip("/"))  # type: ignore[arg-type]
        finally:
            errors = tar.stderr.read()
            tar.stderr.close()
            code = tar.wait()
        if code != 0:
            raise SandboxError(f"tar could not read the workspace back (exit {code}): {errors.decode()[-500:]}")
        return tree

    def read_file(self, path: PurePosixPath) -> bytes | None:
        """A regular file of the root, resolved inside it: a symlink anywhere on the way gives None."""
        parts = path.relative_to("/").parts if path.is_absolute() else path.parts
        if not parts or ".." in parts:
            return None
        directory = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
                os.close(directory)
                directory = inner
            if not stat.S_ISREG(os.stat(parts[-1], dir_fd=directory, follow_symlinks=False).st_mode):
                return None
            handle = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=directory)
            with os.fdopen(handle, "rb") as file:
                return file.read()
        except OSError:
            return None  # missing, not a directory on the way, or a symlink
        finally:
            os.close(directory)


def _user(spec: ContainerSpec) -> tuple[int, int]:
    uid, _, gid = spec.user.partition(":")
    if not (uid.isdigit() and gid.isdigit()):
        raise SandboxError(f"the process backend needs a numeric user uid:gid, got {spec.user!r}")
    return int(uid), int(gid)


def _pump(source: IO[bytes], keep: bytearray, limit: int | None, counted: list[int]) -> None:
    """Read ``source`` to its end, keeping at most ``limit`` bytes (all when None) and counting every byte."""
    with source:
        while chunk := source.read1(1 << 16):  # type: ignore[attr-defined]
            counted[0] += len(chunk)
            keep.extend(chunk if limit is None else chunk[: max(0, limit - len(keep))])


def _reader(source: IO[bytes] | None, limit: int | None) -> tuple[threading.Thread, bytearray, list[int]]:
    assert source is not None
    keep, counted = bytearray(), [0]
    thread = threading.Thread(target=_pump, args=(source, keep, limit, counted), name="output-reader", daemon=True)
    thread.start()
    return thread, keep, counted


class ProcessSession(Session):
    """Commands in one root; each exec is its own namespace set, the files persist between them."""

    def __init__(self, root: _Root) -> None:
        self.root = root
        self.spec = root.spec
        self.killed = False

    def exec(self, argv: tuple[str, ...], deadline: float) -> ExecResult:
        started = time.monotonic()
        if self.killed or started >= deadline:
            return ExecResult(True, None, b"", "", 0.0)
        process = self.root.launch(argv, subprocess.PIPE, subprocess.PIPE)
        out_reader, out, _ = _reader(process.stdout, None)
        err_reader, err, _ = _reader(process.stderr, STDERR_LIMIT)
        timed_out, code = self.root.finish(process, deadline)
        if timed_out:
            self.killed = True
        out_reader.join(_KILL_WAIT)
        err_reader.join(_KILL_WAIT)
        return ExecResult(timed_out, code, bytes(out), err.decode("utf-8", "replace"), time.monotonic() - started)

    def kill(self) -> None:
        self.killed = True
        self.root.kill_all()

    def read_file(self, path: PurePosixPath) -> bytes | None:
        return self.root.read_file(path)

    def read_back(self) -> Digest:
        return self.root.read_back()


class ProcessBackend(SandboxBackend):
    """See the module docstring. ``boxes`` is where roots are made (default: ``sandbox-roots`` under the temp dir)."""

    capabilities: ClassVar[frozenset[Capability]] = frozenset({Capability.NETWORK_NONE, Capability.NETWORK_PUBLIC})

    def __init__(self, store: Store | None = None, boxes: Path | None = None, lease: Lease | None = None) -> None:
        if os.geteuid() != 0:
            raise SandboxError("the process backend needs root (it unshares namespaces and chroots); run as root")
        super().__init__(store, lease)
        self.boxes = boxes or default_boxes()

    def close(self) -> None:
        pass  # nothing held: every root is removed when its run or session ends

    # -- images: the host's programs are the one image ----------------------------------------------

    def images(self, label: str) -> list[ImageInfo]:
        return []

    def image(self, image_id: str) -> ImageInfo:
        if image_id != HOST_IMAGE_ID:
            raise SandboxError(
                f"the process backend runs the host's programs: its one image is HOST_IMAGE_ID {HOST_IMAGE_ID}, "
                f"not {image_id} (it lacks the {Capability.IMAGES.value} capability); use the Docker backend"
            )
        return ImageInfo(image_id=HOST_IMAGE_ID)

    def import_image(self, rootfs: bytes | Path, *, tag: str, labels: Mapping[str, str], env: Mapping[str, str]) -> str:
        self.refuse(Capability.IMAGES, f"importing image {tag}")

    def build_image(self, context: Path, *, tag: str, labels: Mapping[str, str]) -> str:
        self.refuse(Capability.IMAGES, f"building image {tag}")

    # -- runs and sessions -----------------------------------------------------------------------------

    @contextmanager
    def _root(self, spec: ContainerSpec, home_dirs: tuple[PurePosixPath, ...] = ()) -> Iterator[_Root]:
        self.require_network(spec.network.mode)
        self.image(spec.effective_image())
        _user(spec)
        owned = self.boxes / self.lease.owner
        owned.mkdir(parents=True, exist_ok=True)
        self.boxes.chmod(0o711)
        labels = self.lease.labels()
        (owned / _LOCATOR).write_text(labels[LEASE_LABEL])
        root = _Root(owned / secrets.token_hex(6), spec, self.store)
        try:
            make_root(root.path, spec, home_dirs)
            yield root
        finally:
            root.kill_all()
            remove_root(root.path)

    def _run(self, request: RunRequest) -> RunOutcome:
        with self._root(request.spec) as root:
            if request.workspace is not None:
                root.put_workspace(request.workspace)
            started = time.monotonic()
            process = root.launch(request.spec.command, subprocess.PIPE, subprocess.STDOUT)
            reader, kept, printed = _reader(process.stdout, request.output_limit)
            timed_out, code = root.finish(process, started + request.timeout_seconds)
            seconds = time.monotonic() - started
            reader.join(_KILL_WAIT)
            tree = root.read_back() if request.read_back else None
        output = kept.decode("utf-8", "replace")
        return RunOutcome(
            timed_out=timed_out, exit_code=code, output=output, output_bytes=printed[0], seconds=seconds, tree=tree
        )

    @contextmanager
    def _session(
        self,
        spec: ContainerSpec,
        workspace: Digest,
        home_dirs: tuple[PurePosixPath, ...],
        network: ModelNetwork | None,
    ) -> Iterator[Session]:
        if network is not None:
            raise SandboxError(f"a model network was given for a container whose network mode is {spec.network.mode}")
        with self._root(spec, home_dirs) as root:
            root.put_workspace(workspace)
            yield ProcessSession(root)

    def model_network(self, relay_image: str) -> AbstractContextManager[ModelNetwork]:
        self.refuse(Capability.NETWORK_MODEL_ONLY, "network mode model-only")

    def sweep(self) -> SweepReport:
        counts = {standing: 0 for standing in Standing}
        for owned in sorted(self.boxes.iterdir()) if self.boxes.is_dir() else []:
            locator = owned / _LOCATOR
            labels = {OWNER_LABEL: owned.name, LEASE_LABEL: locator.read_text() if locator.is_file() else ""}
            standing = self.lease.standing(labels)
            roots = [path for path in owned.iterdir() if path.name != _LOCATOR]
            counts[standing] += len(roots)
            if standing is Standing.DEAD:
                for path in roots:
                    remove_root(path)
                locator.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    owned.rmdir()
                self.lease.bury(labels)
        self.lease.prune()
        live = counts[Standing.LIVE] + counts[Standing.OWN]
        return SweepReport(removed=counts[Standing.DEAD], live=live, foreign=counts[Standing.FOREIGN])
