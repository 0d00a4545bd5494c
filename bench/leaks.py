"""What publication refuses in any file, and restore refuses before an arm runs: secret-shaped strings, host paths
and the runner's own paths.

Below both users (``bench.publish.checks`` over a bundle's files, ``bench.agent.mounted`` over a memory system's
restore response), so the one set of patterns decides both. Patterns run over raw bytes so no decoding can hide a
match; a secret is never echoed back, only its first characters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .harness import all_harnesses
from .sandbox.layout import ASSET_DIR, RUNNER_SCRATCH, USER_HOME

__all__ = ["LEAK_PATTERNS", "Check", "FileFinding", "check_leaks"]


class Check(StrEnum):
    ADMISSION_RECORD = "admission-record"
    COVERAGE = "coverage"
    SECRET = "secret"
    HOST_PATH = "host-path"
    RUNNER_PATH = "runner-path"


# The container's own home (every arm's user) is what transcripts name; any other home is the host's.
_CONTAINER_HOME = re.escape(USER_HOME.removeprefix("/home/").encode())
# The key every arm's CLI sends to its own gateway (each harness's own): a constant in the source that grants
# nothing (the gateway answers only on the arm's internal network), recorded in each arm's container spec. Any
# other key is refused.
_AGENT_KEY = b"|".join(sorted({re.escape(harness.agent_key.encode()) for harness in all_harnesses()}))
_SCRATCH = b"|".join(re.escape(prefix.encode()) for prefix in RUNNER_SCRATCH.values())
# Under a scratch prefix: mkdtemp's eight random characters, or the hex of a content- or token-named staging folder.
_SCRATCH_FOLDER = re.compile(rb"/(?:" + _SCRATCH + rb")[a-z0-9_]{8,}(?![A-Za-z0-9._-])")


# (check, what it is, pattern). Patterns run over raw bytes so no decoding can hide a match.
LEAK_PATTERNS: tuple[tuple[Check, str, re.Pattern[bytes]], ...] = (
    # Every harness's provider keys, as the harness names them.
    *(
        (Check.SECRET, pattern.label, pattern.compiled())
        for harness in all_harnesses()
        for pattern in harness.credential_patterns
    ),
    (
        Check.SECRET,
        "OpenAI-style API key",
        re.compile(rb"(?<![A-Za-z0-9])(?!(?:" + _AGENT_KEY + rb")(?![A-Za-z0-9_-]))sk-(?!ant-)[A-Za-z0-9_-]{20,}"),
    ),
    (Check.SECRET, "GitHub token", re.compile(rb"(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    (Check.SECRET, "AWS access key id", re.compile(rb"(?<![A-Z0-9])(AKIA|ASIA)[0-9A-Z]{16}(?![A-Z0-9])")),
    (Check.SECRET, "AWS secret key", re.compile(rb"(?i)aws_secret_access_key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}")),
    (Check.SECRET, "bearer token", re.compile(rb"(?i)bearer\s+[A-Za-z0-9._~+/-]{16,}=*")),
    (Check.SECRET, "private key", re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    (Check.SECRET, "Slack token", re.compile(rb"xox[abposr]-[A-Za-z0-9-]{10,}")),
    (Check.SECRET, "Google API key", re.compile(rb"AIza[0-9A-Za-z_-]{35}")),
    (Check.HOST_PATH, "root home directory", re.compile(rb"(?<![A-Za-z0-9._-])/root(?:/|\b)")),
    (
        Check.HOST_PATH,
        "home directory",
        re.compile(rb"(?<![A-Za-z0-9._-])/home/(?!" + _CONTAINER_HOME + rb"(?![A-Za-z0-9._-]))[A-Za-z0-9._-]+"),
    ),
    (Check.HOST_PATH, "macOS home directory", re.compile(rb"(?<![A-Za-z0-9._-])/Users/[A-Za-z0-9._-]+")),
    (Check.HOST_PATH, "Windows home directory", re.compile(rb"(?i)\b[A-Z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)")),
    # Where the verifier and oracle are mounted (never in an agent's container), and the runner's scratch folders.
    (Check.RUNNER_PATH, "runner asset mount", re.compile(re.escape(ASSET_DIR.encode()) + rb"(?![A-Za-z0-9._-])")),
    # mkdtemp's eight random characters, or the hex of a content-named or token-named staging folder.
    (
        Check.RUNNER_PATH,
        "runner scratch folder",
        re.compile(rb"/(?:" + _SCRATCH + rb")[a-z0-9_]{8,}(?![A-Za-z0-9._-])"),
    ),
)


# Each harness's own texts that the host-path patterns would read as a path but that name none (its agent
# hierarchy's root, an XML tag); only a host-path match lying wholly inside one is passed over.
_LOOKALIKES = tuple(re.compile(text.encode()) for harness in all_harnesses() for text in harness.path_lookalikes)


def _lookalike(haystack: bytes, start: int, end: int) -> bool:
    return any(
        found.start() <= start and end <= found.end()
        for pattern in _LOOKALIKES
        for found in pattern.finditer(haystack, max(0, start - 64), end + 64)
    )


@dataclass(frozen=True, order=True)
class FileFinding:
    """One check's finding against one file: a leak (secret, host or runner path) in a file published or restored,
    or a publication check (coverage, admission record) the bundle's file fails."""

    path: str
    check: Check
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.check.value}: {self.detail}"


_SHOWN = 120  # characters of a found path shown in a finding


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def check_leaks(path: str, data: bytes) -> list[FileFinding]:
    """Secret-shaped strings and host paths in a file's name or content."""
    findings = []
    for where, haystack in (("name", path.encode("utf-8")), ("content", data)):
        for check, what, pattern in LEAK_PATTERNS:
            for match in pattern.finditer(haystack):
                if check is Check.HOST_PATH and _lookalike(haystack, match.start(), match.end()):
                    continue
                # A secret is never echoed back (its first characters say which); a path is shown as found.
                found = match.group(0).decode("utf-8", "replace")
                shown = f"{found[:6]}..." if check is Check.SECRET else found[:_SHOWN]
                place = "file name" if where == "name" else f"line {_line_of(haystack, match.start())}"
                findings.append(FileFinding(path, check, f"{what} at {place} ({shown})"))
    return findings
