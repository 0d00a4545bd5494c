"""Publication checks: admissions match durable records, the manifest covers every file, nothing leaks.

Each check returns findings (a check, a file, what was found) rather than stopping at the first, so one run of
CI names every offending file. A secret is never echoed back: findings show only its first characters.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contracts import Digest, PortablePath
from ..errors import BenchError
from ..leaks import Check, FileFinding, check_leaks
from .bundle_layout import ADMISSIONS, RECORDS, BundleError, load_admissions, load_records
from .manifest import MANIFEST_NAME, PublicationManifest

__all__ = [
    "PublicationRefused",
    "all_findings",
    "check_admissions",
    "check_coverage",
]


class PublicationRefused(BenchError):
    """Publication checks failed; ``findings`` names every offending file."""

    exit_code = 14

    def __init__(self, findings: list[FileFinding]) -> None:
        # One line, as every error is (a progress line shows it whole): the first finding with its content, then
        # every other file named.
        others = sorted({f.path for f in findings[1:]} - {findings[0].path})
        also = f" and {len(findings) - 1} more, in {', '.join(others) or 'the same file'}" if len(findings) > 1 else ""
        super().__init__(
            f"publication refused: {findings[0]}{also}",
            path=findings[0].path,
            hint="redact or remove the named content (cleanup may redact; it may not drop a run), then publish again",
        )
        self.findings = findings


def check_coverage(files: Mapping[PortablePath, bytes], manifest: PublicationManifest) -> list[FileFinding]:
    """Every file listed with the digest of its bytes, and nothing listed missing."""
    listed = {f.path: f.digest for f in manifest.files}
    findings = [FileFinding(p, Check.COVERAGE, "not covered by the manifest") for p in sorted(set(files) - set(listed))]
    findings += [
        FileFinding(p, Check.COVERAGE, f"listed with {listed[p]} but missing from the bundle")
        for p in sorted(set(listed) - set(files))
    ]
    for path in sorted(set(files) & set(listed)):
        actual = Digest.of(files[path])
        if actual != listed[path]:
            findings.append(FileFinding(path, Check.COVERAGE, f"manifest says {listed[path]}, file hashes to {actual}"))
    return findings


def check_admissions(files: Mapping[PortablePath, bytes]) -> list[FileFinding]:
    """Every admission decides about a durable record in the bundle, and every record has its decision."""
    try:
        records = load_records(files)
        admissions = load_admissions(files)
    except BundleError as exc:
        return [FileFinding(exc.path or "(bundle)", Check.ADMISSION_RECORD, str(exc))]
    findings = []
    decided: set[Digest] = set()
    for path, decision in sorted(admissions.items()):
        expected = f"{ADMISSIONS}/{decision.record.hex}.json"
        if decision.record not in records:
            findings.append(
                FileFinding(path, Check.ADMISSION_RECORD, f"names record {decision.record}, not in {RECORDS}/")
            )
        elif path != expected:
            findings.append(FileFinding(path, Check.ADMISSION_RECORD, f"decides {decision.record}; name it {expected}"))
        decided.add(decision.record)
    for digest, (path, _) in sorted(records.items()):
        if digest not in decided:
            findings.append(
                FileFinding(path, Check.ADMISSION_RECORD, "has no admission decision (completed is not admitted)")
            )
    return findings


def all_findings(files: Mapping[PortablePath, bytes], manifest_bytes: bytes | None) -> list[FileFinding]:
    """Admission and leak findings for a bundle's files (and its manifest, when written), sorted by file."""
    findings = check_admissions(files)
    for path, data in files.items():
        findings += check_leaks(path, data)
    if manifest_bytes is not None:
        findings += check_leaks(MANIFEST_NAME, manifest_bytes)
    return sorted(findings)
