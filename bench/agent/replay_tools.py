"""Re-derive what a memory's own MCP tools answered, from the runner's copy of the state restore left.

A memory-tool result is credited as the memory's only when the memory, as restored, gives it: the agent can write
into a writable state (plant an entity through the tool, or edit the file), and what it wrote is the agent's. So
after the treatment arm ran, the runner replays every call the model made to the system's declared MCP tools,
each on its own against a fresh copy of the state taken before the arm (:mod:`.state_copy`): the declared server,
started as the harness started it, in the system's image, with no network, one call per start. A result that
differs from what the gateway carried to the model, or a call the replay cannot answer, is a finding on the pair
(admission: ``injected-not-rederived``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import Field, JsonValue

from ..contracts import ContractModel, Digest, Document
from ..contracts.strict_json import parse_json
from ..errors import ContractError
from ..gateway.exchange import ExchangeRecord
from ..grading.chain import RunnerRecord, harness_conversation
from ..grading.gateway_view import tool_calls, tool_results
from ..sandbox.backends import RunRequest, SandboxBackend
from ..sandbox.layout import ASSET_DIR, RUNNER_SCRATCH, WORKSPACE
from ..sandbox.spec import Mount, container_spec
from ..store import EntryKind, read_tree
from ..suite.challenge import Environment, NetworkMode
from ..suite.memory_system import MemorySystem
from .arm_record import ConditionName
from .sealed_env import sealed_server
from .state_copy import StateCopy, export_state

__all__ = ["PUBLIC_CONTRACTS", "ReplayedCall", "ToolReplay", "replay_tools"]

_QUOTED = 160
_OUT = "replayed.json"
# Speaks MCP over stdio (newline-delimited JSON-RPC) to the declared server, one server start per call, the state
# reset from its pristine copy before each; writes every answer's text blocks to the workspace.
_DRIVER = r"""
import json, os, shutil, subprocess, sys
plan = json.load(open(sys.argv[1]))
def reset():
    for state in plan["state"]:
        target, pristine = state["target"], state["pristine"]
        if state["file"]:
            shutil.copyfile(pristine, target)
        else:
            for name in os.listdir(target):
                path = os.path.join(target, name)
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
            for name in os.listdir(pristine):
                source, path = os.path.join(pristine, name), os.path.join(target, name)
                shutil.copytree(source, path) if os.path.isdir(source) else shutil.copyfile(source, path)
def ask(proc, message):
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
    while "id" in message:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        answer = json.loads(line)
        if answer.get("id") == message["id"]:
            return answer
