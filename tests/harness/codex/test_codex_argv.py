"""Codex's command lines for a fresh and a resumed step, and the thread id read from its recorded output."""

from __future__ import annotations

from pathlib import Path

from bench.harness import harness_named
from bench.harness.codex.argv import AGENT_KEY, KEY_VARIABLE, codex_argv, thread_id_of

DATA = Path(__file__).parent / "data"
FLAGS = (
    "--json",
    "--skip-git-repo-check",
    "--strict-config",
    "--dangerously-bypass-approvals-and-sandbox",
    "--dangerously-bypass-hook-trust",
)


def test_a_fresh_step_is_exec_with_the_prompt_last() -> None:
    assert codex_argv("fix it", "gpt-5.5") == ("codex", "exec", *FLAGS, "-m", "gpt-5.5", "--", "fix it")


def test_a_resumed_step_names_the_thread_before_the_prompt() -> None:
    argv = codex_argv("-again", "gpt-5.5", resume="01a2")
    assert argv == ("codex", "exec", "resume", *FLAGS, "-m", "gpt-5.5", "--", "01a2", "-again")
    assert "-C" not in argv and "-s" not in argv  # exec resume has neither: the step runs from the workspace


def test_the_thread_id_is_read_from_the_recorded_output() -> None:
    assert thread_id_of((DATA / "exec.jsonl").read_bytes()) == "01a246ae-84b2-75c0-870f-27741d120bc9"
    assert thread_id_of(b'Reading additional input from stdin...\n{"type":"turn.failed"}\n') is None


def test_the_key_variable_set_to_a_real_key_is_a_credential_and_the_stand_in_is_not() -> None:
    codex = harness_named("codex")
    patterns = [pattern.compiled() for pattern in codex.credential_patterns]
    leaked = f"{KEY_VARIABLE}=sk-proj-{'x' * 30}".encode()
    assert any(pattern.search(leaked) for pattern in patterns)
    assert not any(pattern.search(f"{KEY_VARIABLE}={AGENT_KEY}".encode()) for pattern in patterns)
    assert codex.environment("http://api:8080") == {KEY_VARIABLE: AGENT_KEY}
