"""A memory system reached through its MCP tools: the unmodified npm server in its own image layer, launched by the
real CLI from the user-level MCP configuration, its state restored by its provisioner and mounted writable.

The server is wrapped to start two seconds late, slower than the CLI: the tools must still be offered on the first
turn (the CLI waits for its MCP servers), or a policy that searches when offered would take another path at random.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_scenario import RECALL_PHRASE, Inputs, memory_declaration, run_policy_attempt
from docker import DockerClient

from bench.agent import ArmRecord, PairRecord, read_exchange_log
from bench.agent.replay_tools import ToolReplay
from bench.gateway.dialects.anthropic import offered_tools
from bench.grading import Channel, MemoryDeclaration, grade_delivery, harness_conversation
from bench.harness.claude_code.session_log import parse_claude_session
from bench.images import build_layer
from bench.provision import PairVerdict, SnapshotReceipt
from bench.sandbox.backends.docker import DockerBackend
from bench.suite.memory_system import CONTROL, MemorySystem
from bench.suite.suite import load_suite

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "challenges" / "example"
SEARCH = "mcp__memory__search_nodes"
POLICY = {
    "rules": [
        {
            "name": "search",
            "when": {"turn": 1, "offers": [SEARCH]},
            "reply": [{"type": "tool_use", "name": SEARCH, "input": {"query": "ledger"}}],
        },
        {"name": "plain", "when": {"turn": 1}, "reply": [{"type": "text", "text": "Nothing to look up."}]},
    ],
    "default": [{"type": "text", "text": "Reviewed."}],
}


def _slow_server_memory() -> MemorySystem:
    """The example's server-memory declaration, its server started two seconds late."""
    declared = load_suite(EXAMPLE).memory_system("server-memory")
    server = declared.attachment.mcp_servers["memory"]
    slow = server.model_copy(update={"command": "sh", "args": ("-c", f"sleep 2; exec {server.command}")})
    attachment = declared.attachment.model_copy(update={"mcp_servers": {"memory": slow}})
    return declared.model_copy(update={"attachment": attachment})


@pytest.fixture(scope="module")
def attempt(inputs: Inputs, engine: DockerClient, agent_image: str) -> dict[str, object]:
    system = _slow_server_memory()
    assert system.attachment.image is not None
    layer = build_layer(system.attachment.image, DockerBackend(client=engine)).record.image_id
    store = inputs.store
    done = run_policy_attempt(
        inputs, DockerBackend(store, engine), agent_image, system, POLICY, EXAMPLE, {system.name: layer}
    )  # the treatment runs first
    return {
        "treatment": store.get_document(done.treatments[system.name], ArmRecord),
        "control": store.get_document(done.control, ArmRecord),
        "pair": store.get_document(done.pairs[system.name], PairRecord),
        "memory": memory_declaration(store, inputs.fixture),
    }


def test_the_first_request_offers_the_slow_servers_tools_and_its_answer_is_delivered(
    inputs: Inputs, attempt: dict[str, object]
) -> None:
    treatment, memory = attempt["treatment"], attempt["memory"]
    assert isinstance(treatment, ArmRecord) and isinstance(memory, MemoryDeclaration)
    exchanges = read_exchange_log(inputs.store, treatment.exchanges)
    assert SEARCH in offered_tools(exchanges[0].request_body) and exchanges[0].rule == "search"  # type: ignore[arg-type]
    assert treatment.session is not None
    transcript = parse_claude_session(inputs.store.get_bytes(treatment.session))
    conversation = harness_conversation(exchanges, treatment.runner())
    delivered = grade_delivery(transcript, conversation, memory.model_copy(update={"tool_servers": ("memory",)}))
    assert delivered.channel(Channel.MEMORY_TOOL_RETRIEVAL).phrases == (RECALL_PHRASE,) and delivered.gateway_agrees
    assert delivered.tampered == () and delivered.foreign_channels == ()
    unclaimed = grade_delivery(transcript, conversation, memory)  # the same results, the server not declared
    assert not unclaimed.delivered and unclaimed.foreign_channels


def test_the_control_is_offered_no_tool_and_the_snapshot_reads_the_servers_graph(
    inputs: Inputs, attempt: dict[str, object]
) -> None:
    control, pair, treatment = attempt["control"], attempt["pair"], attempt["treatment"]
    assert isinstance(control, ArmRecord) and isinstance(pair, PairRecord) and isinstance(treatment, ArmRecord)
    first = read_exchange_log(inputs.store, control.exchanges)[0]
    assert SEARCH not in offered_tools(first.request_body) and first.rule == "plain"  # type: ignore[arg-type]
    assert pair.order == ("server-memory", CONTROL) and pair.verdict is PairVerdict.VALID
    assert treatment.snapshot is not None
    receipt = inputs.store.get_document(treatment.snapshot, SnapshotReceipt)
    assert receipt.snapshot is not None and receipt.snapshot.state.items > 0
    assert any("entities" in call.diagnostics for call in receipt.calls)


def test_the_memory_tool_results_replay_from_the_state_restore_left(inputs: Inputs, attempt: dict[str, object]) -> None:
    pair, treatment = attempt["pair"], attempt["treatment"]
    assert isinstance(pair, PairRecord) and isinstance(treatment, ArmRecord)
    assert pair.replay is not None and treatment.state_before and treatment.state_after
    replay = inputs.store.get_document(pair.replay, ToolReplay)
    assert replay.findings == () and [call.tool for call in replay.calls] == [SEARCH]
    assert all(call.matches and call.replayed for call in replay.calls), replay.output
    assert pair.agent_writes == () and pair.state_findings == ()
