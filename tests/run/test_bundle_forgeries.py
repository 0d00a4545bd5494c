"""Forgeries of the demo's published bundle that `verify` passed before issue 31, each caught now.

Every forger here recomputes MANIFEST.json and the in-toto statement, and signs the forgery again with the
publisher's own key (the publisher is the forger): so the signature holds, and what catches each forgery is what
verify checks of the bundle itself. A forger without the key is caught by the signature alone
(:func:`test_a_forger_without_the_key_is_caught_by_the_signature`), and so is a bundle checked against another
key than the one that signed it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.analysis import PairedAttempt, Preregistration
from bench.cli import main
from bench.cli.publish_cmd import verify_bundle
from bench.contracts import Digest, canonical_bytes, canonical_json
from bench.packaging.redact import RedactionReceipt
from bench.publish import PublicationLineage, Verification
from bench.publish.manifest import LINEAGE_PATH, PublishedAction
from bench.publish.signing import generate_key, public_key_path
from bench.publish.verification import Trust
from bench.sandbox.spec import SpecDiffReceipt
from bench.store.actions import ActionKey, ActionResult
from tests.run.forge import forge, reseal


def _object(root: Path, digest: Digest) -> Path:
    return root / "objects" / f"{digest.hex}.json"


def _lineage(root: Path) -> PublicationLineage:
    return PublicationLineage.model_validate_json((root / LINEAGE_PATH).read_bytes())


def _write_lineage(root: Path, actions: list[PublishedAction]) -> None:
    (root / LINEAGE_PATH).write_bytes(canonical_bytes(PublicationLineage(actions=actions)))


def _action(root: Path, stage: str) -> tuple[PublishedAction, ActionKey, ActionResult]:
    listed = next(action for action in _lineage(root).actions if action.stage == stage)
    spec = ActionKey.model_validate_json(_object(root, listed.key).read_bytes())
    return listed, spec, ActionResult.model_validate_json(_object(root, listed.result).read_bytes())


def _replace_result(root: Path, listed: PublishedAction, result: ActionResult) -> None:
    """The forged result in place of the listed one: its object, and the lineage naming it."""
    data = canonical_bytes(result)
    _object(root, listed.result).unlink()
    _object(root, Digest.of(data)).write_bytes(data)
    actions = [a if a != listed else a.model_copy(update={"result": Digest.of(data)}) for a in _lineage(root).actions]
    _write_lineage(root, actions)


def _said(verification: Verification) -> list[str]:
    return [str(difference) for difference in verification.differences]


def _caught(root: Path, trust: Trust, *phrases: str) -> list[str]:
    """Verify the forged bundle (its signature holds) and require a difference saying each phrase."""
    verification = verify_bundle(root / "MANIFEST.json", trust)
    said = _said(verification)
    assert not verification.verified and verification.signature.signer, said
    assert all(d.path != "provenance.dsse.json" for d in verification.differences), said  # signed again: it holds
    for phrase in phrases:
        assert any(phrase in line for line in said), (phrase, said)
    return said


def test_the_untouched_bundle_verifies_against_its_publishers_key(bundle: Path, trust: Trust) -> None:
    verification = verify_bundle(bundle / "MANIFEST.json", trust)
    assert verification.verified, _said(verification)
    counts = verification.counts()
    assert {"redact", "audit", "grade", "admit", "analyze"} <= set(counts["re-derived"])  # listings re-derive
    assert {"corpus", "certify", "paired-attempt", "verify"} <= set(counts["attested"])
    assert verification.cross_checked()["paired-attempt"] == counts["attested"]["paired-attempt"]


def test_an_unreferenced_object_added(bundle: Path, key: Path, trust: Trust) -> None:
    planted = canonical_json({"kind": "note", "text": "a friendlier reading of the results"})
    (bundle / "objects" / f"{Digest.of(planted).hex}.json").write_bytes(planted)
    reseal(bundle, key)
    _caught(bundle, trust, "is needed by no action")


def test_a_newer_preregistration_under_manifests(bundle: Path, key: Path, trust: Trust) -> None:
    current = sorted((bundle / "manifests").rglob("v*.json"))[0]
    frozen = Preregistration.model_validate_json(current.read_bytes())
    newer = frozen.model_copy(
        update={"version": frozen.version + 1, "supersedes": frozen.digest, "correction": "a budget we prefer now"}
    )
    (current.parent / f"v{newer.version}.json").write_bytes(canonical_bytes(newer))
    reseal(bundle, key)
    said = _caught(bundle, trust, "is an input or output of no action the lineage lists")
    assert any(line.startswith(f"manifests/{frozen.challenge}/v{newer.version}.json") for line in said)


def _swap(root: Path, folder: str) -> Path:
    """Two files of ``folder`` with each other's contents; returns the first."""
    first, second = sorted((root / folder).iterdir())[:2]
    one, other = first.read_bytes(), second.read_bytes()
    first.write_bytes(other)
    second.write_bytes(one)
    return first


