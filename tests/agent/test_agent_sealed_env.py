"""A memory system's tools are sealed from the model's credentials: in a real arm, the real CLI starts the system's
MCP server and runs its hook, and each reports the names of the variables it was given. The arm's own environment
holds the stand-in key and the model endpoint; neither may reach a memory tool, only what the declaration names and
the container's base environment.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from agent_scenario import Inputs, neutral_dir, reference_system, run_policy_attempt
from docker import DockerClient

from bench.agent import ArmRecord, read_exchange_log
from bench.gateway import Policy
from bench.gateway.exchange import ExchangeRecord
from bench.gateway.policy_check import check_request
from bench.harness.claude_code.config import HOOK_PASSED
from bench.sandbox.backends.docker import DockerBackend
from bench.sandbox.layout import BASE_ENV
from bench.suite.memory_system import McpServer

pytestmark = pytest.mark.slow  # real containers and the real CLI: minutes

REPO = Path(__file__).resolve().parents[2]
PROBE = "mcp__probe__search"
HOOK = (
    "python3 -c \"import json, os; print(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit', "
    "'additionalContext': 'hook sees: ' + ' '.join(sorted(os.environ))}}))\""
)
POLICY = {
    "rules": [
        {
            "name": "probe",
            "when": {"turn": 1, "offers": [PROBE]},
            "reply": [{"type": "tool_use", "name": PROBE, "input": {"query": "variables"}}],
        },
    ],
    "default": [{"type": "text", "text": "Reviewed."}],
}


@pytest.fixture(scope="module")
def exchanges(inputs: Inputs, engine: DockerClient, agent_image: str) -> tuple[ExchangeRecord, ...]:
    """Every exchange of the treatment's model."""
    system = reference_system(neutral_dir(), name="probe")
    declared = system.attachment
    assert declared.settings is not None
    hooks = dict(declared.settings["hooks"])  # type: ignore[arg-type]
    hooks["UserPromptSubmit"] = [*hooks["UserPromptSubmit"], {"hooks": [{"type": "command", "command": HOOK}]}]  # type: ignore[misc]
    server = McpServer(
        command="python3",
        args=("-c", (REPO / "tests" / "agent" / "data" / "notes_server.py").read_text(), "--variables"),
        env={"PROBE_DECLARED": "1"},
    )
    attachment = declared.model_copy(
        update={"settings": {**declared.settings, "hooks": hooks}, "mcp_servers": {"probe": server}}
    )
    system = system.model_copy(update={"attachment": attachment})
    store = inputs.store
    done = run_policy_attempt(inputs, DockerBackend(store, engine), agent_image, system, POLICY, REPO)
    treatment = store.get_document(done.treatments[system.name], ArmRecord)
    return read_exchange_log(store, treatment.exchanges)


@pytest.fixture(scope="module")
def requests(exchanges: tuple[ExchangeRecord, ...]) -> list[str]:
    """Every request the treatment's model received, as text."""
    return [json.dumps(e.request_body) for e in exchanges]


def _seen(requests: list[str], who: str) -> set[str]:
    found = [m.group(1) for text in requests for m in re.finditer(rf"{who} sees: ([A-Za-z0-9_ ]+)", text)]
    assert found, f"no request carries what the {who} saw"
    return set(found[0].split())


def test_an_mcp_server_sees_no_model_credentials(requests: list[str]) -> None:
    assert PROBE in requests[0]  # the server was started and offered its tool
    seen = _seen(requests, "server")
    assert seen == set(BASE_ENV) | {"PROBE_DECLARED"}, seen
    assert not {name for name in seen if name.startswith("ANTHROPIC_")}


def test_a_hook_sees_no_model_credentials(requests: list[str]) -> None:
    seen = _seen(requests, "hook")
    assert not {name for name in seen if name.startswith(("ANTHROPIC_", "CLAUDE_CODE_", "MCP_"))}, seen
    assert seen - {"PWD"} == set(BASE_ENV) | {HOOK_PASSED}, seen  # the hook's shell sets PWD itself


def test_policy_check_over_the_recorded_requests_fires_the_rule_the_gateway_recorded(
    exchanges: tuple[ExchangeRecord, ...],
) -> None:
    policy = Policy.model_validate_json(json.dumps(POLICY))
    checks = [check_request(policy, e.request_body, i, e.rule) for i, e in enumerate(exchanges)]  # type: ignore[arg-type]
    assert [c.fired for c in checks] == [e.rule for e in exchanges] and checks[0].fired == "probe"
    # The CLI defers MCP tools (named in a reminder, their schemas only on demand): said unchecked, never passed.
    assert not checks[0].calls[0].checked and not checks[0].refused
    assert checks[1].missed[0].reasons == ("turn 1: the request is turn 2",)
