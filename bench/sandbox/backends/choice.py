"""Which sandbox backend a command uses: a registry of backends by name, the name read from ``$STELE_BENCH_SANDBOX``.

Like ``$STELE_BENCH_EXECUTOR``, the choice is an environment variable so it reaches every process a run starts on
this machine (doit's workers) unchanged; the global ``--sandbox NAME`` flag sets it. Each backend's module is
imported only when it is chosen, so the process backend needs no Docker SDK.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from ...errors import UsageError
from ...store import Store
from .base import ImageSource, SandboxBackend

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "SANDBOX_VARIABLE", "backend_factory", "default_backend"]

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


def backend_factory(name: str) -> BackendFactory:
    """What makes the backend called ``name``; an unknown name is refused naming the known ones."""
    factory = BACKENDS.get(name)
    if factory is None:
        raise UsageError(
            f"unknown sandbox backend {name!r} (--sandbox or ${SANDBOX_VARIABLE}); "
            f"known: {', '.join(sorted(BACKENDS))}",
            field=SANDBOX_VARIABLE,
            expected=", ".join(sorted(BACKENDS)),
            actual=name,
        )
    return factory


def default_backend(store: Store | None = None, images: ImageSource | None = None) -> SandboxBackend:
    """The configured backend: the one ``$STELE_BENCH_SANDBOX`` (which ``--sandbox`` sets) names, else Docker.

    Without ``store`` it serves images and sweeps only; with ``images`` it loads an image its engine lacks from
    there. Close it (or use it in a ``with``) to drop its connection.
    """
    return backend_factory(os.environ.get(SANDBOX_VARIABLE) or DEFAULT_BACKEND)(store, images)
