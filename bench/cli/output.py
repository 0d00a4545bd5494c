"""How commands print: human text, or exactly one JSON object with ``--json``."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["Output"]


class Output:
    """Collects a command's result and prints it once, in the chosen form."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def result(self, data: dict[str, Any], text: str | None = None) -> None:
        """Print the command's result: ``data`` as JSON, or ``text`` (default: the data, one key per line)."""
        if self.as_json:
            sys.stdout.write(json.dumps(data, sort_keys=True, ensure_ascii=False) + "\n")
        elif text is not None:
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        else:
            for key, value in data.items():
                sys.stdout.write(f"{key}: {value}\n")

    def progress(self, message: str) -> None:
        """A progress line for long work; always stderr so stdout stays one object."""
        print(message, file=sys.stderr, flush=True)

    def error(self, exc: BaseException, code: int) -> int:
        print(f"stele-bench: error: {exc}", file=sys.stderr)
        return code
