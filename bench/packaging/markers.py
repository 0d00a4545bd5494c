"""What certification looks for: the five kinds of finding and the markers of each, by name and by content.

Content markers are fixed strings, matched case-insensitively in the raw bytes; a few are then confirmed by a
pattern at the hit (a diff hunk header, a key's shape). One Aho-Corasick pass over all the fixed strings at once
(the automaton ripgrep uses) tells a clean file from one with a candidate; only candidates are searched marker by
marker. The vocabularies are deliberately narrow: a gate that cries wolf gets switched off.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import translate

from ahocorasick_rs import MATCHKIND_LEFTMOST_FIRST, BytesAhoCorasick

from .patterns import CANDIDATE_NAMES, auto_loaded_match

__all__ = [
    "CONDITION_TERMS",
    "HARNESS_TERMS",
    "FindingKind",
    "Hit",
    "TextScanner",
    "condition_terms",
    "harness_terms",
    "identity_terms",
    "path_markers",
]


class FindingKind(enum.StrEnum):
    """Exactly the seed's five kinds."""

    AUTO_LOADED_CONTEXT = "auto-loaded-context"  # a file the harness reads into the prompt unasked
    SUSPICIOUS_METADATA = "suspicious-metadata"  # .git, .env, credentials, runner-owned task wiring
    BENCHMARK_AWARENESS = "benchmark-awareness"  # the packaged inputs announce the experiment
    PATCH_OR_DIFF = "patch-or-diff"  # a .patch, .orig, or a unified diff hunk
    SOLUTION_LEAK = "solution-leak"  # a challenge's declared answer phrase, already present


# Terms that would tell an agent it is inside an experiment. Deliberately narrow: each one is the harness's own
# name, not ordinary engineering prose, so a real repository does not trip them. Words like "condition", "arm",
# "trial", "synthetic" and "ground truth" are NOT here: they occur naturally in real project knowledge and would
# make certification cry wolf. They are checked everywhere: paths, file contents, prompts, graph nodes.
HARNESS_TERMS: tuple[str, ...] = ("stele-bench", "stele_bench", "stelebench", "stele bench")

# The words that name an arm's condition, looked for as whole words in an image's paths and link targets (never in
# file contents, where they are ordinary prose): an image a condition's arm runs in must not say which it is.
# "control", "memory" and "harness" are left out: an ordinary Debian image has paths with each (dpkg's control
# files, Python's shared_memory, Perl's TAP::Harness).
CONDITION_TERMS: tuple[str, ...] = ("treatment", "baseline", "experiment", "condition", "fixture")

# The stricter set, checked only against a graph's identity fields (the project, workspace and branch names the
# apparatus writes itself), never against node bodies, where "test fixtures" is ordinary prose.
_IDENTITY_TERMS = frozenset(
    {
        "fixture",
        "control",
        "treatment",
        "baseline",
        "experiment",
        "benchmark",
        "bench",
        "stele",
        "harness",
        "arm",
        "condition",
        "cohort",
        "trial",
        "oracle",
        "verifier",
        "eval",
        "evaluation",
        "memoryless",
        "nomemory",
    }
)
_IDENTITY_PHRASES = ("control arm", "treatment arm", "negative control", "memory arm", "no-memory")
_WORDS = re.compile(r"[a-z0-9]+")

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.MULTILINE)
# Secrets a corpus must not carry: private keys, and the documented shapes of common cloud and chat tokens.
_SECRETS: tuple[tuple[bytes, str, re.Pattern[bytes]], ...] = (
    (b"private key-----", "private key", re.compile(rb"-----begin (?:[a-z0-9]+ )*private key-----")),
    (b"akia", "AWS access key id", re.compile(rb"\bakia[0-9a-z]{16}\b")),
    (b"ghp_", "GitHub token", re.compile(rb"\bghp_[0-9a-z]{36}\b")),
    (b"github_pat_", "GitHub token", re.compile(rb"\bgithub_pat_[0-9a-z_]{22,}")),
    (b"sk-ant-", "Anthropic API key", re.compile(rb"\bsk-ant-[0-9a-z_-]{20,}")),
    (b"xox", "Slack token", re.compile(rb"\bxox[abprs]-[0-9a-z-]{10,}")),
)

_VCS_DIRECTORIES = frozenset({".git", ".hg", ".svn", ".bzr"})  # repository metadata carries history
_CREDENTIAL_NAMES: tuple[str, ...] = (
    ".env*",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
)
_CREDENTIAL_NAMES += ("*.p12", "*.pfx", "*.jks", "*.keystore")
_CREDENTIAL = re.compile("|".join(f"(?P<c{i}>{translate(glob)})" for i, glob in enumerate(_CREDENTIAL_NAMES)))
_PATCH_SUFFIXES = (".patch", ".diff", ".orig", ".rej")
# Every name _name_markers finds anything for, as one pattern (a superset: it only decides who is checked).
_CANDIDATE = re.compile(
    "|".join(
        (
            CANDIDATE_NAMES,
            _CREDENTIAL.pattern,
            *(f"{re.escape(name)}\\Z" for name in (*_VCS_DIRECTORIES, "credentials")),
            "(?s:.*)(?:" + "|".join(re.escape(suffix) for suffix in _PATCH_SUFFIXES) + ")\\Z",
        )
    )
)


