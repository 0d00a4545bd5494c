"""A stand-in for the paid provider's quota API, on a real loopback socket, implementing it as documented.

The paid provider is the one edge the tests cannot reach, so this serves its two endpoints with controllable
account state: the balance, the key's limit, a switch that rejects the key, and per-path transport failures.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum, auto
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["CREDITS_PATH", "KEY", "KEY_ENV", "KEY_PATH", "Account", "Failure", "serve"]

KEY = "sk-or-v1-0123456789abcdef-eval-key"  # the eval key the account knows
KEY_ENV = "EVAL_PROVIDER_KEY"  # where the tests export it
KEY_PATH = "/api/v1/key"
CREDITS_PATH = "/api/v1/credits"


class Failure(Enum):
    CLOSE = auto()  # accept the request, then close the connection without an answer
    UNAVAILABLE = auto()  # answer 503
    RATE_LIMITED = auto()  # answer 429, as the provider does when a key sends too many requests
    REDIRECT = auto()  # answer 302 to another path on the same server
    HANG = auto()  # never answer: hold the connection until the server stops, past any client timeout


@dataclass
class Account:
    key: str
    limit: Decimal | None = Decimal("10")
    usage: Decimal = Decimal("0")
    total_credits: Decimal = Decimal("100")
    total_usage: Decimal = Decimal("0")
    reject_key: bool = False
    failures: dict[str, Failure] = field(default_factory=dict)
    healthy: dict[str, int] = field(default_factory=dict)  # path -> requests answered before its failure applies
    bodies: dict[str, bytes] = field(default_factory=dict)  # path -> a raw 200 body, to test malformed answers
    requests: list[str] = field(default_factory=list)

    def spend(self, amount: str) -> None:
        """Someone spends on the shared account (the run itself or anything else)."""
        self.total_usage += Decimal(amount)
        self.usage += Decimal(amount)

    def answer(self, path: str, authorization: str | None) -> tuple[int, bytes]:
        if self.reject_key or authorization != f"Bearer {self.key}":
            return 401, b'{"error":{"message":"User not found.","code":401}}'
        if path in self.bodies:
            return 200, self.bodies[path]
        if path == KEY_PATH:
            remaining = None if self.limit is None else self.limit - self.usage
            data = {
                "label": "sk-or-v1-abc...xyz",
                "limit": self.limit,
                "limit_remaining": remaining,
                "usage": self.usage,
                "is_free_tier": False,
            }
        elif path == CREDITS_PATH:
            data = {"total_credits": self.total_credits, "total_usage": self.total_usage}
        else:
            return 404, b'{"error":{"message":"Not Found","code":404}}'
        return 200, b'{"data":' + _json_object(data) + b"}"


def _json_object(data: dict[str, object]) -> bytes:
    """JSON with each Decimal written as the exact number literal it is, as the provider's own encoder does."""
    text = json.dumps(data, default=lambda amount: f"<{amount}>")
    return re.sub(r'"<([^">]*)>"', r"\1", text).encode()


def _handler(account: Account, released: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            account.requests.append(self.path)
            served = account.requests.count(self.path) - 1
            failure = account.failures.get(self.path) if served >= account.healthy.get(self.path, 0) else None
            if failure is Failure.CLOSE:
                self.close_connection = True
                return
            if failure is Failure.UNAVAILABLE:
                self._send(503, b'{"error":{"message":"Service Unavailable","code":503}}')
                return
            if failure is Failure.RATE_LIMITED:
                self._send(429, b'{"error":{"message":"Rate limit exceeded","code":429}}')
                return
            if failure is Failure.REDIRECT:
                self.send_response(302)
                self.send_header("Location", "/elsewhere")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if failure is Failure.HANG:
                released.wait()
                self.close_connection = True
                return
            self._send(*account.answer(self.path, self.headers.get("Authorization")))

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # keep test output to what the tests print

    return Handler


@contextmanager
def serve(account: Account) -> Iterator[str]:
    """Serve ``account`` on 127.0.0.1 and yield the base URL."""
    released = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(account, released))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        released.set()
        server.shutdown()
        server.server_close()
        thread.join()
