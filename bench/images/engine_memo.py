"""What this process learned from the engine about its images, remembered until this process changes them.

Planning asks the engine the same questions many times (which recipe images exist; the agent image and each
memory system's layer a suite's harness needs): a plan (``status`` too) and the images step of ``demo`` asked
about ten times, each with a new engine connection and a full listing. Here a process keeps one default backend
(one connection per chosen backend) and each answer about a backend's images until it builds, imports or loads an
image (:func:`images_changed`, called where this package asks a backend to: its builds and imports, and the
archives it hands a backend to load, :class:`~.archive.StoreImages`): the next question then asks the engine again.
An image another process removes meanwhile is found missing where its pinned ID is used, as before.

(The count lives here, not in the sandbox backends: every stage's code digest covers those modules.)
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable, Hashable
from typing import TypeVar, cast
from weakref import WeakKeyDictionary

from ..sandbox.backends import ImageInfo, SandboxBackend, default_backend
from ..sandbox.backends.choice import chosen_backend

__all__ = ["images_changed", "listed", "process_backend", "remembered"]

T = TypeVar("T")

# The default backend by process and backend name: a forked child opens its own connection.
_BACKENDS: dict[tuple[int, str], SandboxBackend] = {}
# How many images this process built, imported or loaded: an answer given under an older count is stale.
_CHANGES = [0]
# Each backend's answers, with the image-change count they were given under.
_ANSWERS: WeakKeyDictionary[SandboxBackend, tuple[int, dict[Hashable, object]]] = WeakKeyDictionary()


def process_backend() -> SandboxBackend:
    """This process's default backend (:func:`~bench.sandbox.backends.default_backend`), made once; closed at exit."""
    key = (os.getpid(), chosen_backend()[0])
    backend = _BACKENDS.get(key)
    if backend is None:
        backend = _BACKENDS[key] = default_backend()
        atexit.register(backend.close)
    return backend


def images_changed() -> None:
    """This process has (or may have: a failed build can leave an image) built, imported or loaded an image."""
    _CHANGES[0] += 1


def _answers(backend: SandboxBackend) -> dict[Hashable, object]:
    """``backend``'s answers given since this process last changed an image (older ones are dropped)."""
    changes = _CHANGES[0]
    kept = _ANSWERS.get(backend)
    if kept is None or kept[0] != changes:
        kept = _ANSWERS[backend] = (changes, {})
    return kept[1]


def remembered(backend: SandboxBackend, question: Hashable, answer: Callable[[], T]) -> T:
    """``answer()`` to ``question`` about ``backend``'s images, computed once until this process changes an image
    (an answer that itself built one is kept under the new count: it is what the engine holds now)."""
    answers = _answers(backend)
    if question not in answers:
        value = answer()
        _answers(backend)[question] = value
        return value
    return cast(T, answers[question])


def listed(backend: SandboxBackend, label: str) -> tuple[ImageInfo, ...]:
    """Every image on ``backend`` carrying ``label`` (:meth:`~bench.sandbox.backends.SandboxBackend.images`)."""
    return remembered(backend, ("images", label), lambda: tuple(backend.images(label)))
