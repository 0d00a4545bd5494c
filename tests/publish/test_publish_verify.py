"""Publishing, the publication checks and verification on a real bundle on disk, through the CLI too."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.analysis import StatisticsSummary
from bench.cli import main
from bench.cli.publish_cmd import verify_bundle
from bench.contracts import Digest, PortablePath, canonical_bytes
from bench.errors import SourceError
from bench.publish import Check, ClaimKind, PublicationRefused, check_bundle, check_leaks, judged_beside, read_manifest
from bench.publish.bundle_layout import BundleError
from bench.publish.manifest import write_manifest
from bench.publish.verification import Trust
from bench.sandbox.layout import RUNNER_SCRATCH
from bench.stages.publish import publish_directory as publish
from tests.publish.bundle_factory import write_bundle

SUMMARY = "receipts/statistics-summary.json"
UNSIGNED = Trust(unsigned=True)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    root = tmp_path / "bundle"
    write_bundle(root)
    publish(root)
    return root


def test_untouched_bundle_verifies(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = read_manifest(bundle / "MANIFEST.json")
    on_disk = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    assert sorted(f.path for f in manifest.files) == [
        p for p in on_disk if p not in ("MANIFEST.json", "provenance.intoto.json")
    ]
    verification = verify_bundle(bundle / "MANIFEST.json", UNSIGNED)
    assert verification.differences == []
    assert verification.counts()[ClaimKind.REDERIVED] == {"analyze": 1, "report": 1}
    assert check_bundle(bundle / "MANIFEST.json") == []
    assert main(["verify", "--unsigned", str(bundle / "MANIFEST.json")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "verified"


def test_summary_counts_only_admitted_runs(bundle: Path) -> None:
    summary = StatisticsSummary.model_validate_json((bundle / SUMMARY).read_bytes())
    assert len(summary.inputs) == 18 + 4  # superseded v1 runs and the aborted run are kept but not counted
    assert len(list((bundle / "records").iterdir())) == 3 + 18 + 5
    assert {c.build.label for c in summary.cells if c.key.challenge == "rename-config"} == {
        "mem-1.0",
        "mem-1.1",
        "mem-1.2",
    }


def test_altered_receipt_is_named_with_the_stage_that_wrote_it(
    bundle: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary = json.loads((bundle / SUMMARY).read_bytes())
    summary["cells"][0]["paired"]["mcnemar_p"] = 0.001  # a friendlier p-value
    altered = canonical_bytes(StatisticsSummary.model_validate_json(json.dumps(summary)))
    original = Digest.of((bundle / SUMMARY).read_bytes())
    (bundle / SUMMARY).write_bytes(altered)
    # Even with the manifest re-hashed to match, the lineage catches it: analyze wrote other bytes.
    manifest = read_manifest(bundle / "MANIFEST.json")
    files = [f if f.path != SUMMARY else f.model_copy(update={"digest": Digest.of(altered)}) for f in manifest.files]
    write_manifest(bundle, manifest.model_copy(update={"files": files}))
    differences = verify_bundle(bundle / "MANIFEST.json", UNSIGNED).differences
    named = [d for d in differences if d.path == SUMMARY]
    assert named and named[0].lineage[0].startswith("is an input or output of no action the lineage lists")
    missing = [d for d in differences if d.recorded == original]
    assert {line.split(" (")[0] for d in missing for line in d.lineage} >= {
        "the output summary of analyze",
        "the input summary of report",
    }
    assert main(["verify", "--unsigned", str(bundle / "MANIFEST.json")]) == 1
    assert "NOT verified:" in capsys.readouterr().out


@pytest.mark.parametrize("forked", [True, False])
def test_the_shape_is_judged_on_the_bundle_as_delivered_on_the_second_core_or_here_alike(
    bundle: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    """The shape checks run in a forked process beside re-derivation, or here first where forking is not safe:
    the same differences either way."""
    summary = json.loads((bundle / SUMMARY).read_bytes())
    summary["cells"][0]["paired"]["mcnemar_p"] = 0.001
    altered = canonical_bytes(StatisticsSummary.model_validate_json(json.dumps(summary)))
    (bundle / SUMMARY).write_bytes(altered)
    manifest = read_manifest(bundle / "MANIFEST.json")
    files = [f if f.path != SUMMARY else f.model_copy(update={"digest": Digest.of(altered)}) for f in manifest.files]
    write_manifest(bundle, manifest.model_copy(update={"files": files}))
    monkeypatch.setattr(judged_beside, "fork_is_safe", lambda: not forked)
    alone = verify_bundle(bundle / "MANIFEST.json", UNSIGNED).differences
    monkeypatch.setattr(judged_beside, "fork_is_safe", lambda: forked)
    differences = verify_bundle(bundle / "MANIFEST.json", UNSIGNED).differences
    assert differences == alone
    shape = [d for d in differences if d.how == "run"]
    assert [d.path for d in shape] == [SUMMARY] and shape[0].actual == Digest.of(altered)
    # The original summary, which re-deriving analyze puts in the store, is still named as absent from the bundle.
    named = {d.lineage[0] for d in differences if d.how == "named"}
    assert named == {"the output summary of analyze", "the input summary of report"}


def test_a_bundle_whose_files_change_between_the_two_readings_is_refused_not_judged(
    bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forked process reads the bundle for itself: what it judged counts only for the files read here."""
    here = os.getpid()
    read = judged_beside.bundle_files

    def read_later(root: Path) -> dict[PortablePath, bytes]:
        files = read(root)
        if os.getpid() != here:  # the forked reading: one file written to in between
            files[PortablePath(SUMMARY)] = files[PortablePath(SUMMARY)] + b" "
        return files

    monkeypatch.setattr(judged_beside, "fork_is_safe", lambda: True)
    monkeypatch.setattr(judged_beside, "bundle_files", read_later)
    with pytest.raises(BundleError, match="changed while it was verified"):
        verify_bundle(bundle / "MANIFEST.json", UNSIGNED)