@pytest.mark.parametrize(("folder", "said"), [("records", "not the record its name binds"), ("admissions", "binds")])
def test_two_records_or_two_admissions_swapped(bundle: Path, key: Path, trust: Trust, folder: str, said: str) -> None:
    first = _swap(bundle, folder)
    reseal(bundle, key)
    assert any(line.startswith(f"{folder}/{first.name}") for line in _caught(bundle, trust, said))


def test_the_corpus_and_redaction_actions_dropped_from_the_lineage(bundle: Path, key: Path, trust: Trust) -> None:
    dropped = [action for action in _lineage(bundle).actions if action.stage in ("corpus", "redact")]
    assert len(dropped) == 2
    for action in dropped:  # the forger removes their documents too, so nothing is left over
        _object(bundle, action.key).unlink()
        _object(bundle, action.result).unlink()
    _write_lineage(bundle, [action for action in _lineage(bundle).actions if action not in dropped])
    reseal(bundle, key)
    said = _caught(bundle, trust, "only an action of the run may give it")
    assert any("input source of certify" in line or "input redacted of prebuild" in line for line in said), said


def test_a_forged_redaction_receipt_with_its_action_result(bundle: Path, key: Path, trust: Trust) -> None:
    listed, _, result = _action(bundle, "redact")
    path = _object(bundle, result.outputs["receipt"])
    receipt = RedactionReceipt.model_validate_json(path.read_bytes())
    assert receipt.removed, "the demo's corpus has auto-loaded context to remove"
    forged = canonical_bytes(receipt.model_copy(update={"removed": receipt.removed[1:]}))  # one removal hidden
    path.unlink()
    _object(bundle, Digest.of(forged)).write_bytes(forged)
    outputs = {**result.outputs, "receipt": Digest.of(forged)}
    _replace_result(bundle, listed, result.model_copy(update={"outputs": outputs}))
    reseal(bundle, key)
    _caught(bundle, trust, "stage redact", "output receipt")


def test_a_forged_spec_diff_with_its_action_result(bundle: Path, key: Path, trust: Trust) -> None:
    listed, _, result = _action(bundle, "paired-attempt")
    port = next(name for name in result.outputs if name.startswith("spec_diffs/"))
    receipt = SpecDiffReceipt.model_validate_json(_object(bundle, result.outputs[port]).read_bytes())
    assert receipt.differences  # the attachment differs: the forger claims nothing did
    forged = canonical_bytes(receipt.model_copy(update={"differences": ()}))
    _object(bundle, Digest.of(forged)).write_bytes(forged)
    _replace_result(bundle, listed, result.model_copy(update={"outputs": {**result.outputs, port: Digest.of(forged)}}))
    reseal(bundle, key)
    _caught(bundle, trust, "re-derived from the arms' specs")


def test_a_forged_spec_diff_with_every_digest_made_to_agree(bundle: Path, key: Path, trust: Trust) -> None:
    _, _, result = _action(bundle, "paired-attempt")
    digest = next(d for name, d in result.outputs.items() if name.startswith("spec_diffs/"))
    path = _object(bundle, digest)
    receipt = SpecDiffReceipt.model_validate_json(path.read_bytes())
    forge(bundle, str(path.relative_to(bundle)), canonical_bytes(receipt.model_copy(update={"differences": ()})), key)
    _caught(bundle, trust, "re-derived from the arms' specs")


