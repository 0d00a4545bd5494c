"""The Codex image built on the real engine, and the real CLI in it driven through a fresh and a resumed step by
the real gateway in policy mode (the Responses dialect, with Codex's reply naming and tool offering): the
configuration, command lines, policy actions, rollout reader and request recognizer are each checked against what
the CLI actually did. The container runs with bench's engine options, sharing only the host's loopback."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from bench.agent.gateway_hooks import gateway_hooks
from bench.contracts.api_dialect import ApiDialect
from bench.gateway import DirectoryRecorder, Gateway, GatewayConfig, Mode
from bench.gateway.config import ArmKey, PolicyPin
from bench.gateway.exchange import ExchangeRecord, read_exchanges
from bench.harness import AttachmentRequest, ConfigFile, HookEvent, HookSpec, McpServerSpec, harness_named
from bench.harness.codex.argv import AGENT_KEY, KEY_VARIABLE
from bench.harness.codex.injected import builtin_memory_on, deferred_namespaces, injected_parts
from bench.harness.codex.recipe import CLI_VERSION, IMAGE_LABEL
from bench.harness.transcript import Channel, StepSource
from bench.images import ImageName, build_image, cache_dir, find_image
from bench.images.harness_image import HarnessImage, build_harness_image, find_harness_image
from bench.images.labels import INPUTS_LABEL, RECIPE_LABEL
from bench.sandbox.backends.docker import DockerBackend, docker_client
from bench.sandbox.layout import BASE_ENV

pytestmark = pytest.mark.slow  # builds an image and runs the real CLI in containers

HERE = Path(__file__).parent
CODEX = harness_named("codex")
MODEL = "gpt-5.5"


def _tool(name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def _rule(name: str, turn: int, reply: dict[str, Any], **when: Any) -> dict[str, Any]:
    return {"name": name, "when": {"turn": turn, **when}, "reply": [reply]}


# In the policy's own vocabulary (Claude Code's tool names); Codex's naming carries each call on Codex's tools. The
# rules also ask for what the harness should have delivered by then, so a delivery that went missing shows.
_WRITE = {"file_path": "/workspace/notes.md", "content": "alpha\nbeta\n"}
_EDIT = {"file_path": "/workspace/notes.md", "old_string": "beta\n", "new_string": "gamma\n"}
POLICY = {
    "kind": "model-policy",
    "schema_version": 1,
    "rules": [
        _rule("write", 1, _tool("Write", _WRITE), offers=["mcp__notes__lookup", "Edit"], contains=["Prefer tabs."]),
        _rule("edit", 2, _tool("Edit", _EDIT), contains=["CONTEXT-PostToolUse-apply_patch"]),
        _rule("env", 3, _tool("Bash", {"command": "env"})),
        _rule("first-done", 4, {"type": "text", "text": "first done"}),
        _rule("lookup", 5, _tool("mcp__notes__lookup", {"query": "tabs"}), contains=["look the notes up"]),
        _rule("read", 6, _tool("Read", {"file_path": "/workspace/notes.md"}), contains=["NOTE: tabs"]),
    ],
    "default": [{"type": "text", "text": "done"}],
}
_RUN = """
{fresh} </dev/null > /out/fresh.jsonl 2> /out/fresh.err; echo $? > /out/fresh.rc
thread=$(python3 -c "import json; print(json.loads(open('/out/fresh.jsonl').readline())['thread_id'])")
{resume} </dev/null > /out/resume.jsonl 2> /out/resume.err; echo $? > /out/resume.rc
cp ~/.codex/sessions/*/*/*/rollout-*.jsonl /out/rollout.jsonl
"""


@pytest.fixture(scope="module")
def engine() -> Iterator[docker.DockerClient]:
    client = docker_client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def codex_image(engine: docker.DockerClient) -> HarnessImage:
    backend = DockerBackend(client=engine)
    base = build_image(ImageName.BASE, backend).record.image_id
    return build_harness_image(CODEX.image_recipe(), IMAGE_LABEL, base, cache_dir(), backend)


def test_the_image_is_found_by_its_own_labels_only(engine: docker.DockerClient, codex_image: HarnessImage) -> None:
    backend = DockerBackend(client=engine)
    labels = engine.images.get(codex_image.image_id).labels
    assert labels[RECIPE_LABEL] == IMAGE_LABEL and labels[INPUTS_LABEL] == codex_image.inputs
    agent = find_image(ImageName.AGENT, backend=backend)
    assert agent is None or agent.image_id != codex_image.image_id
    # by its label and inputs: an engine may hold other builds of the label (another version, other inputs)
    assert find_harness_image(IMAGE_LABEL, codex_image.inputs, backend) == codex_image
    base = build_image(ImageName.BASE, backend).record.image_id
    assert (
        build_harness_image(CODEX.image_recipe(), IMAGE_LABEL, base, cache_dir(), backend) == codex_image
    )  # idempotent: same inputs, same image


def _files(url: str) -> tuple[ConfigFile, ...]:
    request = AttachmentRequest(
        base_env=dict(BASE_ENV),
        base_url=url,
        instructions=b"Prefer tabs.\n",
        mcp_servers=(McpServerSpec(name="notes", command="python3", args=("/t/mcp_lookup.py",), env={"NOTES": "/n"}),),
        hooks=(
            HookSpec(event=HookEvent.USER_PROMPT_SUBMIT, command="python3 /t/hook_context.py"),
            HookSpec(event=HookEvent.POST_TOOL_USE, command="python3 /t/hook_context.py"),
        ),
    )
    return CODEX.render(request).files


def _gateway(root: Path) -> Gateway:
    data = json.dumps(POLICY).encode()
    (root / "policy.json").write_bytes(data)
    config = GatewayConfig(
        mode=Mode.POLICY,
        dialect=ApiDialect.OPENAI_RESPONSES,
        arms=(ArmKey(label="a", key_sha256=hashlib.sha256(AGENT_KEY.encode()).hexdigest()),),
        policy=PolicyPin(path="policy.json", sha256=hashlib.sha256(data).hexdigest()),
    )
    recorder = DirectoryRecorder(root / "log")
    return Gateway(config, recorder, policy_root=root, hooks=gateway_hooks(CODEX))


@pytest.fixture(scope="module")
def ran(engine: docker.DockerClient, codex_image: HarnessImage, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fresh and one resumed step of the real CLI in the image, answered by the gateway."""
    root = tmp_path_factory.mktemp("codex")
    (root / "v" / "home").mkdir(parents=True)
    for name in ("workspace", "out", "codexhome"):
        (root / name).mkdir()
        shutil.chown(root / name, 1000, 1000)
    fresh = shlex.join(CODEX.argv("start the notes", MODEL))
    resume = shlex.join(CODEX.argv("look the notes up", MODEL, "THREAD")).replace("THREAD", '"$thread"')
    with _gateway(root) as gateway:
        mounts = {}  # each file read-only at its target, as the runner mounts them, over a home the agent owns
        for number, file in enumerate(_files(gateway.url)):
            staged = root / "v" / "home" / str(number)
            staged.mkdir() if file.directory else staged.write_bytes(file.content)
            mounts[str(staged)] = {"bind": f"/home/dev/{file.target}", "mode": "ro"}
        engine.containers.run(
            codex_image.image_id,
            ["bash", "-c", _RUN.format(fresh=fresh, resume=resume)],
            name=f"h34c-codex-{uuid.uuid4().hex[:8]}",
            user="1000:1000",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            network_mode="host",  # the gateway's loopback; an arm reaches its gateway through a relay network
            working_dir="/workspace",
            environment={**BASE_ENV, **CODEX.environment(gateway.url)},
            volumes={
                str(HERE): {"bind": "/t", "mode": "ro"},
                str(root / "v"): {"bind": "/v", "mode": "ro"},
                str(root / "workspace"): {"bind": "/workspace", "mode": "rw"},
                str(root / "out"): {"bind": "/out", "mode": "rw"},
                str(root / "codexhome"): {"bind": "/home/dev/.codex", "mode": "rw"},
                **mounts,
            },
            remove=True,
        )
    return root


