"""``python -m bench.memory [--home DIR] [--vectors FILE] restore|snapshot|destroy|retrieve``: the reference
provisioner.

Reads exactly one JSON request on stdin, writes exactly one compact JSON response on stdout, diagnostics on stderr.
Exit status 2: the request breaks the protocol; 1: the verb failed (the message says which input). Projects live
under ``--home``, by default ``$RECALL_HOME`` or ``<temp dir>/recall``: per-run state, gone with destroy. Passage
vectors are kept between restores in ``--vectors``, by default ``$RECALL_VECTORS`` or
``<temp dir>/recall-vectors.sqlite`` (:mod:`.vector_cache`).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from pydantic import ValidationError

from bench.contracts import ContractModel
from bench.provision.messages import DestroyRequest, RestoreRequest, RetrieveRequest, SnapshotRequest

from . import provisioner
from .notes import NoteFormatError
from .semantic import ModelMissing
from .state import StateError

_REQUESTS: dict[str, type[ContractModel]] = {
    "restore": RestoreRequest,
    "snapshot": SnapshotRequest,
    "destroy": DestroyRequest,
    "retrieve": RetrieveRequest,
}


def _dispatch(home: Path, vectors: Path, request: ContractModel) -> ContractModel:
    if isinstance(request, RestoreRequest):
        return provisioner.restore(home, request, vectors)
    if isinstance(request, SnapshotRequest):
        return provisioner.snapshot(home, request)
    if isinstance(request, DestroyRequest):
        return provisioner.destroy(home, request)
    if isinstance(request, RetrieveRequest):
        return provisioner.retrieve(home, request)
    raise TypeError(f"no verb takes a {type(request).__name__}")


def _default_home() -> Path:
    return Path(os.environ.get("RECALL_HOME") or Path(tempfile.gettempdir()) / "recall")


def _default_vectors() -> Path:
    return Path(os.environ.get("RECALL_VECTORS") or Path(tempfile.gettempdir()) / "recall-vectors.sqlite")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=_default_home(), help="directory holding this system's projects")
    parser.add_argument(
        "--vectors", type=Path, default=_default_vectors(), help="file keeping passage vectors between restores"
    )
    parser.add_argument("verb", choices=sorted(_REQUESTS))
    args = parser.parse_args(argv)
    request_type = _REQUESTS[args.verb]
    try:
        request = request_type.model_validate_json(sys.stdin.buffer.read())
    except ValidationError as exc:
        print(f"{args.verb}: the request on stdin is not a valid {request_type.__name__}:\n{exc}", file=sys.stderr)
        return 2
    try:
        response = _dispatch(args.home, args.vectors, request)
    except (NoteFormatError, StateError, ModelMissing, OSError, sqlite3.Error) as exc:
        print(f"{args.verb}: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(response.model_dump_json() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
