"""The Codex image built on the real engine, and the real CLI in it driven through a fresh and a resumed step by a
scripted Responses endpoint: the configuration, command lines, policy actions, rollout reader and request
recognizer are each checked against what the CLI actually did (the container runs with bench's engine options)."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from bench.grading.transcript import Channel, StepSource
from bench.harness.codex.actions import codex_call, offers
from bench.harness.codex.argv import AGENT_KEY, KEY_VARIABLE, codex_argv
from bench.harness.codex.config import CodexSetup, HookCommand, HookEvent, McpServer, render_files
from bench.harness.codex.image import CLI_VERSION, RECIPE, CodexImage, build_codex_image, find_codex_image
from bench.harness.codex.injected import builtin_memory_on, deferred_namespaces, injected_parts
from bench.harness.codex.rollout import parse_rollout
from bench.sandbox.backends.docker import DockerBackend, docker_client
from bench.sandbox.images import ImageName, build_image, cache_dir, find_image
from bench.sandbox.images.registry import INPUTS_LABEL, RECIPE_LABEL

pytestmark = pytest.mark.slow  # builds an image and runs the real CLI in containers

HERE = Path(__file__).parent
MODEL = "gpt-5.5"


@pytest.fixture(scope="module")
def engine() -> Iterator[docker.DockerClient]:
    client = docker_client()
    yield client
    client.close()


@pytest.fixture(scope="module")
def codex_image(engine: docker.DockerClient) -> CodexImage:
    backend = DockerBackend(client=engine)
    base = build_image(ImageName.BASE, backend).record.image_id
    return build_codex_image(base, cache_dir(), backend)


def test_the_image_is_found_by_its_own_labels_only(engine: docker.DockerClient, codex_image: CodexImage) -> None:
    backend = DockerBackend(client=engine)
    labels = engine.images.get(codex_image.image_id).labels
    assert labels[RECIPE_LABEL] == RECIPE and labels[INPUTS_LABEL] == codex_image.inputs
    agent = find_image(ImageName.AGENT, backend=backend)
    assert agent is None or agent.image_id != codex_image.image_id
    assert find_codex_image(None, backend) == codex_image
    base = build_image(ImageName.BASE, backend).record.image_id
    assert build_codex_image(base, cache_dir(), backend) == codex_image  # idempotent: same inputs, same image


def _call(name: str, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    return [codex_call(name, tool_input, f"call_{uuid.uuid4().hex[:8]}")]


def _script() -> list[list[dict[str, Any]]]:
    return [
        _call("Write", {"file_path": "/workspace/notes.md", "content": "alpha\nbeta\n"}),
        _call("Edit", {"file_path": "/workspace/notes.md", "old_string": "beta\n", "new_string": "gamma\n"}),
        _call("Bash", {"command": "env"}),
        [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "first done"}]}],
        _call("mcp__notes__lookup", {"query": "tabs"}),
        _call("Read", {"file_path": "/workspace/notes.md"}),
    ]


_RUN = """
python3 /t/responses_double.py 8765 /v/script.json /out/requests.jsonl > /out/double.out 2>&1 &
until grep -q listening /out/double.out; do sleep 0.1; done
mkdir -p ~/.codex && cp /v/home/* ~/.codex/
{fresh} </dev/null > /out/fresh.jsonl 2> /out/fresh.err; echo $? > /out/fresh.rc
thread=$(python3 -c "import json; print(json.loads(open('/out/fresh.jsonl').readline())['thread_id'])")
{resume} </dev/null > /out/resume.jsonl 2> /out/resume.err; echo $? > /out/resume.rc
cp ~/.codex/sessions/*/*/*/rollout-*.jsonl /out/rollout.jsonl
"""


@pytest.fixture(scope="module")
def ran(engine: docker.DockerClient, codex_image: CodexImage, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One fresh and one resumed step of the real CLI in the image, against the scripted endpoint."""
    root = tmp_path_factory.mktemp("codex")
    (root / "v" / "home").mkdir(parents=True)
    setup = CodexSetup(
        model=MODEL,
        base_url="http://127.0.0.1:8765/v1",
        key_variable=KEY_VARIABLE,
        instructions="Prefer tabs.\n",
        servers=(McpServer(name="notes", command="python3", args=("/t/mcp_lookup.py",), env={"NOTES": "/n"}),),
        hooks=(
            HookCommand(event=HookEvent.USER_PROMPT_SUBMIT, command="python3 /t/hook_context.py"),
            HookCommand(event=HookEvent.POST_TOOL_USE, command="python3 /t/hook_context.py"),
        ),
    )
    for name, data in render_files(setup).items():
        (root / "v" / "home" / name).write_bytes(data)
    (root / "v" / "script.json").write_text(json.dumps(_script()))
    for name in ("workspace", "out"):
        (root / name).mkdir()
        shutil.chown(root / name, 1000, 1000)
    fresh = " ".join(f"'{arg}'" for arg in codex_argv("start the notes", MODEL))
    resume = " ".join(f"'{arg}'" for arg in codex_argv("look the notes up", MODEL, "THREAD")).replace(
        "'THREAD'", '"$thread"'
    )
    engine.containers.run(
        codex_image.image_id,
        ["bash", "-c", _RUN.format(fresh=fresh, resume=resume)],
        name=f"h34c-codex-{uuid.uuid4().hex[:8]}",
        user="1000:1000",
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        network_mode="none",
        working_dir="/workspace",
        environment={"HOME": "/home/dev", KEY_VARIABLE: AGENT_KEY},
        volumes={
            str(HERE): {"bind": "/t", "mode": "ro"},
            str(root / "v"): {"bind": "/v", "mode": "ro"},
            str(root / "workspace"): {"bind": "/workspace", "mode": "rw"},
            str(root / "out"): {"bind": "/out", "mode": "rw"},
        },
        remove=True,
    )
    return root


def _requests(ran: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["body"] for line in (ran / "out" / "requests.jsonl").read_text().splitlines()]


def test_both_steps_complete_and_the_actions_took_effect(ran: Path) -> None:
    out = ran / "out"
    assert (out / "fresh.rc").read_text().strip() == "0", (out / "fresh.err").read_text()
    assert (out / "resume.rc").read_text().strip() == "0", (out / "resume.err").read_text()
    assert (ran / "workspace" / "notes.md").read_text() == "alpha\ngamma\n"  # Write, then Edit, as patches
    outputs = [item for body in _requests(ran) for item in body["input"] if item.get("type") == "function_call_output"]
    env_output = next(str(item["output"]) for item in outputs if "HOME=" in str(item["output"]))
    assert KEY_VARIABLE not in env_output and AGENT_KEY not in env_output  # the key is kept out of `env`


def test_the_rollout_reads_as_the_common_transcript(ran: Path) -> None:
    out = ran / "out"
    streams = [(out / "fresh.jsonl").read_bytes(), (out / "resume.jsonl").read_bytes()]
    transcript = parse_rollout((out / "rollout.jsonl").read_bytes(), "rollout.jsonl", streams)
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
    assert transcript.usage.input_tokens == 60 * 7 and transcript.usage.cache_read_input_tokens == 40 * 7


def test_the_requests_show_what_was_injected_and_offered(ran: Path) -> None:
    last = _requests(ran)[-1]
    assert "mcp__notes" in deferred_namespaces(last) and not builtin_memory_on(last)
    assert offers(last, "mcp__notes__lookup") and offers(last, "Read") and not offers(last, "mcp__other__x")
    parts = injected_parts(last)
    assert [part.text for part in parts if part.channel is Channel.STATIC_CONTEXT] == ["Prefer tabs."]
    assert len([part for part in parts if part.channel is Channel.ANCHOR_TRIGGERED_RECALL]) == 5
    assert len([part for part in parts if part.channel is Channel.PROMPT_TIME_RETRIEVAL]) == 2
