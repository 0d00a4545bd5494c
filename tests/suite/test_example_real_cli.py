"""The example suite on the real Claude Code CLI, on this host, against the policy-mode gateway on loopback.

Each challenge runs in both arms from the same redacted tree with the same policy; the memory arm adds only the
reference memory's hooks over the fixture's state. So every difference in what the gateway answered, in what
grading finds delivered and in the verifier's verdict was caused by what the harness delivered. Containers,
images and the full pipeline are the runner's job; this checks the suite's content end to end without them.
Never skipped: a missing CLI fails with the install command.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest
from example_suite import run_script

from bench.gateway import ArmKey, DirectoryRecorder, ExchangeRecord, Gateway, GatewayConfig, Mode, PolicyPin
from bench.grading import Channel, Grade, OutcomeGrade, RunnerRecord, grade
from bench.harness.claude_code.session_log import parse_claude_session
from bench.memory import hook_program, hook_settings
from bench.suite.suite import Suite
from tests.grading.claude_host import Home, make_dir, require_claude, run_claude

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

API_KEY = "sk-local-0000"
OWN_PHRASE = {
    "harbor-holds": "holds are not money that moved",
    "transaction-memo": "register an upgrade step",
    "spreadsheet-export": "semicolons between fields and a decimal comma",
}
CONTROL = "rule-letter-case"


@dataclass(frozen=True)
class ArmRun:
    rules: list[str]  # the policy rule that answered each model request
    passed: bool
    grade: Grade


def _gateway_config(policy: bytes, directory: Path) -> GatewayConfig:
    (directory / "policy.json").write_bytes(policy)
    key = hashlib.sha256(API_KEY.encode()).hexdigest()
    return GatewayConfig(
        mode=Mode.POLICY,
        arms=(ArmKey(label="arm", key_sha256=key),),
        policy=PolicyPin(path="policy.json", sha256=hashlib.sha256(policy).hexdigest()),
    )


def _hooks(state: Path, directory: Path) -> dict[str, object]:
    """The reference memory's hooks, installed outside the workspace over a read-only copy of the state."""
    (directory / "hook.py").write_bytes(hook_program())
    shutil.copy(state, directory / "state.sqlite")
    (directory / "state.sqlite").chmod(0o444)
    settings = hook_settings(PurePosixPath(directory / "hook.py"), PurePosixPath(directory / "state.sqlite"))
    return settings["hooks"]


def _run_arm(suite: Suite, tree: Path, challenge_id: str, state: Path | None) -> ArmRun:
    loaded = suite.challenge(challenge_id)
    dirs = {name: make_dir(f"{name}-") for name in ("ws", "mem", "gw")}
    home = Home.create(_hooks(state, dirs["mem"]) if state else None)
    try:
        shutil.copytree(tree, dirs["ws"], dirs_exist_ok=True)
        config = _gateway_config(suite.policy(challenge_id, str(dirs["ws"])), dirs["gw"])
        prompts = [loaded.manifest.prompt, *filter(None, [loaded.manifest.follow_up_prompt])]
        streams, session = [], None
        with Gateway(config, DirectoryRecorder(dirs["gw"] / "log"), policy_root=dirs["gw"]) as gateway:
            for prompt in prompts:
                run = run_claude(dirs["ws"], home, gateway.url, API_KEY, prompt, resume=session)
                streams.append(run.stream)
                session = run.session_id
        assert session is not None
        lines = (dirs["gw"] / "log" / "exchanges.jsonl").read_bytes().splitlines()
        exchanges = [ExchangeRecord.model_validate_json(line) for line in lines]
        passed = run_script(loaded.directory / loaded.manifest.verifier.asset.path, dirs["ws"]).returncode == 0
        transcript = parse_claude_session(home.session_file(session).read_bytes(), streams)
        runner = RunnerRecord(prompts=tuple(prompts), cwd=str(dirs["ws"]))
        outcome = OutcomeGrade(verifier_passed=passed, audit_clean=True)
        graded = grade(transcript, exchanges, suite.memory(challenge_id), outcome, runner)
        rules = [e.rule for e in exchanges if e.rule is not None]
        return ArmRun(rules, passed, graded)
    finally:
        for path in (*dirs.values(), home.path):
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def runs(
    suite: Suite, packaged: tuple[list[str], Path], memory_state: Path
) -> Iterator[dict[tuple[str, bool], ArmRun]]:
    require_claude()
    yield {
        (loaded.manifest.challenge_id, with_memory): _run_arm(
            suite, packaged[1], loaded.manifest.challenge_id, memory_state if with_memory else None
        )
        for loaded in suite.challenges
        for with_memory in (True, False)
    }


@pytest.mark.parametrize("challenge_id", sorted(OWN_PHRASE))
def test_memory_decides_a_memory_challenge_through_both_channels(runs, challenge_id: str) -> None:  # type: ignore[no-untyped-def]
    memory, plain = runs[(challenge_id, True)], runs[(challenge_id, False)]
    assert memory.passed and not plain.passed, (memory.rules, plain.rules)
    delivered = memory.grade.delivered
    for channel in (Channel.PROMPT_TIME_RETRIEVAL, Channel.ANCHOR_TRIGGERED_RECALL):
        assert OWN_PHRASE[challenge_id] in delivered.channel(channel).phrases, (channel, delivered)
    assert delivered.gateway_agrees and memory.grade.used.used, memory.grade.used
    assert delivered.tampered == () and plain.grade.delivered.tampered == ()
    assert not plain.grade.delivered.delivered and plain.grade.delivered.received_by_model == ()
    assert memory.rules != plain.rules


def test_the_control_passes_alike_in_both_arms(runs) -> None:  # type: ignore[no-untyped-def]
    memory, plain = runs[(CONTROL, True)], runs[(CONTROL, False)]
    assert memory.passed and plain.passed
    assert memory.rules == plain.rules == ["read-rules", "fold-case", "run-tests", "default"]


def test_the_real_cli_takes_the_same_path_as_the_in_process_driver(runs) -> None:  # type: ignore[no-untyped-def]
    expected = {
        ("harbor-holds", True): ["read-importer", "answer-from-notes", "answer-written"],
        ("harbor-holds", False): ["read-importer", "read-importer-tests", "answer-from-code", "answer-written"],
        ("transaction-memo", True): ["read-ledger", "read-upgrade-per-notes", "edit-both-per-notes", "default"],
        ("transaction-memo", False): ["read-ledger", "edit-ledger-only", "default"],
        ("spreadsheet-export", True): [
            "read-cli",
            "write-export-per-notes",
            "default",
            "reread-export",
            "fix-export-per-notes",
            "default",
        ],
        ("spreadsheet-export", False): [
            "read-cli",
            "write-export",
            "default",
            "reread-export",
            "fix-export-guess",
            "default",
        ],
    }
    assert {key: runs[key].rules for key in expected} == expected
