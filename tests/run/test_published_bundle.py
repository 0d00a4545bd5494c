"""What the demo publishes is enough to re-grade it, from a copy, and tampering is caught (issue 16).

Every test reads the bundle the session's demo run published (real containers, the real CLI), on a copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from demo_runs import REPO

from bench.agent import ArmRecord, ExchangeLog
from bench.analysis import PairedAttempt
from bench.cli.publish_cmd import verify_bundle
from bench.contracts import Digest
from bench.publish import Check, PublicationRefused, Verification
from bench.publish.bundle_layout import PROVENANCE_NAME, bundle_files
from bench.publish.provenance import PREDICATE_TYPE, STATEMENT_TYPE
from bench.publish.release import seal
from bench.publish.signing import public_key_path
from bench.publish.verification import Trust
from bench.publish.viewer import INJECTED_COLOUR
from bench.stages.grade import ArmGrade
from tests.publish.png import colour_counts
from tests.run.forge import forge, reseal

pytestmark = pytest.mark.slow  # real containers, the real demo, Ray or S3: minutes

CHALLENGE, HOOKS = "harbor-holds", "reference"


def _doc(root: Path, digest: Digest) -> Path:
    return root / "objects" / f"{digest.hex}.json"


def _arm(root: Path, condition: str) -> ArmRecord:
    graded = ArmGrade.model_validate_json((root / f"receipts/{CHALLENGE}/1/{condition}-grade.json").read_bytes())
    return ArmRecord.model_validate_json(_doc(root, graded.arm).read_bytes())


def _named(verification: Verification, path: str, stage: str) -> list[str]:
    """Every difference about ``path`` that names ``stage``: what a tampering must produce."""
    return [str(d) for d in verification.differences if d.path == path and any(stage in line for line in d.lineage)]


def test_the_bundle_carries_every_arm_pair_and_challenge_artifact(bundle: Path) -> None:
    arm = _arm(bundle, HOOKS)
    assert arm.session is not None and (bundle / "objects" / arm.session.hex).is_file()  # the session as written
    log = ExchangeLog.model_validate_json(_doc(bundle, arm.exchanges).read_bytes())
    assert log.exchanges and all(_doc(bundle, d).is_file() for d in log.exchanges)  # the gateway log
    assert _doc(bundle, arm.final).is_file() and _doc(bundle, arm.start).is_file()  # final-tree listing
    assert all((bundle / "objects" / step.stream.hex).is_file() for step in arm.steps)
    graded = ArmGrade.model_validate_json((bundle / f"receipts/{CHALLENGE}/1/{HOOKS}-grade.json").read_bytes())
    assert _doc(bundle, graded.transcript).is_file()  # the normalised transcript
    for name in ("verifier", "audit", "snapshot"):
        assert (bundle / f"receipts/{CHALLENGE}/1/{HOOKS}-{name}.json").is_file()
    for name in ("certification", "calibration"):
        assert (bundle / f"receipts/{CHALLENGE}/{name}.json").is_file()
    kinds = {json.loads(p.read_bytes()).get("kind") for p in (bundle / "objects").glob("*.json")}
    assert {"pair-run", "spec-diff", "fence-record", "challenge", "redaction-receipt", "action-key"} <= kinds, kinds
    assert list((bundle / "manifests").rglob("v*.json"))  # preregistrations


def test_a_bundle_copied_elsewhere_verifies_without_store_docker_or_network(
    bundle: Path, tmp_path: Path, key: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent.sock"}
    public = str(public_key_path(key))
    command = ["unshare", "-n", sys.executable, "-m", "bench", "--json", "verify", str(bundle / "MANIFEST.json")]
    command += ["--trust", public]
    done = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout)
    arms = len(list(bundle.glob("receipts/*/*/*-grade.json")))
    systems = json.loads((REPO / "challenges" / "example" / "suite.json").read_text())["memory_systems"]
    assert arms == (1 + len(systems)) * len(list(bundle.glob("report/attempts/*.html")))  # the control and each system
    assert result["verified"] and result["claims"]["re-derived"]["grade"] == arms
    attempts = arms // (1 + len(systems))
    assert result["signature"]["signed_by"] and result["cross_checked"]["paired-attempt"] == attempts
    assert result["claims"]["attested"]["paired-attempt"] == attempts
    assert list(elsewhere.iterdir()) == []  # no store made where it ran
    assert Path(REPO).is_dir()


def _hook_line(session: bytes) -> bytes:
    return next(line for line in session.splitlines(keepends=True) if b"hook_additional_context" in line)


def _tamperings(root: Path) -> dict[str, tuple[str, bytes, str]]:
    """Each tampering of the issue: (file, its altered bytes, the stage verify must name)."""
    arm = _arm(root, HOOKS)
    assert arm.session is not None
    session = f"objects/{arm.session.hex}"
    session_bytes = (root / session).read_bytes()
    log = ExchangeLog.model_validate_json(_doc(root, arm.exchanges).read_bytes())
    exchange = f"objects/{log.exchanges[-1].hex}.json"
    verifier = f"receipts/{CHALLENGE}/1/{HOOKS}-verifier.json"
    record = next(
        str(p.relative_to(root))
        for p in sorted((root / "records").iterdir())
        if PairedAttempt.model_validate_json(p.read_bytes()).key.treatment_condition.startswith(f"{HOOKS}:")
        and PairedAttempt.model_validate_json(p.read_bytes()).key.challenge == CHALLENGE
    )
    record_bytes = (root / record).read_bytes()
    return {
        "hook attachment deleted": (session, session_bytes.replace(_hook_line(session_bytes), b""), "grade"),
        "gateway line changed": (
            exchange,
            (root / exchange).read_bytes().replace(b" hook additional context: ", b" hook additional note: "),
            "grade",
        ),
        "verifier flipped": (verifier, (root / verifier).read_bytes().replace(b'"succeeded"', b'"failed"'), "grade"),
        "record edited": (record, record_bytes.replace(b'"outcome":"pass"', b'"outcome":"fail"', 1), "analyze"),
    }


TAMPERINGS = ("hook attachment deleted", "gateway line changed", "verifier flipped", "record edited")


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_each_tampering_in_place_is_named_with_its_file_and_stage(bundle: Path, tampering: str, trust: Trust) -> None:
    path, altered, stage = _tamperings(bundle)[tampering]
    assert altered != (bundle / path).read_bytes()
    (bundle / path).write_bytes(altered)
    verification = verify_bundle(bundle / "MANIFEST.json", trust)
    assert _named(verification, path, stage), [str(d) for d in verification.differences]


# What re-derivation names when the forger made every digest agree: the stage whose output no longer follows.
FORGED = {
    "hook attachment deleted": ("grade", "output transcript"),
    "gateway line changed": ("grade", "output grade: grade.delivered"),
    "verifier flipped": ("grade", "output grade: grade.outcome."),
    "record edited": ("paired-record", "output record: treatment.outcome"),
}


@pytest.mark.parametrize("tampering", TAMPERINGS)
def test_each_tampering_with_every_digest_made_to_agree_is_caught_by_re_grading(
    bundle: Path, tampering: str, key: Path, trust: Trust
) -> None:
    path, altered, _ = _tamperings(bundle)[tampering]
    if tampering == "gateway line changed":  # every request resends the hook block: scrub it from all of them
        arm = _arm(bundle, HOOKS)
        log = ExchangeLog.model_validate_json(_doc(bundle, arm.exchanges).read_bytes())
        for digest in log.exchanges[:-1]:
            found = next((bundle / "objects").glob(f"{digest.hex}.json"), None)
            if found is not None:
                data = found.read_bytes()
                forge(bundle, str(found.relative_to(bundle)), data.replace(b" hook additional context: ", b" x: "))
    forge(bundle, path, altered, key)  # re-signed: the publisher is the forger
    verification = verify_bundle(bundle / "MANIFEST.json", trust)
    stage, field = FORGED[tampering]
    rederived = [d for d in verification.differences if d.how == "re-derived"]
    assert any(f"stage {stage} " in d.lineage[0] and field in d.lineage[0] for d in rederived), [
        str(d) for d in verification.differences
    ]
    # The hashes, the lineage's shape and the signature all agree: only re-grading finds it.
    assert all(d.how == "re-derived" for d in verification.differences)


def test_a_removed_record_is_named_with_the_stage_that_read_it(bundle: Path, key: Path, trust: Trust) -> None:
    record = sorted((bundle / "records").iterdir())[0]
    record.unlink()
    in_place = verify_bundle(bundle / "MANIFEST.json", trust)
    assert _named(in_place, f"records/{record.name}", "analyze")
    (bundle / "admissions" / record.name).unlink()
    reseal(bundle, key)  # the forger drops it from the manifest too
    forged = verify_bundle(bundle / "MANIFEST.json", trust)
    assert any(d.recorded == Digest.of(b"") or "the input records/" in " ".join(d.lineage) for d in forged.differences)
    assert any("of analyze" in " ".join(d.lineage) for d in forged.differences)


@pytest.mark.parametrize(
    ("planted", "check"),
    [
        (b"/home/alice/projects/stele", Check.HOST_PATH),
        (b"/root/.cache/stele", Check.HOST_PATH),
        (b"sk-ant-api03-" + b"Q" * 48, Check.SECRET),
        (b"/mnt/task/verify.py", Check.RUNNER_PATH),
    ],
)
def test_planted_leaks_anywhere_in_a_real_bundle_are_refused(bundle: Path, planted: bytes, check: Check) -> None:
    arm = _arm(bundle, HOOKS)
    assert arm.session is not None
    session = bundle / "objects" / arm.session.hex
    session.write_bytes(session.read_bytes() + b'{"type":"note","text":"' + planted + b'"}\n')
    (bundle / "MANIFEST.json").unlink()
    with pytest.raises(PublicationRefused) as caught:
        seal(bundle)
    assert [(f.path, f.check) for f in caught.value.findings] == [(f"objects/{arm.session.hex}", check)]
    said, detail = str(caught.value), caught.value.findings[0].detail
    if check is Check.SECRET:
        assert planted[10:].decode() not in said  # a secret is never echoed
    else:
        assert detail in said and "..." not in detail  # a path is shown as found
    assert not (bundle / "MANIFEST.json").exists()


def test_no_secret_or_host_path_in_the_published_bundle(bundle: Path) -> None:
    files = bundle_files(bundle)
    assert len(files) > 100
    seal(bundle)  # every check over every file, again: nothing found


def test_the_provenance_statement_lists_every_file_with_its_digests(bundle: Path, trust: Trust) -> None:
    statement = json.loads((bundle / PROVENANCE_NAME).read_bytes())
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == PREDICATE_TYPE
    files = bundle_files(bundle)
    subjects = {s["name"]: s["digest"] for s in statement["subject"]}
    assert set(subjects) == set(files)
    for path, data in files.items():
        assert subjects[path] == {"sha256": hashlib.sha256(data).hexdigest(), "blake3": Digest.of(data).hex}
    build = statement["predicate"]["buildDefinition"]
    assert {"stage:grade", "stage:paired-attempt"} <= {d["name"] for d in build["resolvedDependencies"]}
    statement["subject"] = statement["subject"][1:]
    (bundle / PROVENANCE_NAME).write_text(json.dumps(statement))
    differences = verify_bundle(bundle / "MANIFEST.json", trust).differences
    assert [d.path for d in differences] == [PROVENANCE_NAME]  # the signature covers what the files make, still


def _screenshot(page: Path, shot: Path, profile: Path) -> bytes:
    chromium = shutil.which("chromium")
    assert chromium, "headless Chromium is needed: install the Debian package `chromium`"
    command = [
        chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
        "--force-device-scale-factor=0.5", "--window-size=1500,9000", f"--screenshot={shot}", page.as_uri(),
    ]  # fmt: skip
    subprocess.run(command, check=True, timeout=180, capture_output=True)
    return shot.read_bytes()


def test_the_transcript_page_shows_injected_context_in_the_treatment_column_only(bundle: Path, tmp_path: Path) -> None:
    report = (bundle / "report" / "index.html").read_text()
    assert f'href="attempts/{CHALLENGE}-1.html"' in report
    page = bundle / "report" / "attempts" / f"{CHALLENGE}-1.html"
    html = page.read_text()
    columns = html.split('<section class="arm" ')[1:]
    names = [c.split('"', 2)[1] for c in columns]
    assert names == ["control", "memory-keeper", "reference", "server-memory", "static-notes"]
    hooked = names.index(HOOKS)  # the system whose hook injects context into the conversation
    assert "step injected" not in columns[0] and "step injected" in columns[hooked]
    assert "<mark>" in columns[hooked]
    image = _screenshot(page, tmp_path / "page.png", tmp_path / "profile")
    yellow = tuple(int(INJECTED_COLOUR[i : i + 2], 16) for i in (1, 3, 5))
    width = 1 / len(columns)  # the columns share the page's width equally
    control = colour_counts(image, step=2, across=(0.0, width - 0.02))
    treatment = colour_counts(image, step=2, across=(hooked * width + 0.02, (hooked + 1) * width - 0.02))
    assert control[yellow] == 0
    assert treatment[yellow] > 200, "the injected block is not drawn in the treatment column"
