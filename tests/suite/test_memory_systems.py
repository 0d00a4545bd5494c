"""Memory systems are declarations: the contract refuses a declaration that could not mean what it says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from bench.agent.attachment import control_attachment, return_writes, treatment_attachment
from bench.agent.harness_files import container_path
from bench.errors import ContractError
from bench.harness import harness_named
from bench.harness.claude_code import cli, config
from bench.provision import PairVerdict, ProbeKind, ProbeOutcome, SnapshotReceipt
from bench.provision.code import resolve_provisioner
from bench.provision.messages import RestoreLocations, RestoreResponse
from bench.sandbox.layout import BASE_ENV
from bench.suite.memory_system import MemorySystem
from bench.suite.suite import Suite

CLAUDE = harness_named("claude-code")
USER_MEMORY_PATH = container_path(cli.USER_MEMORY_PATH)
SETTINGS_PATH = container_path(config.SETTINGS_PATH)
MCP_CONFIG_PATH = container_path(config.MCP_CONFIG_PATH)
USER_DIRS = config.USER_DIRS
CLAUDE_DIR = container_path(cli.CLAUDE_DIR)
SERVER = {"memory": {"command": "mcp-server-memory", "env": {"MEMORY_FILE_PATH": "/opt/kg/memory.jsonl"}}}


def system(**changes: Any) -> dict[str, Any]:
    declaration: dict[str, Any] = {
        "name": "kg",
        "version": "1.0",
        "provisioner": ["memory/provision"],
        "attachment": {
            "mcp_servers": SERVER,
            "mounts": [{"location": "graph", "target": "/opt/kg", "writable": True}],
            "image": {"debian": ["nodejs"], "npm": ["@modelcontextprotocol/server-memory@2026.8.31"]},
        },
    }
    declaration.update(changes)
    return declaration


def test_the_example_declares_its_systems_with_their_attachments(suite: Suite) -> None:
    reference, server, keeper, notes = suite.manifest.memory_systems
    assert (reference.condition, server.condition) == ("reference@1", "server-memory@2026.8.31")
    # The static baseline: the notes written down, as a file the harness loads by itself; nothing else attached.
    assert notes.condition == "static-notes@1" and suite.manifest.baseline == "static-notes"
    assert notes.attachment.instructions == "notes" and not notes.attachment.mounts  # where the harness reads it
    assert [(m.location, m.target, m.writable) for m in notes.placed(str(USER_MEMORY_PATH)).attachment.mounts] == [
        ("notes", str(USER_MEMORY_PATH), False)
    ]
    assert notes.attachment.settings is None and not notes.attachment.mcp_servers and notes.attachment.image is None
    assert reference.tool_servers == () and server.tool_servers == ("memory",)
    assert server.attachment.image is not None and "nodejs" in server.attachment.image.debian
    assert [m.writable for m in server.attachment.mounts] == [True]
    # mcp-memory-keeper: its own Node (>= 20) and its native better-sqlite3 built in the layer, its data directory
    # (the server's DATA_DIR) mounted writable; no git identity, since it keys nothing by the repository.
    assert keeper.condition == "memory-keeper@0.14.1" and keeper.tool_servers == ("keeper",)
    layer = keeper.attachment.image
    assert layer is not None and (layer.node, layer.npm, layer.install_scripts) == (
        "20.20.2",
        ("mcp-memory-keeper@0.14.1",),
        True,
    )
    (mount,) = keeper.attachment.mounts
    assert mount.writable and keeper.attachment.mcp_servers["keeper"].env == {"DATA_DIR": mount.target}
    assert suite.manifest.project.identity is None


@pytest.mark.parametrize(
    ("declaration", "message"),
    [
        (system(name="control"), "names the arm without memory"),
        (system(attachment={}), "adds nothing"),
        (system(attachment={"image": {"npm": ["left-pad@1.3.0"]}}), "need the Debian package 'nodejs'"),
        (system(attachment={"image": {"debian": ["nodejs"], "npm": ["left-pad@^1.3.0"]}}), "string_pattern_mismatch"),
        (system(attachment={"image": {"debian": ["python3"], "pip": ["six==1.16.0"]}}), "'python3-pip'"),
        (system(attachment={"mounts": [{"location": "a", "target": "/opt/x/../etc"}]}), "'..' component"),
        (
            system(attachment={"mounts": [{"location": "a", "target": "/o"}, {"location": "b", "target": "/o"}]}),
            "share",
        ),
        (system(provisioner=[]), "too_short"),
        (system(attachment={"image": {"debian": ["nodejs"], "node": "20.20.2"}}), "would both be node"),
        (system(attachment={"image": {"node": "20"}}), "string_pattern_mismatch"),  # a major alone moves
        (
            system(attachment={"image": {"debian": ["nodejs"], "npm": ["a@1.0.0"], "install_scripts": True}}),
            "name both",
        ),
        (
            system(attachment={"mcp_servers": {"m": {"command": "x", "env": {"ANTHROPIC_BASE_URL": "http://a"}}}}),
            "no model provider's variables",
        ),
    ],
)
def test_a_declaration_that_cannot_mean_what_it_says_is_refused(declaration: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        MemorySystem.model_validate_json(json.dumps(declaration))
    assert message in str(refused.value) or message in json.dumps(refused.value.errors(), default=str)


def test_the_provisioner_is_found_on_path_or_under_the_suite_and_nowhere_else(tmp_path: Path) -> None:
    declared = _declared(system())
    with pytest.raises(ContractError, match="not an executable file"):
        resolve_provisioner(declared, tmp_path)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "provision").write_text("#!/bin/sh\n")
    with pytest.raises(ContractError, match="chmod"):
        resolve_provisioner(declared, tmp_path)
    (tmp_path / "memory" / "provision").chmod(0o755)
    assert resolve_provisioner(declared, tmp_path) == (str(tmp_path / "memory" / "provision"),)
    escaping = _declared(system(provisioner=["../elsewhere/provision"]))
    with pytest.raises(ContractError, match="inside the suite directory"):
        resolve_provisioner(escaping, tmp_path)
    missing = _declared(system(provisioner=["no-such-provisioner-anywhere", "--flag"]))
    with pytest.raises(ContractError, match="not on PATH"):
        resolve_provisioner(missing, tmp_path)
    on_path = _declared(system(provisioner=["python3", "-m", "x"]))
    assert resolve_provisioner(on_path, tmp_path)[1:] == ("-m", "x")


def _declared(declaration: dict[str, Any]) -> MemorySystem:
    return MemorySystem.model_validate_json(json.dumps(declaration))


def _restored(paths: dict[str, str] | None) -> RestoreResponse:
    locations = RestoreLocations(paths=paths) if paths else None
    return RestoreResponse(project="p1", queue_before_count=0, restore_seconds=0.1, locations=locations)


def test_the_attachment_mounts_what_restore_reported_and_writes_the_declared_configuration(tmp_path: Path) -> None:
    graph = tmp_path / "graph"
    graph.mkdir(mode=0o700)
    (graph / "memory.jsonl").write_text("{}")
    staging = tmp_path / "staging"
    staging.mkdir()
    declared = _declared(system(attachment={**system()["attachment"], "settings": {"hooks": {}}}))
    attachment = treatment_attachment(CLAUDE, declared, _restored({"graph": str(graph)}), staging, "sha256:" + "a" * 64)
    by_target = {mount.target: mount for mount in attachment.mounts}
    user = {str(SETTINGS_PATH), str(MCP_CONFIG_PATH), str(USER_MEMORY_PATH), *(str(CLAUDE_DIR / d) for d in USER_DIRS)}
    assert set(by_target) == {*user, "/opt/kg"}
    staged = Path(by_target["/opt/kg"].bound)  # a copy named in hex: the provisioner's path names it
    assert staged != graph and staged.parent == staging and re.fullmatch(r"[0-9a-f]{16}", staged.name)
    assert by_target["/opt/kg"].source == f"restore:{declared.name}/graph"  # what a record shows
    assert (staged / "memory.jsonl").read_text() == "{}" and not by_target["/opt/kg"].read_only
    assert all(by_target[target].read_only for target in user)
    assert all(by_target[target].source.startswith("runner:") for target in user)  # no staging path recorded
    (tmp_path / "other").mkdir()
    control = control_attachment(CLAUDE, tmp_path / "other")  # the same user-level files, none of them the agent's
    assert {mount.target for mount in control.mounts} == user and all(m.read_only for m in control.mounts)
    shown = {m.target: Path(m.bound).read_text() for m in control.mounts if Path(m.bound).is_file()}
    assert json.loads(shown[str(SETTINGS_PATH)]) == {"hooks": {}} and shown[str(USER_MEMORY_PATH)] == ""
    assert json.loads(shown[str(MCP_CONFIG_PATH)]) == {"mcpServers": {}}
    config = json.loads(Path(by_target[str(MCP_CONFIG_PATH)].bound).read_text())
    sealed = ["-i", *(f"{k}={v}" for k, v in sorted({**BASE_ENV, **SERVER["memory"]["env"]}.items()))]
    started = {"type": "stdio", "command": "env", "args": [*sealed, "mcp-server-memory"], "env": {}}
    assert config == {"mcpServers": {"memory": started}}  # only the base environment and what is declared
    assert staged.stat().st_mode & 0o777 == 0o777 and (staged / "memory.jsonl").stat().st_mode & 0o777 == 0o666
    (staged / "memory.jsonl").write_text('{"planted": true}')  # what the arm left goes back where restore put it
    return_writes(declared, _restored({"graph": str(graph)}), attachment)
    assert (graph / "memory.jsonl").read_text() == '{"planted": true}'
    assert attachment.image_id == "sha256:" + "a" * 64
    with pytest.raises(ContractError, match="restore reported \\['other'\\]"):
        treatment_attachment(CLAUDE, declared, _restored({"other": str(graph)}), staging, None)
    with pytest.raises(ContractError, match="no locations"):
        treatment_attachment(CLAUDE, declared, _restored(None), staging, None)


def test_the_static_notes_hold_every_evidence_document_verbatim_and_answer_the_probes_honestly(
    suite: Suite, static_notes: tuple[str, SnapshotReceipt, list[Path]]
) -> None:
    notes, receipt, seen = static_notes
    evidence = suite.fixture_root / suite.fixture.evidence_corpus.path
    for document in sorted(evidence.rglob("*.md")):
        assert document.read_text(encoding="utf-8").strip() in notes, document  # the same facts, verbatim
    assert all(phrase in notes for phrase in suite.fixture.memory_phrases)
    for naming in ("stele", "bench", suite.fixture.fixture_id, "r1.a1", "baseline", "control", "experiment"):
        assert naming not in notes.lower(), naming  # the file is what the agent reads: it names no run
    assert receipt.verdict is PairVerdict.VALID
    outcomes = {check.kind: set() for check in receipt.assessment.probes}
    for check in receipt.assessment.probes:
        outcomes[check.kind].add(check.outcome)
    assert outcomes == {
        ProbeKind.FULL_TEXT: {ProbeOutcome.PASSED},
        ProbeKind.GRAPH: {ProbeOutcome.PASSED},  # by the Anchors:/Related: lines the notes themselves carry
        ProbeKind.SEMANTIC: {ProbeOutcome.UNSUPPORTED},  # no embeddings: said so, never a lexical stand-in
    }
    assert any(path.name == "NOTES.md" for path in seen) and not any(path.exists() for path in seen)  # destroyed


def test_a_declared_node_stands_in_for_debian_s_and_an_unset_one_leaves_the_digest_as_it_was() -> None:
    """npm packages on a declared node need no Debian ``nodejs``; a layer that declares neither ``node`` nor
    ``install_scripts`` dumps (and so is named, frozen and built) exactly as before those fields existed."""
    on_node = MemorySystem.model_validate_json(
        json.dumps(system(attachment={"image": {"node": "20.20.2", "npm": ["a@1.0.0"]}}))
    )
    assert on_node.attachment.image is not None and on_node.attachment.image.node == "20.20.2"
    debian = MemorySystem.model_validate_json(
        json.dumps(system(attachment={"image": {"debian": ["nodejs"], "npm": ["a@1.0.0"]}}))
    )
    assert debian.model_dump(mode="json")["attachment"]["image"] == {
        "debian": ["nodejs"],
        "npm": ["a@1.0.0"],
        "pip": [],
    }
    scripts = MemorySystem.model_validate_json(
        json.dumps(system(attachment={"image": {"node": "20.20.2", "npm": ["a@1.0.0"], "install_scripts": True}}))
    )
    assert len({debian.digest, on_node.digest, scripts.digest}) == 3
