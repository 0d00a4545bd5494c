"""A request's body, however it is framed: ``Content-Length``, or ``Transfer-Encoding: chunked``.

The exchange log is the ground truth of what reached the model, so a body is read whole or refused, never
recorded short: a chunked body read by Content-Length alone would arrive empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import Message
from typing import BinaryIO

__all__ = ["MAX_BODY_BYTES", "UnreadableBody", "read_body"]

MAX_BODY_BYTES = 32 * 1024 * 1024  # the Messages API's request size limit; past it the API answers 413
_HEX = re.compile(rb"^[0-9A-Fa-f]{1,16}$")
_DECIMAL = re.compile(r"^[0-9]{1,16}$")
_LINE_LIMIT = 8192


@dataclass(frozen=True)
class UnreadableBody:
    """Why a body was not read; the connection cannot be reused after it."""

    too_large: bool
    message: str


def _line(stream: BinaryIO) -> bytes | None:
    line = stream.readline(_LINE_LIMIT + 1)
    return line if line.endswith(b"\n") and len(line) <= _LINE_LIMIT else None


def _chunked(stream: BinaryIO) -> bytes | UnreadableBody:
    parts: list[bytes] = []
    total = 0
    while True:
        line = _line(stream)
        size_text = b"" if line is None else line.split(b";", 1)[0].strip()
        if not _HEX.match(size_text):
            return UnreadableBody(False, f"chunked body: expected a chunk size line, got {line!r}")
        size = int(size_text, 16)
        if size == 0:
            break
        total += size
        if total > MAX_BODY_BYTES:
            return UnreadableBody(True, f"request body exceeds the limit of {MAX_BODY_BYTES} bytes")
        chunk = stream.read(size)
        if len(chunk) != size or stream.read(2) != b"\r\n":
            return UnreadableBody(False, f"chunked body: a chunk of {size} bytes ended early or without CRLF")
        parts.append(chunk)
    while (trailer := _line(stream)) not in (b"\r\n", b"\n"):  # trailer fields end at an empty line
        if trailer is None:
            return UnreadableBody(False, "chunked body: the trailer section did not end")
    return b"".join(parts)


def read_body(headers: Message, stream: BinaryIO) -> bytes | UnreadableBody:
    """The whole body of a request whose ``headers`` were read from ``stream``."""
    coding = headers.get("transfer-encoding")
    length = headers.get("content-length")
    if coding is not None:
        if coding.strip().lower() != "chunked" or length is not None:
            return UnreadableBody(
                False, f"transfer-encoding {coding!r} (with content-length {length!r}) is not supported; send chunked"
            )
        return _chunked(stream)
    if length is None:
        return b""
    if not _DECIMAL.match(length.strip()):
        return UnreadableBody(False, f"content-length must be a byte count, got {length!r}")
    size = int(length)
    if size > MAX_BODY_BYTES:
        return UnreadableBody(True, f"request body exceeds the limit of {MAX_BODY_BYTES} bytes")
    data = stream.read(size)
    if len(data) != size:
        return UnreadableBody(False, f"the body ended after {len(data)} of {size} bytes")
    return data
