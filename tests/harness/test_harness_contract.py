"""The harness contract: what every registered harness must do.

One class, run once per registered harness (as dulwich runs one object-store suite over every store): the shape of
its argv, its rendering of an attachment (deterministic, runner-owned, the same files in every arm, commands
sealed), its parsing of a recorded session of the real CLI, its recognition of injected context and its credential
patterns; and (slow) its real CLI driven by one scripted policy through a file edit, a resumed step, an MCP tool
call and a static-context delivery, each credited through the same grading code (real_attempt.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from harness_samples import SAMPLES, Samples
from real_attempt import INSTRUCTIONS, NOTES, PROMPTS, RealAttempt, run_attempt

from bench.contracts import ApiDialect
from bench.errors import ContractError
from bench.grading import Channel, OutcomeGrade, grade, harness_conversation
from bench.grading.gateway_view import tool_calls, tool_input_text, user_prompts
from bench.harness import (
    HARNESS_NAMES,
    AttachmentRequest,
    Harness,
    HookEvent,
    HookSpec,
    McpServerSpec,
    MemoryChannel,
    harness_named,
    require_channels,
)
from bench.harness.codex.recipe import IMAGE_LABEL as CODEX_IMAGE_LABEL
from bench.harness.transcript import StepSource
from bench.images import ImageName, build_image, cache_dir
from bench.images.harness_image import build_harness_image
from bench.sandbox.backends.docker import DockerBackend, docker_client

BASE = {"HOME": "/home/dev", "PATH": "/usr/bin:/bin"}
URL = "http://api:8080"
SECRET_ENV = "MODEL_SECRET_TEST"


def _request(**channels: object) -> AttachmentRequest:
    return AttachmentRequest(base_env=BASE, base_url=URL, **channels)  # type: ignore[arg-type]


FULL = _request(
    instructions=b"# Notes\nquartz\n",
    mcp_servers=(McpServerSpec(name="memory", command="mcp-server-memory", args=("--x",), env={"STORE": "/opt/s"}),),
    hooks=(
        HookSpec(event=HookEvent.USER_PROMPT_SUBMIT, command="python3 /opt/hook.py prompt", timeout_seconds=30),
        HookSpec(event=HookEvent.POST_TOOL_USE, matcher="Read|Edit", command="python3 /opt/hook.py recall"),
    ),
)


def _agent_image(harness: Harness, backend: DockerBackend) -> str:
    return build_image(ImageName.AGENT, backend).record.image_id


def _codex_image(harness: Harness, backend: DockerBackend) -> str:
    base = build_image(ImageName.BASE, backend).record.image_id
    return build_harness_image(harness.image_recipe(), CODEX_IMAGE_LABEL, base, cache_dir(), backend).image_id


# Each harness's image and a model its CLI knows (Codex gives a model outside its catalogue no apply_patch tool).
REAL_CLI: dict[str, tuple[Callable[[Harness, DockerBackend], str], str]] = {
    "claude-code": (_agent_image, "claude-sonnet-4-5"),
    "codex": (_codex_image, "gpt-5.5"),
}


@pytest.fixture(scope="module")
def real_attempts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Harness], RealAttempt]]:
    """Each harness's scripted real-CLI attempt, run once when first asked for."""
    done: dict[str, RealAttempt] = {}
    client = docker_client()

    def attempt(harness: Harness) -> RealAttempt:
        assert harness.name in REAL_CLI, f"harness {harness.name!r} has no image and model in REAL_CLI"
        if harness.name not in done:
            image, model = REAL_CLI[harness.name]
            root = tmp_path_factory.mktemp(harness.name)
            done[harness.name] = run_attempt(harness, image(harness, DockerBackend(client=client)), model, client, root)
        return done[harness.name]

    yield attempt
    client.close()


@pytest.fixture(params=HARNESS_NAMES)
def harness(request: pytest.FixtureRequest) -> Harness:
    return harness_named(request.param)


@pytest.fixture
def samples(harness: Harness) -> Samples:
    assert harness.name in SAMPLES, f"harness {harness.name!r} has no recorded samples in harness_samples.py"
    return SAMPLES[harness.name]


