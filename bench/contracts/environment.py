"""Environment variables named by a contract: the one name type and the one reader that refuses a missing value.

A contract names a secret or an endpoint by its variable, never holds it. Names are POSIX-portable identifiers of
at most 64 characters: every bundled declaration fits, and a bound keeps a hostile document from naming a
megabyte-long variable in an error line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated

from pydantic import StringConstraints

from ..errors import BenchError, ContractError

__all__ = ["ENV_NAME_PATTERN", "EnvName", "environment_value"]

ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
EnvName = Annotated[str, StringConstraints(pattern=ENV_NAME_PATTERN)]


def environment_value(
    name: str, what: str, *, error: type[BenchError] = ContractError, environ: Mapping[str, str] | None = None
) -> str:
    """The value of the environment variable ``name``; an unset or empty one is refused in one line naming it.

    ``error`` is the caller's family (the gateway refuses to start with its own), so the exit code stays its own."""
    value = (os.environ if environ is None else environ).get(name, "")
    if not value:
        raise error(
            f"{what} is read from ${name}, which is unset or empty",
            field=name,
            hint=f"export {name} in the runner's environment (never in a config file) before a paid run",
        )
    return value