def call(server, name, arguments):
    reset()
    env = {**os.environ, **server["env"]}
    proc = subprocess.Popen([server["command"], *server["args"]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        ask(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "client", "version": "1"}}})
        ask(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answer = ask(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                            "params": {"name": name, "arguments": arguments}})
    finally:
        proc.stdin.close()
        proc.kill()
    if "error" in answer:
        return {"error": str(answer["error"])}
    result = answer.get("result") or {}
    texts = [block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"]
    return {"text": "\n".join(texts), "is_error": bool(result.get("isError"))}
answers = []
for entry in plan["calls"]:
    try:
        answers.append(call(plan["servers"][entry["server"]], entry["tool"], entry["arguments"]))
    except Exception as exc:
        answers.append({"error": f"{type(exc).__name__}: {exc}"})
json.dump(answers, open(os.path.join(sys.argv[2], "replayed.json"), "w"))
"""


class ReplayedCall(ContractModel):
    message: int = Field(ge=0)  # the conversation's message carrying the result
    tool: str
    input: JsonValue  # as the model gave it
    received: str  # the tool's output as the gateway carried it to the model
    replayed: str | None  # what the restored state answers; None when the replay could not get an answer
    matches: bool


class ToolReplay(Document):
    kind: Literal["tool-replay"] = "tool-replay"
    schema_version: Literal[1] = 1
    system: ConditionName
    exchanges: Digest  # the treatment arm's gateway log the calls were read from
    calls: tuple[ReplayedCall, ...]
    findings: tuple[Annotated[str, Field(max_length=2000)], ...]
    output: str  # the replay container's own output (bounded), for a replay that failed
    seconds: float = Field(ge=0)


_Call = tuple[
    int, str, str, str, Any, str
]  # message, tool as the harness names it, server, server's tool, input, output


def _memory_calls(system: MemorySystem, exchanges: list[ExchangeRecord], runner: RunnerRecord) -> list[_Call]:
    """Each memory-tool result the conversation carried, with the call it answers (the model's own input)."""
    conversation = harness_conversation(exchanges, runner)
    inputs = {call.id: call.input for call in tool_calls(conversation)}
    found = []
    for result in tool_results(conversation):
        for server in system.tool_servers:
            prefix = f"mcp__{server}__"
            if result.tool.startswith(prefix) and not result.is_error and result.tool_use_id in inputs:
                tool = result.tool[len(prefix) :]
                found.append((result.message, result.tool, server, tool, inputs[result.tool_use_id], result.output))
    return found


def _stage(backend: SandboxBackend, root: Path, copies: tuple[StateCopy, ...]) -> tuple[list[Mount], list[Any]]:
    """The pristine copies (read-only) and a writable place at each target, as mounts and as the driver's plan."""
    mounts, state = [], []
    for n, copy in enumerate(copies):
        export_state(backend.store, copy, root / f"p{n}")
        live = root / f"l{n}"
        if copy.file:
            live.write_bytes(b"")
            live.chmod(0o666)
        else:
            live.mkdir(mode=0o777)
            live.chmod(0o777)
        for path in (root / f"p{n}", *(root / f"p{n}").rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        inside = f"{ASSET_DIR}/p{n}" + (f"/{PurePosixPath(copy.target).name}" if copy.file else "")
        mounts += [
            Mount.of(root / f"p{n}", f"runner:replay/p{n}", f"{ASSET_DIR}/p{n}"),
            Mount.of(live, f"runner:replay/l{n}", copy.target, read_only=False),
        ]
        state.append({"target": copy.target, "pristine": inside, "file": copy.file})
    return mounts, state


def replay_tools(
    backend: SandboxBackend,
    system: MemorySystem,
    image_id: str,
    exchanges_digest: Digest,
    exchanges: list[ExchangeRecord],
    runner: RunnerRecord,
    before: tuple[StateCopy, ...],
) -> ToolReplay | None:
    """Replay ``system``'s memory-tool calls of one treatment arm over ``before``; None when it made none."""
    calls = _memory_calls(system, exchanges, runner)
    if not calls:
        return None
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix=RUNNER_SCRATCH["verifier"]))
    try:
        root.chmod(0o755)
        mounts, state = _stage(backend, root, before)
        servers = {name: sealed_server(server) for name, server in system.attachment.mcp_servers.items()}
        plan = {
            "servers": servers,
            "state": state,
            "calls": [{"server": server, "tool": tool, "arguments": given} for _, _, server, tool, given, _ in calls],
        }
        (root / "plan.json").write_text(json.dumps(plan))
        (root / "driver.py").write_text(_DRIVER)
        for path in (root / "plan.json", root / "driver.py"):
            path.chmod(0o644)
        mounts.append(Mount.of(root / "plan.json", "runner:replay/plan.json", "/mnt/plan.json"))
        mounts.append(Mount.of(root / "driver.py", "runner:replay/driver.py", "/mnt/driver.py"))
        command = ("python3", "/mnt/driver.py", "/mnt/plan.json", WORKSPACE)
        environment = Environment(network_mode=NetworkMode.NONE, cpus=1.0, memory_mb=1024)
        spec = container_spec(image_id, environment, command, network=NetworkMode.NONE, mounts=tuple(mounts))
        ran = backend.run(RunRequest(spec=spec, workspace=None, timeout_seconds=system.timeouts.snapshot_seconds))
        answers = _answers(backend, ran.tree)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return _receipt(system, exchanges_digest, calls, answers, ran.output, time.monotonic() - started)


def _answers(backend: SandboxBackend, tree: Digest | None) -> list[dict[str, Any]]:
    if tree is None:
        return []
    entry = next((e for e in read_tree(backend.store, tree).entries if e.name == _OUT), None)
    if entry is None or entry.kind is not EntryKind.FILE:
        return []
    answers = parse_json(backend.store.get_bytes(entry.digest), "the memory-tool replay's answers")
    return answers if isinstance(answers, list) else []


def _same(replayed: str, received: str) -> bool:
    """The server's text as the harness passed it on: the same words, or the same JSON value (CLI 2.1.332 sends a
    server's JSON compact that the server wrote indented)."""
    if " ".join(replayed.split()) == " ".join(received.split()):
        return True
    try:
        return bool(parse_json(replayed, "a replayed tool result") == parse_json(received, "a received tool result"))
    except ContractError:
        return False


def _receipt(
    system: MemorySystem,
    exchanges: Digest,
    calls: list[_Call],
    answers: list[dict[str, Any]],
    output: str,
    seconds: float,
) -> ToolReplay:
    replayed, findings = [], []
    for n, (message, tool, _, _, given, received) in enumerate(calls):
        answer = answers[n] if n < len(answers) and isinstance(answers[n], dict) else {}
        text = answer.get("text") if isinstance(answer.get("text"), str) else None
        matches = text is not None and _same(text, received)
        replayed.append(ReplayedCall(message=message, tool=tool, input=given, received=received, replayed=text,
                                     matches=matches))  # fmt: skip
        if text is None:
            why = answer.get("error") or "no answer"
            findings.append(f"message {message}: {tool} could not be replayed on the restored state ({why})")
        elif not matches:
            findings.append(
                f"message {message}: {tool} answered what the restored state does not: {received[:_QUOTED]!r} "
                f"(the state answers {text[:_QUOTED]!r})"
            )
    return ToolReplay(system=system.name, exchanges=exchanges, calls=tuple(replayed),
                      findings=tuple(f[:2000] for f in findings), output=output[-4000:], seconds=seconds)  # fmt: skip


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (ToolReplay,)
