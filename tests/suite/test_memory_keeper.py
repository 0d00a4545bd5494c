"""mcp-memory-keeper, the bundled system that needs a declared Node, a native module built in its layer and a
provisioner that seeds it through its own tools: restored through the real adapter with its real layer image, its
unmodified server answering each policy's search with the facts that decide the challenge."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bench.contracts import ImageId
from bench.images.build import build_layer
from bench.provision import PairVerdict, ProbeKind, ProbeOutcome, Provisioner, SnapshotReceipt, provisioned
from bench.provision.code import resolve_provisioner
from bench.provision.distractors import generated_pool
from bench.provision.fixture import verify_artifact
from bench.provision.messages import ArtifactRef
from bench.provision.pool import seed_corpus
from bench.suite.memory_system import MemorySystem
from bench.suite.suite import Suite

pytestmark = pytest.mark.slow  # builds (or finds) the layer and runs its server in containers

SYSTEM = "memory-keeper"
SEARCH = "context_search"
TOOL = f"mcp__keeper__{SEARCH}"  # as the declared server "keeper" offers it


def _declared(suite: Suite) -> MemorySystem:
    return suite.manifest.memory_system(SYSTEM)


@pytest.fixture(scope="module")
def image(suite: Suite) -> str:
    layer = _declared(suite).attachment.image
    assert layer is not None
    return build_layer(layer).record.image_id


@pytest.fixture(scope="module")
def corpus(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> ArtifactRef:
    """The evidence with the fixture's 500 distractors beside it, as a run hands it to restore."""
    base = tmp_path_factory.mktemp("corpus")
    distractors = suite.fixture.distractors
    assert distractors is not None
    for document in generated_pool(distractors.seed, distractors.size):
        (base / "pool" / document.path).parent.mkdir(parents=True, exist_ok=True)
        (base / "pool" / document.path).write_text(document.text, encoding="utf-8")
    return seed_corpus(verify_artifact(suite.fixture_root, suite.fixture.evidence_corpus), base / "pool", base / "in")


def _restore(suite: Suite, image: str, corpus: ArtifactRef, base: Path) -> dict[str, Any]:
    """Restored through the real adapter; the data directory copied out while live, then the project destroyed."""
    home = base / "home"
    argv = (*resolve_provisioner(_declared(suite), suite.root), "--home", str(home))
    provisioner = Provisioner(argv, suite.fixture_root, image=ImageId(image))
    seen: list[Path] = []

    async def go() -> tuple[Path, SnapshotReceipt]:
        graph_arm = suite.manifest.fixture.graph_arm
        async with provisioned(provisioner, suite.fixture, graph_arm, "r1.a1", corpus=corpus) as session:
            locations = session.restored.locations
            assert locations is not None and set(locations.paths) == {"data"}
            subprocess.run(["cp", "-a", locations.paths["data"], str(base / "data")], check=True)
            seen.extend(home.rglob("*"))
            return base / "data", await session.snapshot()

    data, receipt = asyncio.run(go())
    return {"data": data, "receipt": receipt, "seen": seen}