class TestHarnessContract:
    def test_identity(self, harness: Harness) -> None:
        assert harness_named(harness.name) is harness
        assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+.*", harness.version)
        assert harness.version in harness.label and isinstance(harness.dialect, ApiDialect)
        assert harness.capabilities <= frozenset(MemoryChannel)
        recipe = harness.image_recipe()
        assert recipe.package and recipe.binary and recipe.install_path.startswith("/")

    def test_argv_of_a_fresh_and_a_resumed_step(self, harness: Harness) -> None:
        prompt = "Fix 'the' bug; then $HOME && `x`"
        fresh = harness.argv(prompt, "model-a")
        resumed = harness.argv(prompt, "model-a", resume="0b1e-session")
        assert prompt in fresh and prompt in resumed  # one element, unquoted: no shell between runner and CLI
        assert "0b1e-session" not in fresh and "0b1e-session" in resumed
        assert any("model-a" in part for part in fresh)

    def test_environment_points_at_the_endpoint_with_the_stand_in_key(self, harness: Harness) -> None:
        env = harness.environment(URL)
        rendered = b"".join(file.content for file in harness.render(_request()).files)
        assert harness.agent_key in env.values()
        assert URL in env.values() or URL.encode() in rendered
        assert harness.environment(URL) == env

    def test_rendering_is_deterministic_and_the_same_files_in_every_arm(self, harness: Harness) -> None:
        control, treatment = harness.render(_request()), harness.render(FULL)
        assert harness.render(FULL) == treatment
        assert [(f.name, f.target, f.directory) for f in control.files] == [
            (f.name, f.target, f.directory) for f in treatment.files
        ]
        names = [file.name for file in treatment.files]
        assert len(set(names)) == len(names) and len(treatment.by_target()) == len(names)
        assert all(not f.content for f in treatment.files if f.directory)
        assert harness.instructions_path in {f.target for f in treatment.files}

    def test_every_declared_command_is_sealed(self, harness: Harness) -> None:
        rendered = b"\n".join(file.content for file in harness.render(FULL).files)
        for command in (b"mcp-server-memory", b"hook.py prompt", b"hook.py recall"):
            assert command in rendered
        assert rendered.count(b"env -i") + rendered.count(b'"env"') >= 3  # two hooks and the server
        assert b"STORE=/opt/s" in rendered

    def test_the_builtin_memory_is_off_unless_declared(self, harness: Harness) -> None:
        if MemoryChannel.BUILTIN_MEMORY not in harness.capabilities:
            pytest.skip(f"{harness.name} offers no built-in memory")
        assert harness.managed_files(False) != harness.managed_files(True)
        assert harness.builtin_memory(_request(builtin_memory=True)) and not harness.builtin_memory(_request())

    def test_a_channel_the_harness_lacks_is_refused_naming_it(self, harness: Harness) -> None:
        require_channels(harness, harness.capabilities, "memory system 'ok'")
        missing = frozenset(MemoryChannel) - harness.capabilities
        for channel in missing:
            with pytest.raises(ContractError, match=channel.value):
                require_channels(harness, {channel}, "memory system 'x'")

    def test_a_recorded_session_parses_into_the_common_transcript(self, harness: Harness, samples: Samples) -> None:
        assert harness.session_id_of(samples.outputs[0]) == samples.session_id
        assert harness.session_id_of(b"") is None
        path = harness.session_file(samples.session_id, "/workspace")
        assert not path.is_absolute() and samples.session_id in str(path)
        transcript = harness.parse_session(samples.session, samples.outputs)
        assert transcript.harness == harness.name and transcript.session_id == samples.session_id
        assert transcript.runs == len(samples.outputs)
        assert samples.prompt in [step.text for step in transcript.by_source(StepSource.USER)]
        assert transcript.by_source(StepSource.AGENT) and transcript.by_source(StepSource.INJECTED)

    def test_a_session_file_that_is_not_one_is_refused(self, harness: Harness) -> None:
        with pytest.raises(ContractError):
            harness.parse_session(b"not json\n")

    def test_injected_context_is_recognized_and_the_user_s_is_not(self, harness: Harness, samples: Samples) -> None:
        injection = harness.injection
        if not injection.marked:  # its hook context is an item of its own: no text is a hook block
            assert injection.hook_block(samples.hook_text) is None and not injection.is_harness_text(samples.prompt)
            assert injection.hook_channel(samples.hook) is samples.channel
            return
        block = injection.hook_block(samples.hook_text)
        assert block is not None and (block.hook, block.text) == (samples.hook, samples.hook_body)
        assert injection.hook_channel(block.hook) is samples.channel
        assert injection.is_harness_text(samples.hook_text) and not injection.is_harness_text(samples.prompt)
        assert injection.hook_block(samples.prompt) is None
        assert injection.hook_block(samples.hook_body) is None  # the bare text is what an agent can print

    def test_a_tool_result_splits_into_output_and_the_harness_s_blocks(
        self, harness: Harness, samples: Samples
    ) -> None:
        output, blocks = harness.injection.split_tool_output(samples.tool_text)
        if not harness.injection.marked:  # nothing is appended to a tool's output
            assert (output, blocks) == (samples.tool_text, ())
            return
        assert output == samples.tool_output and len(blocks) == 1
        appended = harness.injection.hook_block(blocks[0])
        assert appended is not None and harness.injection.tool_hook(appended.hook, samples.tool)
        assert not harness.injection.tool_hook(appended.hook, samples.tool + "Other")
        assert harness.injection.split_tool_output(samples.tool_output) == (samples.tool_output, ())

    def test_a_loaded_file_is_read_with_its_path(self, harness: Harness, samples: Samples) -> None:
        (loaded,) = harness.injection.loaded_files(samples.loaded_text)
        assert (loaded.path, loaded.text.strip()) == (samples.loaded_path, samples.loaded_body)
        assert harness.injection.loaded_files(samples.prompt) == ()

    def test_context_placed_among_the_turns_is_a_hook_s_only_for_an_unmarked_harness(self, harness: Harness) -> None:
        placed = harness.injection.placed_hook("recall: tabs", None, True)
        if harness.injection.marked:  # its hook context carries its mark: nothing else is one
            assert placed is None and harness.injection.placed_hook("recall: tabs", "Read", False) is None
            return
        assert placed is not None and placed.text == "recall: tabs"
        assert harness.injection.hook_channel(placed.hook) is Channel.PROMPT_TIME_RETRIEVAL
        anchored = harness.injection.placed_hook("recall: tabs", "mcp__notes__lookup", False)
        assert anchored is not None and harness.injection.hook_channel(anchored.hook) is Channel.ANCHOR_TRIGGERED_RECALL
        started = harness.injection.placed_hook("recall: tabs", None, False)
        assert started is not None and harness.injection.hook_channel(started.hook) is Channel.SESSION_START

    @pytest.mark.slow
    def test_a_scripted_attempt_is_credited_through_the_same_grading_code(
        self, harness: Harness, real_attempts: Callable[[Harness], RealAttempt]
    ) -> None:
        """A file edit, a resumed step, an MCP tool call and a static-context delivery, graded by bench.grading."""
        attempt = real_attempts(harness)
        fired = [exchange.rule for exchange in attempt.exchanges]
        assert fired == ["write", "read", "edit", "first-done", "lookup", "default"], fired
        assert attempt.notes == "alpha\ngamma\n"  # written, then edited, by the harness's own tools
        transcript = harness.parse_session(attempt.session, attempt.outputs)
        assert transcript.runs == 2  # the second step resumed the first one's session
        conversation = harness_conversation(attempt.exchanges, attempt.runner)
        assert conversation.findings == [] and conversation.sequences == tuple(range(len(fired)))
        assert [text for _, text in user_prompts(conversation)] == list(PROMPTS)  # one conversation, both prompts
        edits = [call.name for call in tool_calls(conversation) if NOTES in tool_input_text(call.input)]
        assert len(edits) >= 3  # the write, the read and the edit name the file, as the harness's tools ran them
        graded = grade(
            transcript,
            attempt.exchanges,
            attempt.memory,
            OutcomeGrade(verifier_passed=True, audit_clean=True),
            attempt.runner,
        )
        delivered = graded.delivered
        assert delivered.tampered == () and delivered.gateway_agrees and delivered.delivered, delivered
        assert delivered.channel(Channel.STATIC_CONTEXT).gateway_phrases == (INSTRUCTIONS,)
        assert delivered.channel(Channel.MEMORY_TOOL_RETRIEVAL).gateway_phrases == ("NOTE: tabs",)
        assert delivered.channel(Channel.PROMPT_TIME_RETRIEVAL).gateway_phrases == ("CONTEXT-UserPromptSubmit-",)
        assert delivered.foreign_channels == () and graded.attachment_failures == () and graded.hook_errors == ()

    def test_credential_patterns_catch_the_provider_s_keys_not_the_stand_in(
        self, harness: Harness, samples: Samples
    ) -> None:
        patterns = [pattern.compiled() for pattern in harness.credential_patterns]
        assert any(pattern.search(samples.credential) for pattern in patterns)
        assert not any(pattern.search(harness.agent_key.encode()) for pattern in patterns)


def test_an_unknown_harness_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ContractError, match=r"unknown harness 'gemini'; known harnesses: claude-code"):
        harness_named("gemini")
