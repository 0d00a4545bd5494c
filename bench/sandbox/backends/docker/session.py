"""An exec-based container session: one long-lived container, several commands run in it with ``docker exec``.

A one-shot run is one command per container. An agent session needs more: the same container for a first prompt
and a follow-up that resumes the agent's native session, then files copied out of the agent user's home. So the
container starts with its spec's idle command, the workspace and a home skeleton are put in before it starts
(identically in every arm, as root-owned tar members are not: mount points under the agent's home would otherwise
be created by the engine as root), each command is an exec as the spec's user, and the container is removed on
every way out of :func:`docker_session`, Ctrl-C included.

Past a deadline the whole container is killed (an exec cannot be signalled through the engine API); its
filesystem stays readable, so the workspace and the agent's transcript are still read back.
"""

from __future__ import annotations

import io
import socket
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import PurePosixPath
from typing import Any

import docker.errors  # type: ignore[import-untyped]
from docker.utils.socket import STDOUT, frames_iter  # type: ignore[import-untyped]

from ....contracts import Digest
from ....store import Store
from ...layout import USER_GID, USER_UID, WORKSPACE_MTIME
from ...spec import ContainerSpec
from ..base import STDERR_LIMIT, ExecResult, Session
from .engine import (
    Client,
    Container,
    create_container,
    created,
    engine_errors,
    put_workspace,
    read_workspace,
    remove_container,
)

__all__ = ["DockerSession", "docker_session"]


class DockerSession(Session):
    """A started container; see the module docstring. Made by :func:`docker_session` only."""

    def __init__(self, store: Store, container: Container, spec: ContainerSpec) -> None:
        self.store = store
        self.container = container
        self.spec = spec
        self.killed = False

    def exec(self, argv: tuple[str, ...], deadline: float) -> ExecResult:
        started = time.monotonic()
        if self.killed or started >= deadline:
            return ExecResult(True, None, b"", "", 0.0)
        api = self.container.client.api
        with engine_errors(f"creating exec {argv[0]}"):
            exec_id = api.exec_create(self.container.id, list(argv), user=self.spec.user, workdir=self.spec.workdir)
        with engine_errors(f"starting exec {argv[0]}"):
            raw = api.exec_start(exec_id["Id"], socket=True)
        out, err = bytearray(), bytearray()

        def pump() -> None:
            # The connection is closed under this thread when the caller stops early (a deadline, a stop signal):
            # its read then fails, which ends the thread quietly instead of printing a traceback over the stop.
            with suppress(OSError, ValueError):
                for stream, data in frames_iter(raw, tty=False):
                    if stream == STDOUT:
                        out.extend(data)
                    else:
                        err.extend(data[: max(0, STDERR_LIMIT - len(err))])

        reader = threading.Thread(target=pump, name="exec-reader", daemon=True)
        reader.start()
        try:
            reader.join(max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                self.kill()
                reader.join(30)
                return ExecResult(True, None, bytes(out), _text(err), _since(started))
        finally:
            _close_hijacked(raw)
        with engine_errors("reading the exit status"):
            code = api.exec_inspect(exec_id["Id"])["ExitCode"]
        return ExecResult(False, code, bytes(out), _text(err), _since(started))

    def kill(self) -> None:
        self.killed = True
        with suppress(docker.errors.APIError):  # already stopped: stopping is what we wanted
            self.container.kill()

    def read_file(self, path: PurePosixPath) -> bytes | None:
        with engine_errors(f"copying {path} out"):
            try:
                chunks, _ = self.container.get_archive(str(path))
            except docker.errors.NotFound:
                return None
            # Read the whole archive: leaving the engine's stream half-read would leave its socket open.
            data = b"".join(chunks)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            member = archive.next()
            extracted = archive.extractfile(member) if member is not None and member.isfile() else None
            return extracted.read() if extracted is not None else None

    def read_back(self) -> Digest:
        return read_workspace(self.container, self.store)


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
            info.mtime = WORKSPACE_MTIME
            archive.addfile(info)
    return buffer.getvalue()


@contextmanager
def docker_session(
    client: Client,
    store: Store,
    spec: ContainerSpec,
    network: str,
    workspace: Digest,
    home_dirs: tuple[PurePosixPath, ...],
    labels: Mapping[str, str],
) -> Iterator[DockerSession]:
    """Start ``spec`` idle on ``network`` with ``workspace`` and ``home_dirs`` in place; remove it on exit."""
    with created(lambda: create_container(client, spec, network, labels), remove_container) as container:
        put_workspace(container, store, workspace)
        if home_dirs:
            with engine_errors("making the home directories"):
                container.put_archive("/", _directories_tar(home_dirs))
        with engine_errors("starting the container"):
            container.start()
        yield DockerSession(store, container, spec)
