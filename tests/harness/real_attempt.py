"""One scripted attempt of any registered harness's real CLI, driven only through the harness contract.

The same policy (in the policy's own vocabulary), the same attachment (an instructions file, an MCP server, a prompt
hook and a post-tool hook) and the same two prompts for every harness: a fresh step that writes, reads and edits a
file, then a resumed step that calls the MCP server's tool. The harness renders the attachment, names the command
lines, the environment and the session file; its gateway speaks the harness's dialect. The CLI runs in the
harness's image under bench's engine options (uid 1000, every capability dropped), reaching the gateway on the
host's loopback, its configuration mounted read-only over a home it owns.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import docker

from bench.agent.gateway_hooks import gateway_hooks
from bench.agent.harness_files import container_path
from bench.gateway import DirectoryRecorder, ExchangeRecord, Gateway, GatewayConfig, Mode
from bench.gateway.config import ArmKey, PolicyPin
from bench.gateway.exchange import read_exchanges
from bench.grading import InstalledHook, MemoryDeclaration, RunnerRecord
from bench.harness import AttachmentRequest, ConfigFile, Harness, HookEvent, HookSpec, McpServerSpec
from bench.sandbox.layout import BASE_ENV, USER_HOME

__all__ = ["MEMORY", "PROMPTS", "RealAttempt", "run_attempt"]

SCRIPTS = Path(__file__).parent / "codex"  # the MCP server and the hook (standard library only)
WORKSPACE = "/workspace"
NOTES = f"{WORKSPACE}/notes.md"
INSTRUCTIONS = "Prefer tabs in notes."
PROMPTS = ("start the notes", "look the notes up")
MCP_TOOL = "mcp__notes__lookup"


def _tool(name: str, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": tool_input}]


def _rule(name: str, turn: int, reply: list[dict[str, Any]], **when: Any) -> dict[str, Any]:
    return {"name": name, "when": {"turn": turn, **when}, "reply": reply}


# Each rule asks for what should have reached the model by then, so a channel that failed shows as a rule not fired.
POLICY = {
    "kind": "model-policy",
    "schema_version": 1,
    "rules": [
        _rule("write", 1, _tool("Write", {"file_path": NOTES, "content": "alpha\nbeta\n"}), contains=[INSTRUCTIONS]),
        _rule("read", 2, _tool("Read", {"file_path": NOTES})),
        _rule("edit", 3, _tool("Edit", {"file_path": NOTES, "old_string": "beta\n", "new_string": "gamma\n"})),
        _rule("first-done", 4, [{"type": "text", "text": "first done"}]),
        _rule("lookup", 5, _tool(MCP_TOOL, {"query": "tabs"}), contains=[PROMPTS[1]], offers=[MCP_TOOL]),
    ],
    "default": [{"type": "text", "text": "done"}],
}
# What the memory declares: the instructions file's words, the server's answer, the hooks' context.
MEMORY_PHRASES = (INSTRUCTIONS, "NOTE: tabs", "CONTEXT-UserPromptSubmit-")
HOOKS = (
    HookSpec(event=HookEvent.USER_PROMPT_SUBMIT, command="python3 /t/hook_context.py"),
    HookSpec(event=HookEvent.POST_TOOL_USE, command="python3 /t/hook_context.py"),
)
MEMORY = MemoryDeclaration(
    phrases=MEMORY_PHRASES,
    tool_servers=("notes",),
    hooks=(InstalledHook(event="UserPromptSubmit"), InstalledHook(event="PostToolUse")),
)


@dataclass(frozen=True)
class RealAttempt:
    harness: Harness
    exchanges: tuple[ExchangeRecord, ...]
    session: bytes
    outputs: tuple[bytes, ...]  # each step's standard output
    notes: str  # the edited file, as the steps left it
    runner: RunnerRecord
    memory: MemoryDeclaration  # MEMORY with the harness's instructions file as the static-context channel


def _files(harness: Harness, url: str) -> tuple[ConfigFile, ...]:
    request = AttachmentRequest(
        base_env=dict(BASE_ENV),
        base_url=url,
        instructions=f"{INSTRUCTIONS}\n".encode(),
        mcp_servers=(McpServerSpec(name="notes", command="python3", args=("/t/mcp_lookup.py",), env={"NOTES": "/n"}),),
        hooks=HOOKS,
    )
    return harness.render(request).files + harness.managed_files(False)


def _gateway(harness: Harness, root: Path) -> Gateway:
    data = json.dumps(POLICY).encode()
    (root / "policy.json").write_bytes(data)
    config = GatewayConfig(
        mode=Mode.POLICY,
        dialect=harness.dialect,
        arms=(ArmKey(label="a", key_sha256=hashlib.sha256(harness.agent_key.encode()).hexdigest()),),
        policy=PolicyPin(path="policy.json", sha256=hashlib.sha256(data).hexdigest()),
    )
    return Gateway(config, DirectoryRecorder(root / "log"), policy_root=root, hooks=gateway_hooks(harness))


def _owned(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    shutil.chown(path, 1000, 1000)
    return path


def _step(
    engine: docker.DockerClient, image: str, argv: tuple[str, ...], mounts: dict[str, Any], env: dict[str, str]
) -> bytes:
    """One step of the CLI in a fresh container over the same home and workspace; its standard output."""
    command = f"{shlex.join(argv)} </dev/null > /out/step.out 2> /out/step.err; echo $? > /out/step.rc"
    out = Path(next(host for host, bind in mounts.items() if bind["bind"] == "/out"))
    engine.containers.run(
        image,
        ["bash", "-c", command],
        name=f"h34g-contract-{uuid.uuid4().hex[:8]}",
        user="1000:1000",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        network_mode="host",  # the gateway's loopback; an arm reaches its gateway through a relay network
        working_dir=WORKSPACE,
        environment=env,
        volumes=mounts,
        remove=True,
    )
    code = (out / "step.rc").read_text().strip()
    assert code == "0", f"{argv[0]} exited {code}: {(out / 'step.err').read_text()[-2000:]}"
    return (out / "step.out").read_bytes()


def run_attempt(harness: Harness, image: str, model: str, engine: docker.DockerClient, root: Path) -> RealAttempt:
    """A fresh step and a resumed one of ``harness``'s CLI in ``image`` (asked for ``model``), answered by POLICY."""
    home, workspace, out, staged = _owned(root / "home"), _owned(root / "workspace"), _owned(root / "out"), root / "v"
    staged.mkdir()
    for directory in harness.home:
        _owned(home / directory)
    with _gateway(harness, root) as gateway:
        mounts: dict[str, Any] = {
            str(SCRIPTS): {"bind": "/t", "mode": "ro"},
            str(home): {"bind": USER_HOME, "mode": "rw"},
            str(workspace): {"bind": WORKSPACE, "mode": "rw"},
            str(out): {"bind": "/out", "mode": "rw"},
        }
        for number, file in enumerate(_files(harness, gateway.url)):
            path = staged / str(number)
            path.mkdir() if file.directory else path.write_bytes(file.content)
            mounts[str(path)] = {"bind": str(container_path(file.target)), "mode": "ro"}
        env = {**BASE_ENV, **harness.environment(gateway.url)}
        first = _step(engine, image, harness.argv(PROMPTS[0], model), mounts, env)
        session_id = harness.session_id_of(first)
        assert session_id is not None, first[-2000:]
        second = _step(engine, image, harness.argv(PROMPTS[1], model, session_id), mounts, env)
    pattern = str(harness.session_file(session_id, WORKSPACE))
    sessions = sorted(home.glob(pattern)) if not PurePosixPath(pattern).is_absolute() else []
    assert len(sessions) == 1, f"session file {pattern}: found {sessions}"
    static = str(container_path(harness.instructions_path))
    return RealAttempt(
        harness=harness,
        exchanges=read_exchanges(root / "log"),
        session=sessions[0].read_bytes(),
        outputs=(first, second),
        notes=(workspace / "notes.md").read_text(),
        runner=RunnerRecord(prompts=PROMPTS, cwd=WORKSPACE, harness=harness.name),
        memory=MEMORY.model_copy(update={"static_files": (static,)}),
    )
