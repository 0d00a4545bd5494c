"""`stele-bench provision restore|snapshot|destroy|retrieve|digest`: drive any provisioner by hand while writing one.

The provisioner is given as one argv string (split like a shell would split words, but run without a shell), for
example ``--provisioner "python -m bench.memory --home /tmp/mem"``. Every call goes through the same adapter, with
the same refusals, as a real run; ``snapshot`` prints the runner's judgement of the fixture's probes.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..contracts import ImageId
from ..contracts.files import parse_contract
from ..errors import ContractError, SourceError, UsageError
from ..provision.adapter import Provisioner
from ..provision.fixture import artifact_sha256, load_fixture
from ..provision.messages import HookEvent, ProjectName, RunIdentity
from ..provision.protocol_call import MAX_TIMEOUT_SECONDS, CallRecord, ProcessLimits
from ..provision.receipt import PairVerdict, assess
from .output import Output

__all__ = ["register"]


def _argv_prefix(text: str) -> tuple[str, ...]:
    """The provisioner's argv prefix, split as a shell splits words; an empty one would run the verb itself."""
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:  # shlex's only error: an unbalanced quote or a trailing backslash
        raise argparse.ArgumentTypeError(f"cannot split {text!r} into words: {exc}") from None
    if not words or not words[0]:
        raise argparse.ArgumentTypeError('it names no program; pass the command, e.g. "my-memory --home DIR"')
    return words


def _seconds(text: str) -> float:
    refusal = argparse.ArgumentTypeError(
        f"expected a number of seconds above 0 and at most {MAX_TIMEOUT_SECONDS:g}, got {text!r}"
    )
    try:
        seconds = float(text)
    except ValueError:
        raise refusal from None
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_TIMEOUT_SECONDS):
        raise refusal
    return seconds


def _checked(adapter: TypeAdapter[str], what: str) -> Any:
    """An argparse type that applies the protocol's own rule for ``what``, so a bad value is named at once."""

    def check(text: str) -> str:
        try:
            return adapter.validate_python(text)
        except ValidationError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} is not a valid {what}: {exc.errors()[0]['msg']}") from None

    return check


_PROJECT = _checked(TypeAdapter(ProjectName), "project name")
_RUN_IDENTITY = _checked(TypeAdapter(RunIdentity), "run identity (letters, digits and . _ : -)")
_IMAGE = _checked(TypeAdapter(ImageId), "image ID (sha256:<64 hex>)")


def _event(text: str) -> HookEvent:
    """One ``--event``: a hook event as one strict JSON object, checked against the protocol's HookEvent."""
    try:
        return parse_contract(text.encode("utf-8"), HookEvent, "--event")
    except ContractError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("provision")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    restore = _verb(verbs, "restore", "restore a fixture's graph arm; prints the project to pass to the others")
    restore.add_argument("--graph-arm", required=True, help="graph arm name declared by the fixture")
    restore.add_argument(
        "--run-identity", required=True, type=_RUN_IDENTITY, help="identity of this run, e.g. manual-1"
    )
    restore.add_argument(
        "--image",
        type=_IMAGE,
        help="image ID the system's tools run in (its layer), for a provisioner seeding through them",
    )
    restore.set_defaults(handler=_restore)
    snapshot = _verb(verbs, "snapshot", "re-read a project's memory and judge the fixture's probes")
    _memory_project(snapshot)
    snapshot.set_defaults(handler=_snapshot)
    retrieve = _verb(verbs, "retrieve", "what a deterministic memory's hooks would inject for each hook event")
    _memory_project(retrieve)
    retrieve.add_argument(
        "--event",
        required=True,
        action="append",
        type=_event,
        help='a hook event as JSON (repeatable), e.g. \'{"hook_event_name": "UserPromptSubmit", "cwd": "/workspace", '
        '"prompt": "..."}\'',
    )
    retrieve.set_defaults(handler=_retrieve)
    destroy = _verb(verbs, "destroy", "tear a project down")
    _memory_project(destroy)
    destroy.set_defaults(handler=_destroy)
    digest = verbs.add_parser("digest", help="print the SHA-256 a fixture manifest pins for a file or directory")
    digest.add_argument("path", type=Path, help="the file or directory to hash as a fixture manifest pins it")
    digest.set_defaults(handler=_digest)


