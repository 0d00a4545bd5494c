"""`stele-bench gateway serve`: run the model gateway until SIGTERM or Ctrl-C (a sandbox runs it as a service)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ..contracts.files import read_contract
from ..gateway import DirectoryRecorder, Gateway, GatewayConfig
from .numbers import whole_number
from .output import Output

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("gateway")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    serve = verbs.add_parser("serve", help="serve until SIGTERM; prints the base URL once listening")
    serve.add_argument(
        "--config", type=Path, required=True, help="gateway config JSON (a policy path is relative to it)"
    )
    serve.add_argument("--log-dir", type=Path, required=True, help="directory for the exchange log (exchanges.jsonl)")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=whole_number(0, 65535), default=0, help="0 picks a free port")
    serve.set_defaults(handler=_serve)


def _load_config(path: Path) -> GatewayConfig:
    return read_contract(path, GatewayConfig, "the gateway config")


def _serve(args: argparse.Namespace, out: Output) -> int:
    config = _load_config(args.config)
    gateway = Gateway(config, DirectoryRecorder(args.log_dir), policy_root=args.config.resolve().parent)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    url = gateway.start(args.host, args.port)
    try:
        out.result({"url": url, "mode": config.mode.value, "log": str(args.log_dir / "exchanges.jsonl")})
        sys.stdout.flush()
        stop.wait()
    finally:
        gateway.stop()  # waits for requests in flight, so the log is complete
    return 0
