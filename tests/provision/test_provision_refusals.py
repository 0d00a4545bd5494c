"""Each way a provisioner or a fixture artifact can be subtly wrong is refused with its own reason."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest

from bench.contracts.strict_json import parse_json_object
from bench.errors import ContractError
from bench.provision import Fixture, Provisioner, ProvisionRefused, RefusalReason, Verb, provisioned
from bench.provision.fixture import FixtureArtifact, verify_artifact
from bench.provision.messages import RestoreRequest, RestoreResponse
from bench.provision.protocol_call import CallRecord, ProcessLimits, run_verb


def _request(root: Path, fixture: Fixture) -> RestoreRequest:
    return Provisioner(("unused",), root).restore_request(fixture, "plain", "run-1")


def _restore(fake, root: Path, fixture: Fixture, **limits: float) -> tuple[ProvisionRefused, list[CallRecord]]:
    log: list[CallRecord] = []

    async def go() -> None:
        async with provisioned(fake.provisioner(root, **limits), fixture, "plain", "run-1", log):
            pass

    with pytest.raises(ProvisionRefused) as caught:
        asyncio.run(go())
    return caught.value, log


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("two", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("array", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("garbage", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("empty", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("duplicate", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("nan", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("stderr-only", RefusalReason.NOT_ONE_JSON_OBJECT),
        ("extra", RefusalReason.UNKNOWN_FIELDS),
        ("invalid", RefusalReason.INVALID_RESPONSE),
        ("exit", RefusalReason.NONZERO_EXIT),
    ],
)
def test_bad_restore_reply_is_refused_with_its_reason(fake, tiny_fixture, mode: str, reason: RefusalReason) -> None:
    root, fixture = tiny_fixture
    refused, log = _restore(fake(restore=mode), root, fixture)
    assert refused.reason_code is reason
    assert refused.verb == "restore"
    assert log[0].verb is Verb.RESTORE and log[0].refusal is reason


def test_unknown_field_is_named(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    refused, _ = _restore(fake(restore="extra"), root, fixture)
    assert "backend" in str(refused)


def test_nonzero_exit_keeps_stderr_as_diagnostics_even_with_a_valid_reply(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    refused, log = _restore(fake(restore="exit"), root, fixture)
    assert "cannot reach the index service" in refused.diagnostics
    assert log[0].exit_code == 3


def test_timeout_kills_the_provisioner(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    refused, log = _restore(fake(restore="sleep"), root, fixture, timeout=1.0)
    assert refused.reason_code is RefusalReason.TIMEOUT  # killed at its timeout, not waited for
    assert log[0].refusal is RefusalReason.TIMEOUT


def test_stdout_past_the_byte_limit_is_refused(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    refused, log = _restore(fake(restore="flood"), root, fixture, stdout_bytes=64 << 10)
    assert refused.reason_code is RefusalReason.STDOUT_TOO_LARGE
    assert log[0].stdout_bytes <= 64 << 10


def test_chatty_stderr_is_bounded_and_never_blocks(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake(restore="chatty")
    log: list[CallRecord] = []
    limits = ProcessLimits(timeout_seconds=20, stderr_bytes=4096)
    request = f.provisioner(root).restore_request(fixture, "plain", "run-1")
    response = asyncio.run(run_verb(f.prefix, Verb.RESTORE, request, RestoreResponse, limits, log))
    assert response.project == "p1"
    assert log[0].diagnostics.endswith("[stderr truncated]")
    assert len(log[0].diagnostics) < 4096 + 100


def test_missing_executable_is_refused(tiny_fixture) -> None:
    root, fixture = tiny_fixture
    log: list[CallRecord] = []
    request = _request(root, fixture)
    with pytest.raises(ProvisionRefused) as caught:
        asyncio.run(
            run_verb(("/nonexistent/provisioner",), Verb.RESTORE, request, RestoreResponse, ProcessLimits(), log)
        )
    assert caught.value.reason_code is RefusalReason.LAUNCH_FAILED


def test_artifact_escaping_the_root_through_a_symlink_is_refused(tmp_path: Path, tiny_fixture) -> None:
    root, _ = tiny_fixture
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Not part of the fixture\n")
    (root / "elsewhere").symlink_to(outside)
    artifact = FixtureArtifact(path="elsewhere", sha256="0" * 64)
    with pytest.raises(ProvisionRefused) as caught:
        verify_artifact(root, artifact)
    assert caught.value.reason_code is RefusalReason.ARTIFACT_ESCAPES_ROOT


def test_symlink_inside_a_directory_artifact_escaping_the_root_is_refused(tmp_path: Path, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    (tmp_path / "passwd").write_text("root:x:0:0\n")
    (root / "evidence" / "leak.md").symlink_to(tmp_path / "passwd")
    with pytest.raises(ProvisionRefused) as caught:
        verify_artifact(root, fixture.evidence_corpus)
    assert caught.value.reason_code is RefusalReason.ARTIFACT_ESCAPES_ROOT


def test_changed_artifact_is_refused_before_any_process_runs(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    (root / "evidence" / "deploy.md").write_text("# Deploys\n\nDeploys happen on Fridays.\n")
    f = fake()
    with pytest.raises(ProvisionRefused) as caught:
        f.provisioner(root).restore_request(fixture, "plain", "run-1")
    assert caught.value.reason_code is RefusalReason.ARTIFACT_SHA256_MISMATCH
    assert "evidence" in str(caught.value)
    assert f.calls() == []


def test_missing_artifact_is_refused(tiny_fixture) -> None:
    root, fixture = tiny_fixture
    shutil.rmtree(root / "evidence")
    with pytest.raises(ProvisionRefused) as caught:
        verify_artifact(root, fixture.evidence_corpus)
    assert caught.value.reason_code is RefusalReason.ARTIFACT_MISSING


def test_provisioner_is_handed_resolved_checked_artifacts(fake, tiny_fixture) -> None:
    root, fixture = tiny_fixture
    f = fake()
    asyncio.run(_enter_and_leave(f, root, fixture))
    sent = f.request("restore")
    assert sent["artifacts"]["evidence_corpus"] == {
        "path": str((root / "evidence").resolve()),
        "sha256": fixture.evidence_corpus.sha256,
    }
    assert sent["probes"] == [{"kind": "full-text", "name": "tenant", "query": "tenant cache keys", "top_k": 5}]


async def _enter_and_leave(f, root: Path, fixture: Fixture) -> None:
    async with provisioned(f.provisioner(root), fixture, "plain", "run-1"):
        pass


@pytest.mark.parametrize(
    ("stdout", "problem"),
    [
        (b'{"a": 1} {"b": 2}', "holds a second JSON value"),
        (b'{"a": 1} thanks', "trailing text that is not JSON"),
        (b"[1]", "not an object"),
        (b'{"a": 1, "a": 2}', "repeats the key"),
        (b'{"a": Infinity}', "Infinity"),
        (b"\xff{}", "not UTF-8"),
        (b"  \n", "empty"),
    ],
)
def test_the_strict_reader_says_why_stdout_is_not_one_object(stdout: bytes, problem: str) -> None:
    with pytest.raises(ContractError, match=problem):
        parse_json_object(stdout, "provisioner restore stdout")


def test_the_strict_reader_allows_surrounding_whitespace() -> None:
    assert parse_json_object(b'\n {"ok": true}\n\n', "provisioner destroy stdout") == {"ok": True}


def test_provisioner_runs_without_a_shell(tmp_path: Path, tiny_fixture) -> None:
    # An argv element with shell syntax stays one literal argument.
    root, fixture = tiny_fixture
    marker = tmp_path / "pwned"
    script = tmp_path / "echo_args.py"
    script.write_text(
        "import json, sys\nsys.stdin.read()\n"
        "print(json.dumps({'project': 'p1' if sys.argv[1] == '; touch " + str(marker) + "' else 'p2', "
        "'queue_before_count': 0, 'restore_seconds': 0}))\n"
    )
    request = _request(root, fixture)
    log: list[CallRecord] = []
    prefix = (sys.executable, str(script), f"; touch {marker}")
    response = asyncio.run(run_verb(prefix, Verb.RESTORE, request, RestoreResponse, ProcessLimits(), log))
    assert response.project == "p1"
    assert not marker.exists()


def test_probe_expecting_a_document_the_corpus_lacks_is_a_contract_error(tiny_fixture) -> None:
    root, fixture = tiny_fixture
    data = fixture.model_dump(mode="json")
    data["probes"][0]["expected"] = ["cache-keys.md"]
    broken = Fixture.model_validate_json(json.dumps(data))
    with pytest.raises(ContractError, match=r"cache-keys\.md"):
        _request(root, broken)