def test_a_record_is_bound_to_its_action_and_key(bundle: Path, key: Path, trust: Trust) -> None:
    """A record given another comparability key, every digest made to agree: paired-record re-derives the key."""
    path = sorted((bundle / "records").iterdir())[0]
    record = PairedAttempt.model_validate_json(path.read_bytes())
    other = record.model_copy(update={"key": record.key.model_copy(update={"model": "another-model"})})
    forge(bundle, str(path.relative_to(bundle)), canonical_bytes(other), key)
    _caught(bundle, trust, "stage paired-record", "output record: key.model")


def test_a_forger_without_the_key_is_caught_by_the_signature(bundle: Path, trust: Trust) -> None:
    _swap(bundle, "records")
    reseal(bundle)  # manifest and statement recomputed; the envelope still signs the old statement
    verification = verify_bundle(bundle / "MANIFEST.json", trust)
    assert any(
        d.path == "provenance.dsse.json" and "signs another statement" in d.lineage[0] for d in verification.differences
    )
    assert verification.signature.signer is None


def test_a_bundle_signed_with_one_key_fails_verify_trusting_another(
    bundle: Path, tmp_path: Path, trust: Trust, capsys: pytest.CaptureFixture[str]
) -> None:
    _, other, _ = generate_key(tmp_path / "other.key")
    manifest = str(bundle / "MANIFEST.json")
    assert main(["--json", "verify", manifest, "--trust", str(other)]) == 1
    said = json.loads(capsys.readouterr().out)
    assert not said["verified"] and said["signature"] == {"signed_by": None, "present": True, "checked": True}
    assert [d["path"] for d in said["differences"]] == ["provenance.dsse.json"]
    assert "not a trusted key" in said["differences"][0]["lineage"][0]
    assert verify_bundle(bundle / "MANIFEST.json", trust).verified  # the key that signed it: verified


def test_an_unsigned_bundle_verifies_only_with_unsigned_saying_so(
    bundle: Path, trust: Trust, capsys: pytest.CaptureFixture[str]
) -> None:
    (bundle / "provenance.dsse.json").unlink()
    manifest = str(bundle / "MANIFEST.json")
    refused = verify_bundle(bundle / "MANIFEST.json", trust)  # a key was asked for: nothing is signed
    assert [d.path for d in refused.differences] == ["provenance.dsse.json"]
    assert "verify it with --unsigned" in refused.differences[0].lineage[0]
    assert main(["verify", manifest, "--unsigned"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "verified" and "unsigned (--unsigned): what is attested rests on nothing" in out


def test_an_object_a_bundle_lacks_is_blamed_on_the_same_referrer_on_every_run(bundle: Path, key: Path) -> None:
    """The walk that finds a lacking object starts in one order, so which of its referrers is named does not
    follow the interpreter's hash seed (it named one of three at random before)."""
    referrers: dict[Path, int] = {}
    texts = {path: path.read_bytes() for path in (bundle / "objects").iterdir()}
    for path, text in texts.items():
        if b'"kind":"code-manifest"' in text:
            referrers[path] = sum(path.stem.encode() in other for other in texts.values())
    lacking = min(path for path, count in referrers.items() if count >= 2)  # one manifest, many stages' keys
    lacking.unlink()
    reseal(bundle, key)
    pub = str(public_key_path(key))
    named = set()
    for seed in ("1", "2", "3", "4"):
        ran = subprocess.run(
            [sys.executable, "-m", "bench", "--json", "verify", str(bundle / "MANIFEST.json"), "--trust", pub],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=False,
        )
        said = json.loads(ran.stdout)
        lines = [line for d in said["differences"] for line in d["lineage"] if "is referred to by" in line]
        assert ran.returncode == 1 and len(lines) == 1, said
        named.add(lines[0])
    assert len(named) == 1, named