def _memory_project(parser: argparse.ArgumentParser) -> None:
    # Not required by argparse: the check in _project says what the old spelling, `--project`, means now.
    parser.add_argument("--memory-project", type=_PROJECT, metavar="PROJECT", help="the project restore printed")


def _project(args: argparse.Namespace) -> str:
    """The memory project a verb acts on; the global ``--project`` names the stele-bench project directory."""
    if args.memory_project is None:
        raise UsageError(
            f"`provision {args.verb}` needs --memory-project, the project restore printed",
            field="--memory-project",
            hint="--project names the stele-bench project directory; the memory project's option is --memory-project",
        )
    return str(args.memory_project)


def _verb(verbs: Any, name: str, help_text: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = verbs.add_parser(name, help=help_text)
    parser.add_argument(
        "--provisioner",
        required=True,
        type=_argv_prefix,
        help='argv prefix as one string, e.g. "my-mem --home DIR"',
    )
    parser.add_argument("--fixture-root", type=Path, required=True, help="directory holding fixture.json")
    parser.add_argument(
        "--timeout", type=_seconds, default=ProcessLimits().timeout_seconds, help="seconds per call (default 300)"
    )
    return parser


def _provisioner(args: argparse.Namespace) -> Provisioner:
    return Provisioner(
        prefix=args.provisioner,
        fixture_root=args.fixture_root,
        limits=ProcessLimits(timeout_seconds=args.timeout),
    )


def _calls(log: list[CallRecord]) -> list[dict[str, Any]]:
    return [call.model_dump(mode="json") for call in log]


def _restore(args: argparse.Namespace, out: Output) -> int:
    provisioner = replace(_provisioner(args), image=args.image)
    fixture = load_fixture(args.fixture_root)
    request = provisioner.restore_request(fixture, args.graph_arm, args.run_identity)
    log: list[CallRecord] = []
    response = asyncio.run(provisioner.restore(request, log))
    out.result(
        {"response": response.model_dump(mode="json"), "calls": _calls(log)},
        f"project {response.project} restored in {response.restore_seconds:.2f} s "
        f"(queue before: {response.queue_before_count}); destroy it when done",
    )
    return 0


def _snapshot(args: argparse.Namespace, out: Output) -> int:
    provisioner = _provisioner(args)
    fixture = load_fixture(args.fixture_root)
    log: list[CallRecord] = []
    response = asyncio.run(provisioner.snapshot(_project(args), log))
    assessment = assess(fixture, response)
    lines = [f"verdict: {assessment.verdict.value}", f"items: {response.state.items}"]
    lines += [
        f"probe {c.name} ({c.kind.value}): {c.outcome.value} {c.reason or ''}".rstrip() for c in assessment.probes
    ]
    lines += [f"reason: {r}" for r in assessment.reasons]
    out.result(
        {
            "response": response.model_dump(mode="json"),
            "assessment": assessment.model_dump(mode="json"),
            "calls": _calls(log),
        },
        "\n".join(lines),
    )
    return 0 if assessment.verdict is PairVerdict.VALID else 1  # a check that answered no


def _retrieve(args: argparse.Namespace, out: Output) -> int:
    log: list[CallRecord] = []
    response = asyncio.run(_provisioner(args).retrieve(_project(args), tuple(args.event), log))
    lines = [
        f"event {index} ({event.hook_event_name.value}): " + ("nothing" if context is None else f"\n{context}")
        for index, (event, context) in enumerate(zip(args.event, response.contexts, strict=True))
    ]
    out.result({"response": response.model_dump(mode="json"), "calls": _calls(log)}, "\n".join(lines))
    return 0


def _destroy(args: argparse.Namespace, out: Output) -> int:
    log: list[CallRecord] = []
    project = _project(args)
    asyncio.run(_provisioner(args).destroy(project, log))
    out.result({"ok": True, "calls": _calls(log)}, f"project {project} destroyed")
    return 0


def _digest(args: argparse.Namespace, out: Output) -> int:
    if not args.path.exists():
        raise SourceError(f"{args.path} does not exist; pass the path of a fixture artifact (a file or directory)")
    digest = artifact_sha256(args.path)
    out.result({"path": str(args.path), "sha256": digest}, digest)
    return 0
