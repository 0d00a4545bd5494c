"""The executor an ``--executor`` value names: this process by default, a Ray cluster when asked.

Apart from :mod:`bench.pipeline.executor` so the base never imports the Ray executor built on it; Ray itself is
imported only by a run that uses it.
"""

from __future__ import annotations

from ..errors import UsageError
from .executor import Executor, LocalExecutor

__all__ = ["parse_executor"]


def parse_executor(text: str) -> Executor:
    """The executor an ``--executor`` (doit ``executor=``) value names."""
    if text in ("", "local"):
        return LocalExecutor()
    if text.startswith("ray:"):
        from .ray_executor import RayExecutor  # imports Ray: only a run that asks for it pays

        address = text if text.startswith("ray://") else text[len("ray:") :]
        if address.rstrip("/") in ("", "ray:"):
            raise UsageError(f"executor {text!r} names no Ray address", field="executor")
        return RayExecutor(address)
    raise UsageError(
        f"unknown executor {text!r}",
        field="executor",
        expected="local, ray://HOST:PORT (Ray client) or ray:HOST:PORT (a driver on a cluster node)",
        actual=text,
    )