@dataclass(frozen=True)
class Hit:
    kind: FindingKind
    line: int
    marker: str


@dataclass(frozen=True)
class _Needle:
    kind: FindingKind
    literal: bytes  # lowercase; every match contains it
    marker: str
    confirm: re.Pattern[bytes] | None = None


class TextScanner:
    """Finds content markers in bytes: the fixed ones, a challenge's answer phrases and, on the surfaces that are
    not the memory itself, the memory's phrases (a corpus that already holds the memory makes memory moot)."""

    def __init__(self, answer_phrases: Iterable[str] = (), memory_phrases: Iterable[str] = ()) -> None:
        needles = [_Needle(FindingKind.BENCHMARK_AWARENESS, term.encode(), term) for term in HARNESS_TERMS]
        needles.append(_Needle(FindingKind.PATCH_OR_DIFF, b"@@ -", "unified diff hunk", _HUNK))
        needles += [_Needle(FindingKind.SUSPICIOUS_METADATA, lit, name, shape) for lit, name, shape in _SECRETS]
        needles += [_phrase_needle(phrase, "answer phrase") for phrase in answer_phrases]
        needles += [_phrase_needle(phrase, "memory phrase") for phrase in memory_phrases]
        self.needles = tuple(needles)
        # Leftmost-first matching skips overlapped occurrences, but it reports no match at all only when no
        # literal occurs anywhere: exactly what a prefilter needs, at the automaton's full speed.
        self._any = BytesAhoCorasick(list(self.literals), matchkind=MATCHKIND_LEFTMOST_FIRST)

    @property
    def literals(self) -> tuple[bytes, ...]:
        """The fixed strings searched for (what ``rg -F -i`` would be given for the same job)."""
        return tuple(dict.fromkeys(needle.literal for needle in self.needles))

    def scan(self, data: bytes) -> Iterator[Hit]:
        """The first hit of each marker in ``data``, with its 1-based line."""
        lowered = data.lower()
        if not self._any.find_matches_as_indexes(lowered):
            return
        for needle in self.needles:
            at = lowered.find(needle.literal)
            if at < 0:
                continue
            if needle.confirm is not None:
                found = needle.confirm.search(lowered)
                if found is None:
                    continue
                at = found.start()
            yield Hit(needle.kind, lowered.count(b"\n", 0, at) + 1, needle.marker)


def _phrase_needle(phrase: str, what: str) -> _Needle:
    words = phrase.lower().split()
    if not words:
        raise ValueError(f"an {what} must contain a word")
    shape = re.compile(rb"\s+".join(re.escape(word.encode()) for word in words))
    return _Needle(FindingKind.SOLUTION_LEAK, max(words, key=len).encode(), f"{what} {' '.join(words)!r}", shape)


def path_markers(path: str) -> Iterator[tuple[FindingKind, str]]:
    """Findings a tree entry earns by its path alone (its content is scanned separately)."""
    name = path[path.rfind("/") + 1 :]
    if _CANDIDATE.match(name) is not None:  # one match rejects nearly every name before the checks below
        yield from _name_markers(path, name)
    for term in harness_terms(path):
        yield FindingKind.BENCHMARK_AWARENESS, term


def condition_terms(text: str) -> list[str]:
    """The :data:`CONDITION_TERMS` among the whole words of ``text`` (camelCase and snake_case split)."""
    words = set(_WORDS.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()))
    return [term for term in CONDITION_TERMS if term in words]


def harness_terms(text: str) -> list[str]:
    """The :data:`HARNESS_TERMS` in ``text`` (a path, a link target), compared case-insensitively."""
    lowered = text.lower()
    return [term for term in HARNESS_TERMS if term in lowered]


def _name_markers(path: str, name: str) -> Iterator[tuple[FindingKind, str]]:
    pattern = auto_loaded_match(path)
    if pattern is not None:
        yield FindingKind.AUTO_LOADED_CONTEXT, pattern
    if name in _VCS_DIRECTORIES:
        yield FindingKind.SUSPICIOUS_METADATA, f"version-control metadata {name}"
    credential = _CREDENTIAL.match(name)
    if credential is not None:
        glob = _CREDENTIAL_NAMES[int(str(credential.lastgroup)[1:])]
        yield FindingKind.SUSPICIOUS_METADATA, f"credential file {glob}"
    if path == ".aws/credentials" or path.endswith("/.aws/credentials"):
        yield FindingKind.SUSPICIOUS_METADATA, "credential file .aws/credentials"
    if name.endswith(_PATCH_SUFFIXES):
        yield FindingKind.PATCH_OR_DIFF, f"{name.rsplit('.', 1)[-1]} file"


def identity_terms(value: str) -> list[str]:
    """The stricter-set terms in an identity field: whole words (camelCase and snake_case split) and phrases."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", value).lower()
    words = set(_WORDS.findall(spaced))
    found = sorted(words & _IDENTITY_TERMS)
    flat = " ".join(_WORDS.findall(spaced))
    found += [phrase for phrase in _IDENTITY_PHRASES if phrase.replace("-", " ") in flat]
    return found