def test_a_shape_process_that_dies_stops_the_verification_naming_how(
    bundle: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def killed(self: object) -> Iterator[tuple[int, bytes]]:
        os.kill(os.getpid(), signal.SIGKILL)
        yield 0, b""

    monkeypatch.setattr(judged_beside, "fork_is_safe", lambda: True)
    monkeypatch.setattr(judged_beside.JudgedBeside, "_sent", killed)
    with pytest.raises(SourceError, match=r"checking the bundle's shape stopped .* \(killed by signal 9\)"):
        verify_bundle(bundle / "MANIFEST.json", UNSIGNED)


def test_altered_record_is_named_with_what_reads_it(bundle: Path) -> None:
    record = next(p for p in sorted((bundle / "records").iterdir()) if b'"pass"' in p.read_bytes())
    record.write_bytes(record.read_bytes().replace(b'"pass"', b'"fail"'))
    differences = verify_bundle(bundle / "MANIFEST.json", UNSIGNED).differences
    rehashed = [d for d in differences if d.how == "re-hashed"]
    assert [d.path for d in rehashed] == [f"records/{record.name}"]
    assert any(line.startswith("read by analyze as records/") for line in rehashed[0].lineage)
    assert check_bundle(bundle / "MANIFEST.json")[0].check in (Check.ADMISSION_RECORD, Check.COVERAGE)


def test_uncovered_and_missing_files_fail_coverage(bundle: Path) -> None:
    (bundle / "notes.txt").write_text("late addition, see /home/bob/scratch\n")
    (bundle / "report" / "index.html").unlink()
    findings = {(f.path, f.check) for f in check_bundle(bundle / "MANIFEST.json")}
    expected = {("notes.txt", Check.COVERAGE), ("notes.txt", Check.HOST_PATH), ("report/index.html", Check.COVERAGE)}
    assert findings == expected
    assert main(["publish", "--check", str(bundle)]) == 1


@pytest.mark.parametrize(
    ("planted", "check"),
    [
        (b"/home/alice/work/repo", Check.HOST_PATH),
        (b"/root/.claude/projects", Check.HOST_PATH),
        (b"sk-ant-api03-" + b"A" * 40, Check.SECRET),
        (b"ghp_" + b"a1B2" * 9, Check.SECRET),
        (b"AKIAIOSFODNN7EXAMPLE", Check.SECRET),
        (b"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abcdefgh", Check.SECRET),
        (b"-----BEGIN OPENSSH PRIVATE KEY-----", Check.SECRET),
        (b"python3 /mnt/task/verify.py", Check.RUNNER_PATH),
        (b"/tmp/task-k2j4_x9a/verify.py", Check.RUNNER_PATH),
    ],
)
def test_planted_leak_refuses_publication_and_names_the_file(tmp_path: Path, planted: bytes, check: Check) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    notes = root / "manifests" / "rename-config" / "NOTES.md"
    notes.write_bytes(b"reviewed by the lead\nsee " + planted + b"\n")
    with pytest.raises(PublicationRefused) as caught:
        publish(root)
    assert [(f.path, f.check) for f in caught.value.findings] == [("manifests/rename-config/NOTES.md", check)]
    assert "line 2" in caught.value.findings[0].detail
    said = str(caught.value)
    assert "\n" not in said and said.startswith("publication refused: manifests/rename-config/NOTES.md: ")
    if check is Check.SECRET:
        assert planted[8:].decode() not in said  # the secret itself is never echoed
    else:
        detail = caught.value.findings[0].detail
        assert detail in said and not detail.endswith("...)")  # the path is shown as found, not cut
    assert not (root / "MANIFEST.json").exists()


def test_a_refused_publication_exits_14_naming_the_file_and_the_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    (root / "manifests" / "rename-config" / "NOTES.md").write_bytes(b"made in /home/alice/work/repo\n")
    assert main(["publish", str(root)]) == 14
    said = capsys.readouterr().err
    assert "manifests/rename-config/NOTES.md: host-path: home directory at line 1 (/home/alice)" in said


def test_leak_scan_leaves_ordinary_content_alone() -> None:
    text = b"blake3:" + b"ab" * 32 + b":12 /usr/bin/env desk-lamp sk-short roots/home-made"
    assert check_leaks("records/x.json", text) == []
    assert check_leaks("home/alice.txt", b"") == []
    assert check_leaks("x/root/y", b"") == []  # a relative path is not a host path
    assert [f.check for f in check_leaks("a.json", b'{"cwd":"/root/x"}')] == [Check.HOST_PATH]
    assert check_leaks("a.json", b'{"cwd":"/home/dev/.claude/projects/-workspace"}') == []  # the container's home
    assert check_leaks("a.json", b'{"ANTHROPIC_API_KEY":"sk-local-0000000000000000"}') == []  # the arm's local key
    assert [f.check for f in check_leaks("a.json", b'"sk-local-0000000000000000X1"')] == [Check.SECRET]
    assert [f.check for f in check_leaks("a.json", b'{"cwd":"/home/devon/x"}')] == [Check.HOST_PATH]
    assert [f.check for f in check_leaks("a.json", b'"C:\\\\Users\\\\bob"')] == [Check.HOST_PATH]


def test_admission_without_a_durable_record_fails(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    record = sorted((root / "records").iterdir())[0]
    shutil.move(record, tmp_path / record.name)
    with pytest.raises(PublicationRefused) as caught:
        publish(root)
    assert [(f.path, f.check) for f in caught.value.findings] == [(f"admissions/{record.name}", Check.ADMISSION_RECORD)]


def test_record_without_a_decision_fails(tmp_path: Path) -> None:
    root = tmp_path / "bundle"
    write_bundle(root)
    decision = sorted((root / "admissions").iterdir())[0]
    decision.unlink()
    with pytest.raises(PublicationRefused, match="has no admission decision"):
        publish(root)


def test_same_inputs_give_byte_identical_derivations(tmp_path: Path) -> None:
    first, second = tmp_path / "a" / "bundle", tmp_path / "b" / "bundle"  # the title names the directory
    write_bundle(first)
    write_bundle(second)
    publish(first)
    assert main(["publish", str(second)]) == 0
    for name in (SUMMARY, "report/index.html"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name

    def keys(root: Path) -> list[tuple[str, str]]:
        # An action's result records when and where it ran; its key (stage, code, params, inputs) is the same.
        return [(a["stage"], a["key"]) for a in json.loads((root / "receipts/lineage.json").read_bytes())["actions"]]

    assert keys(first) == keys(second)


@pytest.mark.parametrize("prefix", sorted(RUNNER_SCRATCH.values()))
def test_leak_scan_finds_every_runner_scratch_folder_and_leaves_container_paths_alone(prefix: str) -> None:
    for name in ("k2j4_x9a", "423cc093f6413b10"):  # mkdtemp's letters; a staging folder's hex
        found = check_leaks("objects/x.json", f'{{"source":"/tmp/{prefix}{name}/settings.json"}}'.encode())
        assert [f.check for f in found] == [Check.RUNNER_PATH], (prefix, name)
    # Paths inside a container are evidence, kept as the harness or the verifier wrote them.
    assert (
        check_leaks("objects/y", b'{"cwd":"/workspace","sock":"/tmp/cc-socks/7.sock","out":"/tmp/tmpilyea9vs.csv"}')
        == []
    )
