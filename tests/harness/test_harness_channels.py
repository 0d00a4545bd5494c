"""A suite names its harness; a memory system needing a channel that harness lacks is refused at plan time.

The bundled example suite names none (the default, Claude Code), and its documents keep their digests. A harness
without hooks is made here by taking the channel away from the real one, registered for the test's duration.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import ClassVar

import pytest

import bench.harness
from bench.agent.sealed_env import needed_channels
from bench.errors import ContractError
from bench.harness import DEFAULT_HARNESS, MemoryChannel, harness_named, require_channels
from bench.harness.claude_code import ClaudeCode
from bench.run.suite_plan import suite_plan
from bench.store import Store
from bench.suite.suite import SuiteManifest, load_suite

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "challenges" / "example"


class NoHooks(ClaudeCode):
    """The real harness with its hooks channel taken away."""

    name: ClassVar[str] = "no-hooks"
    capabilities: ClassVar[frozenset[MemoryChannel]] = frozenset(MemoryChannel) - {MemoryChannel.HOOKS}


class OwnSettings(ClaudeCode):
    """The real harness not reading the older, Claude-shaped ``settings``."""

    name: ClassVar[str] = "own-settings"
    native_settings: ClassVar[bool] = False


def test_the_example_suite_names_no_harness_and_runs_the_default() -> None:
    manifest = load_suite(EXAMPLE)
    assert manifest.harness == DEFAULT_HARNESS == "claude-code"
    assert "harness" not in manifest.model_dump(mode="json")  # a suite naming none keeps its digest
    explicit = SuiteManifest.model_validate_json(
        json.dumps({**manifest.model_dump(mode="json"), "harness": "claude-code"})
    )
    assert explicit.model_dump(mode="json") == manifest.model_dump(mode="json")


def test_a_suite_naming_an_unknown_harness_is_refused_naming_the_known_ones() -> None:
    declared = json.loads((EXAMPLE / "suite.json").read_text())
    with pytest.raises(ValueError, match=r"unknown harness 'gemini-cli'; known harnesses: claude-code"):
        SuiteManifest.model_validate_json(json.dumps({**declared, "harness": "gemini-cli"}))


def test_the_channels_each_bundled_system_needs() -> None:
    systems = {system.name: system for system in load_suite(EXAMPLE).memory_systems}
    claude = harness_named("claude-code")
    assert needed_channels(claude, systems["reference"].attachment) == {MemoryChannel.HOOKS}
    assert needed_channels(claude, systems["server-memory"].attachment) == {MemoryChannel.MCP_SERVERS}
    assert needed_channels(claude, systems["static-notes"].attachment) == {MemoryChannel.INSTRUCTIONS_FILE}
    with pytest.raises(ContractError, match=r"memory system 'reference' needs the hooks channel.*'no-hooks'"):
        require_channels(
            NoHooks(), needed_channels(NoHooks(), systems["reference"].attachment), "memory system 'reference'"
        )


def _suite_under(
    harness: type[ClaudeCode], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: bool = False
) -> Path:
    """A copy of the example suite naming ``harness``, registered for the test; with ``settings``, the reference
    system's hooks declared in the older, Claude-shaped settings form."""
    monkeypatch.setitem(bench.harness._REGISTRY, harness.name, (__name__, harness.__name__))
    suite = tmp_path / "suite"
    shutil.copytree(EXAMPLE, suite, ignore=shutil.ignore_patterns("__pycache__"))
    declared = json.loads((suite / "suite.json").read_text())
    if settings:
        attachment = declared["memory_systems"][0]["attachment"]
        command = attachment.pop("hooks")["UserPromptSubmit"][0]["command"]
        attachment["settings"] = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}}
    (suite / "suite.json").write_text(json.dumps({**declared, "harness": harness.name}))
    return suite


def test_the_plan_refuses_a_system_whose_channel_the_suite_s_harness_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite_under(NoHooks, tmp_path, monkeypatch)
    with pytest.raises(ContractError, match=r"memory system 'reference' needs the hooks channel"):
        suite_plan(tmp_path, Store(tmp_path / "store"), "suite")
    # only the system lacking the channel is named, the others being checked too
    with pytest.raises(ContractError, match=r"needs the hooks channel") as refused:
        suite_plan(tmp_path, Store(tmp_path / "store"), "suite", memory=("server-memory", "reference"))
    assert "server-memory" not in str(refused.value)


def test_the_older_settings_form_is_refused_under_a_harness_that_does_not_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _suite_under(OwnSettings, tmp_path, monkeypatch, settings=True)
    with pytest.raises(ContractError, match=r"memory system 'reference' declares `settings`.*'own-settings'"):
        suite_plan(tmp_path, Store(tmp_path / "store"), "suite")