def _exchanges(ran: Path) -> tuple[ExchangeRecord, ...]:
    return read_exchanges(ran / "log")


def test_both_steps_complete_and_each_rule_fired(ran: Path) -> None:
    out = ran / "out"
    assert (out / "fresh.rc").read_text().strip() == "0", (out / "fresh.err").read_text()
    assert (out / "resume.rc").read_text().strip() == "0", (out / "resume.err").read_text()
    rules = [exchange.rule for exchange in _exchanges(ran)]
    assert rules == ["write", "edit", "env", "first-done", "lookup", "read", "default"]
    assert (ran / "workspace" / "notes.md").read_text() == "alpha\ngamma\n"  # Write, then Edit, as patches
    bodies = [exchange.request_body for exchange in _exchanges(ran)]
    outputs = [str(item.get("output")) for body in bodies if isinstance(body, dict) for item in body["input"]]
    env_output = next(output for output in outputs if "HOME=/home/dev" in output)
    assert KEY_VARIABLE not in env_output and AGENT_KEY not in env_output  # the key is kept out of `env`


def test_the_rollout_reads_as_the_common_transcript(ran: Path) -> None:
    out = ran / "out"
    streams = [(out / "fresh.jsonl").read_bytes(), (out / "resume.jsonl").read_bytes()]
    transcript = CODEX.parse_session((out / "rollout.jsonl").read_bytes(), streams)
    assert transcript.harness_version == CLI_VERSION and transcript.runs == 2
    assert [step.text for step in transcript.by_source(StepSource.USER)] == ["start the notes", "look the notes up"]
    injected = transcript.by_source(StepSource.INJECTED)
    static = [step for step in injected if step.channel is Channel.STATIC_CONTEXT]
    assert len(static) == 1 and "Prefer tabs." in static[0].text
    calls = {call.id: call.name for step in transcript.steps for call in step.tool_calls}
    anchored = [step for step in injected if step.channel is Channel.ANCHOR_TRIGGERED_RECALL]
    assert [(calls[str(step.trigger_tool_use_id)], step.text) for step in anchored] == [
        ("apply_patch", "CONTEXT-PostToolUse-apply_patch"),
        ("apply_patch", "CONTEXT-PostToolUse-apply_patch"),
        ("exec_command", "CONTEXT-PostToolUse-Bash"),
        ("mcp__notes__lookup", "CONTEXT-PostToolUse-mcp__notes__lookup"),
        ("exec_command", "CONTEXT-PostToolUse-Bash"),
    ]
    prompts = [step.text for step in injected if step.channel is Channel.PROMPT_TIME_RETRIEVAL]
    assert prompts == ["CONTEXT-UserPromptSubmit-", "CONTEXT-UserPromptSubmit-"]
    results = [result.text for step in transcript.steps for result in step.tool_results]
    assert any("NOTE: tabs ENV: HOME" in text and "NOTES" in text and KEY_VARIABLE not in text for text in results)
    assert transcript.usage.output_tokens > 0  # the gateway's stand-in counts, as its answers reported them


def test_the_requests_show_what_was_injected_and_offered(ran: Path) -> None:
    last = _exchanges(ran)[-1].request_body
    assert isinstance(last, dict)
    assert "mcp__notes" in deferred_namespaces(last) and not builtin_memory_on(last)
    parts = injected_parts(last)
    assert [part.text for part in parts if part.channel is Channel.STATIC_CONTEXT] == ["Prefer tabs."]
    assert len([part for part in parts if part.channel is Channel.ANCHOR_TRIGGERED_RECALL]) == 5
    assert len([part for part in parts if part.channel is Channel.PROMPT_TIME_RETRIEVAL]) == 2
