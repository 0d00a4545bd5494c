"""An exec-based container session: one long-lived container, several commands run in it with ``docker exec``.

:class:`DockerBackend` runs one command per container. An agent session needs more: the same container for a
first prompt and a follow-up that resumes the agent's native session, then files copied out of the agent user's
home. So the container starts with an idle command, the workspace and a home skeleton are put in before it
starts (identically in every arm, as root-owned tar members are not: mount points under the agent's home would
otherwise be created by the engine as root), each command is an exec as the spec's user, and the container is
removed on every way out of :func:`container_session`, Ctrl-C included.

Past a deadline the whole container is killed (an exec cannot be signalled through the engine API); its
filesystem stays readable, so the workspace and the agent's transcript are still read back.
"""

from __future__ import annotations

import enum
import io
import socket
import tarfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import docker
import docker.errors
from docker.models.containers import Container
from docker.utils.socket import STDOUT, frames_iter

from ..contracts import Digest
from ..errors import SandboxError
from ..store import Store, tree_from_tar
from .docker_backend import create_container, engine_call
from .layout import USER_GID, USER_UID, WORKSPACE
from .spec import ContainerSpec, check_neutral
from .tarpipe import chunk_stream, tree_chunks

__all__ = ["IDLE_COMMAND", "ContainerSession", "ExecResult", "ExecStatus", "container_session"]

IDLE_COMMAND = ("sleep", "infinity")
_STDERR_LIMIT = 64 * 1024


class ExecStatus(enum.StrEnum):
    EXITED = "exited"
    TIMED_OUT = "timed-out"  # the container was killed at the deadline


@dataclass(frozen=True)
class ExecResult:
    status: ExecStatus
    exit_code: int | None
    stdout: bytes  # whole: the agent's machine-readable output is a record, not a log
    stderr: str  # at most 64 KiB, decoded with replacement
    seconds: float


class ContainerSession:
    """A started container; see the module docstring. Made by :func:`container_session` only."""

    def __init__(self, store: Store, container: Container, spec: ContainerSpec) -> None:
        self.store = store
        self.container = container
        self.spec = spec
        self.killed = False

    def exec(self, argv: tuple[str, ...], deadline: float) -> ExecResult:
        """Run ``argv`` as the spec's user in the workspace until it exits or ``deadline`` (monotonic) passes."""
        started = time.monotonic()
        if self.killed or started >= deadline:
            return ExecResult(ExecStatus.TIMED_OUT, None, b"", "", 0.0)
        api = self.container.client.api
        exec_id = engine_call(
            lambda: api.exec_create(self.container.id, list(argv), user=self.spec.user, workdir=self.spec.workdir),
            f"creating exec {argv[0]}",
        )["Id"]
        out, err = bytearray(), bytearray()
        raw = engine_call(lambda: api.exec_start(exec_id, socket=True), f"starting exec {argv[0]}")

        def pump() -> None:
            for stream, data in frames_iter(raw, tty=False):
                if stream == STDOUT:
                    out.extend(data)
                else:
                    err.extend(data[: max(0, _STDERR_LIMIT - len(err))])

        reader = threading.Thread(target=pump, name="exec-reader", daemon=True)
        reader.start()
        try:
            reader.join(max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                self.kill()
                reader.join(30)
                return ExecResult(ExecStatus.TIMED_OUT, None, bytes(out), _text(err), _since(started))
        finally:
            _close_hijacked(raw)
        code = engine_call(lambda: api.exec_inspect(exec_id), "reading the exit status")["ExitCode"]
        return ExecResult(ExecStatus.EXITED, code, bytes(out), _text(err), _since(started))

    def kill(self) -> None:
        """Stop every process in the container; files stay readable until the session ends."""
        self.killed = True
        with suppress(docker.errors.APIError):  # already stopped: stopping is what we wanted
            self.container.kill()

    def read_file(self, path: PurePosixPath) -> bytes | None:
        """The bytes of one regular file in the container, or None when it does not exist."""
        try:
            chunks, _ = self.container.get_archive(str(path))
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as exc:
            raise SandboxError(f"the engine failed copying {path} out: {exc.explanation}") from exc
        # Read the whole archive: leaving the engine's stream half-read would leave its socket open.
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
            member = archive.next()
            extracted = archive.extractfile(member) if member is not None and member.isfile() else None
            return extracted.read() if extracted is not None else None

    def read_back(self) -> Digest:
        """The workspace as it is now, hashed into the store while it streams out."""
        chunks, _ = engine_call(lambda: self.container.get_archive(WORKSPACE), "copying the workspace out")
        return tree_from_tar(self.store, chunk_stream(chunks), strip=WORKSPACE.rsplit("/", 1)[-1])


def _close_hijacked(raw: Any) -> None:
    """Close an exec's upgraded connection. docker-py never does (its streams leave the socket open once read
    to the end), so the socket under the file object it hands out is shut down and closed here."""
    sock = getattr(raw, "_sock", raw)
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
    raw.close()


def _text(data: bytearray) -> str:
    return data.decode("utf-8", "replace")


def _since(started: float) -> float:
    return time.monotonic() - started


def _directories_tar(paths: tuple[PurePosixPath, ...]) -> bytes:
    """Empty directories owned by the agent user, parents first, as a tar for ``put_archive('/')``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in paths:
            info = tarfile.TarInfo(str(path).lstrip("/"))
            info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o755, USER_UID, USER_GID
            archive.addfile(info)
    return buffer.getvalue()


@contextmanager
def container_session(
    client: docker.DockerClient,
    store: Store,
    spec: ContainerSpec,
    network: str,
    workspace: Digest,
    home_dirs: tuple[PurePosixPath, ...] = (),
) -> Iterator[ContainerSession]:
    """Start ``spec`` idle on ``network`` with ``workspace`` and ``home_dirs`` in place; remove it on exit."""
    check_neutral(spec)
    container = create_container(client, spec, network)
    try:
        chunks = tree_chunks(store, workspace, prefix=WORKSPACE.lstrip("/"), uid=USER_UID, gid=USER_GID)
        engine_call(lambda: container.put_archive("/", chunks), "copying the workspace in")
        if home_dirs:
            engine_call(lambda: container.put_archive("/", _directories_tar(home_dirs)), "making the home directories")
        engine_call(container.start, "starting the container")
        yield ContainerSession(store, container, spec)
    finally:
        with suppress(docker.errors.NotFound):
            container.remove(force=True, v=True)
