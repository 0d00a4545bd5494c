"""Publication fails closed: only a bundle is published, and every bundle file is read strictly (issue 17, 1-2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.analysis import AdmissionDecision
from bench.cli import main
from bench.cli.publish_cmd import verify_bundle as verify
from bench.contracts import Digest, canonical_bytes
from bench.errors import ContractError
from bench.publish import BundleError, PublicationRefused, check_bundle
from bench.publish.manifest import MANIFEST_NAME
from bench.publish.verification import Trust
from bench.stages.publish import publish_directory as publish
from tests.publish.bundle_factory import write_bundle


@pytest.mark.parametrize("stray", [None, "notes.txt", "loose/thing.json"])
def test_publish_refuses_a_directory_that_is_not_a_bundle_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], stray: str | None
) -> None:
    root = tmp_path / "not-a-bundle"
    root.mkdir()
    if stray is not None:
        (root / stray).parent.mkdir(parents=True, exist_ok=True)
        (root / stray).write_text("a stray file\n")
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    assert main(["--json", "publish", str(root)]) == 6
    refusal = json.loads(capsys.readouterr().out)["error"]
    assert refusal["code"] == "bundle" and (stray or "records/") in refusal["message"]
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before  # nothing written


def test_a_bundle_with_a_stray_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    (root / "scratch.txt").write_text("left over\n")
    with pytest.raises(BundleError, match=r"scratch\.txt"):
        publish(root)
    assert not (root / MANIFEST_NAME).exists() and not (root / "report").exists()


def test_verify_refuses_a_manifest_of_no_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # What today's `publish` wrote into an empty directory: a manifest over a summary and a report of nothing.
    root = tmp_path / "empty"
    root.mkdir()
    bundle = tmp_path / "bundle"
    write_bundle(bundle)
    publish(bundle)
    manifest = json.loads((bundle / MANIFEST_NAME).read_bytes())
    for derived in ("receipts/statistics-summary.json", "report/index.html"):
        (root / derived).parent.mkdir(parents=True, exist_ok=True)
        (root / derived).write_bytes((bundle / derived).read_bytes())
    manifest["files"] = [f for f in manifest["files"] if not f["path"].startswith(("records/", "admissions/"))]
    manifest["files"] = [f for f in manifest["files"] if not f["path"].startswith("manifests/")]
    (root / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match="holds no records/"):
        verify(root / MANIFEST_NAME, Trust(unsigned=True))
    assert main(["verify", "--unsigned", str(root / MANIFEST_NAME)]) == 6
    assert "verified" not in capsys.readouterr().out
    with pytest.raises(BundleError):
        check_bundle(root / MANIFEST_NAME)


def _with_repeated_key(record: bytes, key: str, fake: object) -> bytes:
    """The record with ``key`` given twice: a fake value first, the real one last (what json.loads keeps)."""
    head = json.dumps(key).encode() + b":"
    assert record.count(head) == 1
    return record.replace(head, head + json.dumps(fake).encode() + b"," + head, 1)


def test_a_bundle_record_with_a_repeated_key_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    records = write_bundle(root)
    digest = next(d for d, r in records.items() if r.completion.value == "completed")
    original = (root / "records" / f"{digest.hex}.json").read_bytes()
    forged = _with_repeated_key(original, "completion", "aborted")
    assert json.loads(forged) == json.loads(original)  # a last-key-wins reader sees nothing wrong
    new = Digest.of(forged)
    (root / "records" / f"{digest.hex}.json").unlink()
    (root / "records" / f"{new.hex}.json").write_bytes(forged)
    old_decision = root / "admissions" / f"{digest.hex}.json"
    decision = AdmissionDecision.model_validate_json(old_decision.read_bytes()).model_copy(update={"record": new})
    old_decision.unlink()
    (root / "admissions" / f"{new.hex}.json").write_bytes(canonical_bytes(decision))
    with pytest.raises(PublicationRefused, match="repeats the key 'completion'") as caught:
        publish(root)
    assert caught.value.findings[0].path == f"records/{new.hex}.json"
    assert not (root / MANIFEST_NAME).exists()


def test_a_manifest_with_a_repeated_digest_key_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    publish(root)
    text = (root / MANIFEST_NAME).read_bytes()
    first = json.loads(text)["files"][0]["digest"].encode()
    fake = b'"blake3:' + b"0" * 64 + b':1"'
    forged = text.replace(b'"digest":"' + first, b'"digest":' + fake + b',"digest":"' + first, 1)
    (root / MANIFEST_NAME).write_bytes(forged)
    with pytest.raises(ContractError, match="repeats the key 'digest'"):
        verify(root / MANIFEST_NAME, Trust(unsigned=True))