@pytest.fixture(scope="module")
def restored(suite: Suite, image: str, corpus: ArtifactRef, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _restore(suite, image, corpus, tmp_path_factory.mktemp("keeper"))


def _server(image: str, data: Path, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """The declared server, started as its declaration says (DATA_DIR at the mount, no network), answering each of
    ``messages`` in turn over stdio."""
    target = "/opt/keeper"
    argv = ["docker", "run", "--rm", "-i", "--network", "none", "--user", f"{os.getuid()}:{os.getgid()}"]
    argv += ["--env", f"DATA_DIR={target}", "--volume", f"{data}:{target}", "--entrypoint", "mcp-memory-keeper", image]
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None and server.stdout is not None

        def ask(number: int, message: dict[str, Any]) -> dict[str, Any]:
            server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": number, **message}) + "\n")  # type: ignore[union-attr]
            server.stdin.flush()  # type: ignore[union-attr]
            for line in server.stdout:  # type: ignore[union-attr]
                answer: dict[str, Any] = json.loads(line)
                if answer.get("id") == number:
                    return answer
            raise AssertionError(f"the server ended before answering {message}")

        ask(0, {"method": "initialize", "params": hello})
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        answers = [ask(number, message) for number, message in enumerate(messages, start=1)]
        server.stdin.close()
    return answers


def _searches(suite: Suite) -> dict[str, dict[str, Any]]:
    found = {}
    for challenge in suite.manifest.challenges:
        policy = json.loads(suite.policy(challenge.directory, "/workspace"))
        for rule in policy["rules"]:
            for block in rule["reply"]:
                if block["type"] == "tool_use" and block["name"] == TOOL:
                    found[challenge.directory] = block["input"]
    return found


def test_the_seeded_store_holds_every_document_and_answers_the_probes_honestly(
    suite: Suite, corpus: ArtifactRef, restored: dict[str, Any]
) -> None:
    receipt: SnapshotReceipt = restored["receipt"]
    assert receipt.verdict is PairVerdict.VALID
    evidence = list(Path(str(corpus.path)).rglob("*.md"))
    nodes = len(
        json.loads((suite.fixture_root / suite.fixture.graph_arm("backfilled").graph.path).read_text())["nodes"]
    )
    assert receipt.snapshot is not None and receipt.snapshot.state.items == len(evidence) + nodes
    outcomes: dict[ProbeKind, set[ProbeOutcome]] = {}
    for check in receipt.assessment.probes:
        outcomes.setdefault(check.kind, set()).add(check.outcome)
    assert outcomes == {
        ProbeKind.FULL_TEXT: {ProbeOutcome.PASSED},
        ProbeKind.GRAPH: {ProbeOutcome.PASSED},
        ProbeKind.SEMANTIC: {ProbeOutcome.UNSUPPORTED},
    }
    assert any(path.name == "context.db" for path in restored["seen"])
    assert not any(path.exists() for path in restored["seen"])  # destroyed


def test_each_policys_search_is_valid_for_the_servers_own_schema_and_delivers_what_decides_the_challenge(
    suite: Suite, image: str, restored: dict[str, Any]
) -> None:
    """The unmodified server, over the seeded store: the policy's arguments pass the tool's input schema from its
    own ``tools/list`` (the CLI defers MCP schemas, so ``policy check`` cannot), and each search's answer carries
    the memory phrase the challenge's next rule keys on; the control's finds nothing."""
    searches = _searches(suite)
    assert set(searches) == {c.directory for c in suite.manifest.challenges}
    calls = [{"method": "tools/list", "params": {}}]
    calls += [{"method": "tools/call", "params": {"name": SEARCH, "arguments": searches[c]}} for c in sorted(searches)]
    listed, *answers = _server(image, restored["data"], *calls)
    (schema,) = [tool["inputSchema"] for tool in listed["result"]["tools"] if tool["name"] == SEARCH]
    phrases = {
        "harbor-holds": "holds are not money that moved",
        "transaction-memo": "register an upgrade step",
        "spreadsheet-export": "semicolons between fields and a decimal comma",
        "rule-letter-case": "No results found",
    }
    for challenge, answer in zip(sorted(searches), answers, strict=True):
        jsonschema.validate(searches[challenge], schema)
        text = " ".join(block["text"] for block in answer["result"]["content"])
        assert not answer["result"].get("isError") and phrases[challenge] in text, (challenge, text[:300])
    assert set(phrases.values()) - {"No results found"} == set(suite.fixture.memory_phrases)


def test_restore_without_the_image_is_refused_naming_it(suite: Suite, tmp_path: Path) -> None:
    argv = (*resolve_provisioner(_declared(suite), suite.root), "--home", str(tmp_path))
    request = {"fixture": "f", "graph_arm": "g", "run_identity": "r", "artifacts": {
        "evidence_corpus": {"path": str(tmp_path), "sha256": "0" * 64},
        "graph": {"path": str(tmp_path / "g.json"), "sha256": "0" * 64}}}  # fmt: skip
    done = subprocess.run([*argv, "restore"], input=json.dumps(request), capture_output=True, text=True)
    assert done.returncode == 1 and "needs the image" in done.stderr and not list(tmp_path.iterdir())


def test_a_second_restore_of_the_same_corpus_holds_the_same_items(
    suite: Suite, image: str, corpus: ArtifactRef, restored: dict[str, Any], tmp_path: Path
) -> None:
    again: SnapshotReceipt = _restore(suite, image, corpus, tmp_path)["receipt"]
    first: SnapshotReceipt = restored["receipt"]
    assert first.snapshot is not None and again.snapshot is not None
    assert again.snapshot.state.fingerprint == first.snapshot.state.fingerprint
