"""How commands print: human text, or exactly one JSON object with ``--json``, on success and on refusal alike.

A refusal with ``--json`` is ``{"error": {"code", "type", "message", "exit_code", ...}}`` on stdout (see
:meth:`bench.errors.BenchError.as_json`), so a script reads one object whatever happened; the one-line message
goes to stderr as well, for the person watching.

Whatever a command prints is valid UTF-8, whatever bytes its arguments held: a path that is not UTF-8 reaches Python
as text with lone surrogates, which are printed escaped (``\\xff`` for the byte 0xff), never echoed raw, so stdout
under ``--json`` always parses.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..errors import printable

__all__ = ["Output"]


def _printable_json(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(key)): _printable_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable_json(item) for item in value]
    return value


class Output:
    """Collects a command's result and prints it once, in the chosen form."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.printed = False

    def result(self, data: dict[str, Any], text: str | None = None) -> None:
        """Print the command's result: ``data`` as JSON, or ``text`` (default: the data, one key per line)."""
        self.printed = True
        if self.as_json:
            sys.stdout.write(_json_line(data))
        elif text is not None:
            sys.stdout.write(printable(text if text.endswith("\n") or not text else text + "\n"))
        else:
            for key, value in data.items():
                sys.stdout.write(printable(f"{key}: {value}\n"))

    def progress(self, message: str) -> None:
        """A progress line for long work; always stderr so stdout stays one object."""
        print(printable(message), file=sys.stderr, flush=True)

    def error(self, error: dict[str, Any], text: str, code: int) -> int:
        """Report a refusal: ``text`` on stderr and, with ``--json``, ``{"error": error}`` on stdout unless the
        command already printed its one object (it then carries the outcome, and the exit code says the rest)."""
        print(printable(f"stele-bench: {text}"), file=sys.stderr, flush=True)
        if self.as_json and not self.printed:
            self.printed = True
            sys.stdout.write(_json_line({"error": error}))
        sys.stdout.flush()
        return code


def _json_line(data: dict[str, Any]) -> str:
    return json.dumps(_printable_json(data), sort_keys=True, ensure_ascii=False) + "\n"
