"""The gateway's HTTP plumbing: one handler per request, answering as the provider's API does.

Nothing in a response names what serves it: no ``Server`` header, and a request the HTTP parser itself refuses
(a broken request line, an unknown method) gets the API's JSON error body, not the standard library's HTML page.
The handler is also the :class:`~bench.gateway.forward.Sink` answers are written to; a client that goes away is
noted (``client_gone``) rather than raised, so the exchange is still recorded whole.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from .dialects import ErrorKind
from .forward import Headers

if TYPE_CHECKING:
    from .server import Gateway

__all__ = ["Handler", "Server"]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server
    client_gone = False

    def do_POST(self) -> None:
        self.server.gateway.serve(self)

    do_GET = do_HEAD = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_POST

    def log_message(self, format: str, *args: Any) -> None:  # the exchange log is the record, not stderr
        return

    def send_response(self, code: int, message: str | None = None) -> None:
        """The status line and a Date; no ``Server`` header naming what answers."""
        self.log_request(code)
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A request the parser refused, answered in the API's error shape; the connection is not reused."""
        self.close_connection = True
        kind = ErrorKind.INVALID_REQUEST if code < 500 else ErrorKind.SERVER
        error = self.server.gateway.dialect.error_body(kind, _phrase(code))
        self.send_raw(code, [("Content-Type", "application/json")], _json(error))

    def send_json(self, status: int, body: Any) -> None:
        self.send_raw(status, [("Content-Type", "application/json")], _json(body))

    def send_raw(self, status: int, headers: Headers, body: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if getattr(self, "command", None) != "HEAD":
            self._put(body)

    def begin_stream(self, status: int, headers: Headers) -> None:
        self.send_response(status)
        names = {name.lower() for name, _ in headers}
        for name, value in headers:
            self.send_header(name, value)
        if "content-type" not in names:
            self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def write(self, data: bytes) -> None:
        self._put(data)

    def _put(self, data: bytes) -> None:
        if self.client_gone:
            return
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.client_gone = True
            self.close_connection = True


def _json(body: Any) -> bytes:
    return json.dumps(body).encode()


def _phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return "Error"


class Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins the request threads, so a stopped gateway's log is complete

    def __init__(self, address: tuple[str, int], gateway: Gateway) -> None:
        super().__init__(address, Handler)
        self.gateway = gateway
