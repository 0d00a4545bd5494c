"""The policies, the deterministic stand-in model of policy mode: valid, pinned, sure to end, and deciding only on
what the harness delivered. Driven here in process with the reference memory's own recall code; the real CLI
drives them in ``test_example_real_cli.py``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from example_suite import drive, run_script

from bench.gateway import Policy, ToolUseReply, load_policy
from bench.suite.suite import ChallengeCategory, Suite

MEMORY_CHALLENGES = ["harbor-holds", "transaction-memo", "spreadsheet-export"]
CONTROL = "rule-letter-case"
# The MCP systems' search tools, as their declared servers offer them: server-memory's ("memory") and
# mcp-memory-keeper's ("keeper").
MEMORY_SEARCHES = ("mcp__memory__search_nodes", "mcp__keeper__context_search")


def _policy(suite: Suite, challenge_id: str, workspace: str) -> Policy:
    return Policy.model_validate_json(suite.policy(challenge_id, workspace))


def _prompts(suite: Suite, challenge_id: str) -> list[str]:
    manifest = suite.challenge(challenge_id).manifest
    return [manifest.prompt, *([manifest.follow_up_prompt] if manifest.follow_up_prompt else [])]


@pytest.mark.parametrize("challenge_id", [*MEMORY_CHALLENGES, CONTROL])
def test_policy_loads_through_the_gateway_loader_at_its_pin(suite: Suite, challenge_id: str) -> None:
    loaded = suite.challenge(challenge_id)
    assert loaded.entry.policy is not None
    template = load_policy(loaded.directory / loaded.entry.policy.path, loaded.entry.policy.sha256)
    assert template.rules and _policy(suite, challenge_id, "/workspace").rules


@pytest.mark.parametrize("challenge_id", [*MEMORY_CHALLENGES, CONTROL])
def test_every_tool_call_is_tied_to_a_turn_so_a_session_always_ends(suite: Suite, challenge_id: str) -> None:
    policy = _policy(suite, challenge_id, "/workspace")
    assert all(
        rule.when.turn is not None for rule in policy.rules if any(isinstance(r, ToolUseReply) for r in rule.reply)
    )
    assert not any(isinstance(reply, ToolUseReply) for reply in policy.default)
    for rule in policy.rules:
        for reply in rule.reply:
            if isinstance(reply, ToolUseReply) and reply.name == "Bash":  # run in the workspace, as a model writes it
                assert str(reply.input["command"]).startswith("cd /workspace && "), rule.name
            elif isinstance(reply, ToolUseReply) and reply.name not in MEMORY_SEARCHES:
                assert str(reply.input["file_path"]).startswith("/workspace/"), rule.name


def test_the_control_policy_never_looks_at_memory(suite: Suite) -> None:
    assert suite.manifest.challenge(CONTROL).category is ChallengeCategory.LOW_MEMORY_CONTROL
    for rule in _policy(suite, CONTROL, "/workspace").rules:
        assert not rule.when.contains and not rule.when.lacks, rule.name


@pytest.mark.parametrize("with_memory", [True, False], ids=["memory", "none"])
@pytest.mark.parametrize("challenge_id", [*MEMORY_CHALLENGES, CONTROL])
def test_driven_policy_passes_exactly_when_memory_should_decide(
    suite: Suite,
    fresh_workspace: Callable[[str], Path],
    memory_state: Path,
    challenge_id: str,
    with_memory: bool,
) -> None:
    workspace = fresh_workspace("workspace")
    policy = _policy(suite, challenge_id, str(workspace))
    rules = drive(policy, workspace, _prompts(suite, challenge_id), memory_state if with_memory else None)
    assert rules[-1] == "default" or rules[-1] == "answer-written", rules
    loaded = suite.challenge(challenge_id)
    verdict = run_script(loaded.directory / loaded.manifest.verifier.asset.path, workspace)
    expected_pass = with_memory or challenge_id == CONTROL
    assert (verdict.returncode == 0) is expected_pass, (rules, verdict.stdout)


@pytest.mark.parametrize("challenge_id", [*MEMORY_CHALLENGES, CONTROL])
def test_the_static_notes_decide_like_the_delivered_memory_through_the_same_rules(
    suite: Suite,
    fresh_workspace: Callable[[str], Path],
    memory_state: Path,
    static_notes: tuple[str, object, object],
    challenge_id: str,
) -> None:
    """The notes file, where the CLI loads a user-level CLAUDE.md, fires the rules keyed on the memory's contents:
    the same path as the reference memory's hooks, so the baseline passes where memory should decide."""
    prompts = _prompts(suite, challenge_id)
    runs = {}
    for name, state, notes in (("notes", None, static_notes[0]), ("hooks", memory_state, None)):
        workspace = fresh_workspace(name)
        runs[name] = drive(_policy(suite, challenge_id, str(workspace)), workspace, prompts, state, notes)
        loaded = suite.challenge(challenge_id)
        verdict = run_script(loaded.directory / loaded.manifest.verifier.asset.path, workspace)
        assert verdict.returncode == 0, (name, runs[name], verdict.stdout)
    assert runs["notes"] == runs["hooks"]


def test_the_control_runs_the_same_rules_in_both_arms(
    suite: Suite, fresh_workspace: Callable[[str], Path], memory_state: Path
) -> None:
    runs = []
    for name, state in (("with", memory_state), ("without", None)):
        workspace = fresh_workspace(name)
        runs.append(drive(_policy(suite, CONTROL, str(workspace)), workspace, _prompts(suite, CONTROL), state))
    assert runs[0] == runs[1] == ["read-rules", "fold-case", "run-tests", "default"]


@pytest.mark.parametrize("challenge_id", [*MEMORY_CHALLENGES, CONTROL])
def test_the_memory_search_is_called_only_where_the_request_offers_it(suite: Suite, challenge_id: str) -> None:
    """Every rule calling the search tool conditions on the request offering it, on the first turn only; the rest
    of each path is the same rules, so a fact found only decides what follows when it came back in the result."""
    policy = _policy(suite, challenge_id, "/workspace")
    searching = {}
    for rule in policy.rules:
        called = [b.name for b in rule.reply if isinstance(b, ToolUseReply) and b.name in MEMORY_SEARCHES]
        if called:
            searching[rule.name] = called
            assert rule.when.offers == tuple(called) and rule.when.turn == 1, rule.name
    assert sorted(name for called in searching.values() for name in called) == sorted(MEMORY_SEARCHES)
    assert all(not r.when.offers for r in policy.rules if r.name not in searching)
