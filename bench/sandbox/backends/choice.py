"""Which sandbox backend a command uses: a registry of backends by name, the name chosen by the global
``--sandbox NAME`` flag, else ``$STELE_BENCH_SANDBOX``, else the project's ``[sandbox] backend`` (stele-bench.toml),
else Docker.

Like ``$STELE_BENCH_EXECUTOR``, the choice travels as the environment variable so it reaches every process a run
starts on this machine (doit's workers) unchanged: the flag sets it, and so does a command opening a project that
names a backend when neither the flag nor the variable chose (:func:`pin_backend`). Each refusal names where the
name came from and the known ones. Each backend's module is imported only when it is chosen, so the process
backend needs no Docker SDK.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ...errors import ProjectNotFound, UsageError
from ...project import SANDBOX_SETTING, Project, open_project
from ...store import Store
from .base import ImageSource, SandboxBackend

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "SANDBOX_FLAG",
    "SANDBOX_VARIABLE",
    "backend_factory",
    "chosen_backend",
    "default_backend",
    "pin_backend",
]

SANDBOX_FLAG = "--sandbox"
SANDBOX_VARIABLE = "STELE_BENCH_SANDBOX"
DEFAULT_BACKEND = "docker"

BackendFactory = Callable[[Store | None, ImageSource | None], SandboxBackend]


def _docker(store: Store | None, images: ImageSource | None) -> SandboxBackend:
    from .docker import DockerBackend

    return DockerBackend(store, images=images)


def _process(store: Store | None, images: ImageSource | None) -> SandboxBackend:
    # It has no images capability: the host's programs are its one image, so there is nothing to load from images.
    from .process import ProcessBackend

    return ProcessBackend(store)


BACKENDS: Mapping[str, BackendFactory] = {"docker": _docker, "process": _process}


def backend_factory(name: str, source: str = SANDBOX_FLAG) -> BackendFactory:
    """What makes the backend called ``name``; an unknown name is refused in one line naming ``source`` (the flag,
    the variable, or the project file and its key) and the known ones."""
    factory = BACKENDS.get(name)
    if factory is None:
        known = ", ".join(sorted(BACKENDS))
        raise UsageError(
            f"unknown sandbox backend {name!r} in {source}; known: {known}",
            field=source,
            expected=known,
            actual=name,
        )
    return factory


def _setting(project: Project) -> str:
    return f"{project.marker} {SANDBOX_SETTING}"


def chosen_backend(project: Project | None = None) -> tuple[str, BackendFactory]:
    """The chosen backend's name and maker: ``$STELE_BENCH_SANDBOX`` (which ``--sandbox`` sets), else ``project``'s
    setting (by default the project this process is in: ``$STELE_BENCH_PROJECT`` or the working directory's), else
    Docker; an unknown name is refused naming its source."""
    named = os.environ.get(SANDBOX_VARIABLE)
    if named:
        return named, backend_factory(named, f"${SANDBOX_VARIABLE}")
    if project is None:
        try:
            project = open_project()
        except ProjectNotFound:  # outside every project: the flag, the variable and the default still choose
            project = None
    if project is not None and project.sandbox_backend is not None:
        return project.sandbox_backend, backend_factory(project.sandbox_backend, _setting(project))
    return DEFAULT_BACKEND, BACKENDS[DEFAULT_BACKEND]


def pin_backend(project: Project) -> None:
    """Name ``project``'s backend in the environment every process of this command inherits (a pipeline process
    may run from another directory), unless the flag or the variable chose already; an unknown one is refused."""
    if not os.environ.get(SANDBOX_VARIABLE) and project.sandbox_backend is not None:
        os.environ[SANDBOX_VARIABLE] = chosen_backend(project)[0]


def default_backend(store: Store | None = None, images: ImageSource | None = None) -> SandboxBackend:
    """The configured backend (:func:`chosen_backend`).

    Without ``store`` it serves images and sweeps only; with ``images`` it loads an image its engine lacks from
    there. Close it (or use it in a ``with``) to drop its connection.
    """
    return chosen_backend()[1](store, images)
