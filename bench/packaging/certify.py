"""Certification: a static, zero-model, read-only, fail-closed gate over everything an agent can see.

Surfaces, each required: the redacted source corpus (``source``), the evidence corpus (``evidence``), every
declared graph arm (``graph/<arm>``) and the challenge's agent-visible text (``challenge``: prompt and follow-up
prompt). Inputs named ``runner/<what>`` are runner-owned artifacts (verifier, oracle, manifests): a copy of one
inside a surface is suspicious metadata. A missing surface is an error, never a skipped check; the only opt-out
is :data:`UNCHECKED_CORPUS_VARIABLE`, whose name says what it does, and the report records its use. The ports are
declared optional so that this one check, with its own message, decides what is missing.

The source corpus and the challenge's text are also searched for the fixture's memory phrases: a corpus that
already holds what the memory would deliver makes the comparison moot.

A fixture's distractor pool (``distractors``, the largest pool a suite runs; smaller ones are its prefixes) is
certified like evidence, and more strictly: it is agent-visible through every memory, so harness terms, secrets,
diffs and answer phrases are findings there too, and so is a memory phrase, since a distractor that carries the
memory's facts, or sits at an evidence document's path, would pass for the oracle.

Certification never changes anything: findings are reported, and repair is redaction's job, upstream.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Mapping
from typing import Annotated, Literal

from ..builder import SUPPLIED, Ports
from ..contracts import BlobDigest, ContractModel, Digest, Document, PortablePath, Ref, TreeDigest
from ..contracts.files import collection_paused
from ..errors import StageError
from ..store import EntryKind, Store, walk_tree
from ..suite import ChallengeManifest
from .blobscan import scan_blobs
from .graph import graph_texts
from .markers import FindingKind, TextScanner, identity_terms, path_markers

__all__ = [
    "UNCHECKED_CORPUS_VARIABLE",
    "CertificationReport",
    "CertifyInputs",
    "CertifyOutputs",
    "CertifyParams",
    "CheckedSurface",
    "Finding",
    "MissingSurface",
    "Verdict",
    "certify_surfaces",
]

UNCHECKED_CORPUS_VARIABLE = "STELE_BENCH_UNCHECKED_CORPUS_ALLOWED"


class MissingSurface(StageError):
    """A surface certification must cover was not given; naming it is the whole message."""


class Verdict(enum.StrEnum):
    CERTIFIED = "certified"
    CERTIFIED_CORPUS_UNCHECKED = "certified-with-source-corpus-unchecked"
    REJECTED = "rejected"


class Finding(ContractModel):
    kind: FindingKind
    surface: str  # source, evidence, graph/<arm>, challenge
    path: str  # a tree path, a JSON pointer into a graph, or the challenge field
    line: int | None  # None for a finding about the path itself
    marker: str


class CheckedSurface(ContractModel):
    surface: str
    digest: Digest
    entries: int
    scanned_bytes: int


class CertificationReport(Document):
    kind: Literal["certification-report"] = "certification-report"
    schema_version: Literal[1] = 1
    verdict: Verdict
    surfaces: tuple[CheckedSurface, ...]
    unchecked: tuple[str, ...]  # each opt-out used, with the variable that allowed it
    findings: tuple[Finding, ...]


class CertifyParams(ContractModel):
    """``unchecked_corpus_allowed`` is set only from :data:`UNCHECKED_CORPUS_VARIABLE`, so it is in the action key.

    ``memory_phrases`` are the fixture's: each is looked for in the source corpus and the challenge's text, where
    the memory must not already be (it is required, so no caller forgets it; a fixture with none passes ``()``).
    """

    memory_phrases: tuple[str, ...]
    unchecked_corpus_allowed: bool = False


class CertifyInputs(Ports):
    """Every surface, by port; ``graph`` and ``runner`` keyed by arm name and by what the runner file is."""

    source: TreeDigest | None = None
    evidence: Annotated[TreeDigest | None, SUPPLIED] = None
    distractors: TreeDigest | None = None  # the fixture's distractor pool, when it declares one
    challenge: Annotated[Ref[ChallengeManifest] | None, SUPPLIED] = None
    graph: Annotated[dict[str, BlobDigest], SUPPLIED] = {}
    runner: Annotated[dict[str, BlobDigest], SUPPLIED] = {}


class CertifyOutputs(Ports):
    report: Ref[CertificationReport]


def certify_surfaces(store: Store, inputs: CertifyInputs, params: CertifyParams) -> CertificationReport:
    """Check every surface in ``inputs`` and report; raises :class:`MissingSurface` for an absent one."""
    unchecked = _check_inputs(inputs, params)
    assert inputs.challenge is not None and inputs.evidence is not None  # _check_inputs refused their absence
    challenge = store.get_document(inputs.challenge, ChallengeManifest)
    scanner = TextScanner(challenge.answer_phrases)
    # The memory's own surfaces (evidence, graph arms) hold its phrases by design; everything else must not.
    outside = TextScanner(challenge.answer_phrases, params.memory_phrases)
    runner: dict[Digest, str] = {digest: name for name, digest in inputs.runner.items()}
    runner[inputs.challenge] = "challenge manifest"
    findings: list[Finding] = []
    trees = {
        "source": (inputs.source, outside),
        "evidence": (inputs.evidence, scanner),
        "distractors": (inputs.distractors, outside),
    }
    with collection_paused():  # an entry, a path and a digest per file, no cycles: see collection_paused
        surfaces = [
            _scan_tree(store, name, tree, scan, runner, findings)
            for name, (tree, scan) in trees.items()
            if tree is not None
        ]
    if inputs.distractors is not None:
        findings += _posing_as_oracle(store, inputs.evidence, inputs.distractors)
    for arm in sorted(inputs.graph):
        surfaces.append(_scan_graph(store, f"graph/{arm}", inputs.graph[arm], scanner, findings))
    surfaces.append(_scan_challenge(inputs.challenge, challenge, outside, findings))
    findings.sort(key=lambda f: (f.surface, f.path, f.line or 0, f.kind.value, f.marker))
    verdict = Verdict.REJECTED if findings else Verdict.CERTIFIED_CORPUS_UNCHECKED if unchecked else Verdict.CERTIFIED
    return CertificationReport(verdict=verdict, surfaces=tuple(surfaces), unchecked=unchecked, findings=tuple(findings))


def _check_inputs(inputs: CertifyInputs, params: CertifyParams) -> tuple[str, ...]:
    for name in ("evidence", "challenge"):
        if getattr(inputs, name) is None:
            raise MissingSurface(f"certify: the {name} surface is missing; every agent-visible surface must be given")
    if not inputs.graph:
        raise MissingSurface("certify: no graph arm given; pass every graph arm the fixture declares")
    if inputs.source is not None:
        return ()
    if not params.unchecked_corpus_allowed:
        raise MissingSurface(
            f"certify: the source corpus is missing; pass it, or set {UNCHECKED_CORPUS_VARIABLE}=1 to certify without "
            "it (the report then says the corpus went unchecked)"
        )
    return (f"source corpus: not given; allowed by {UNCHECKED_CORPUS_VARIABLE}=1",)


def _scan_tree(
    store: Store,
    surface: str,
    tree: Digest,
    scanner: TextScanner,
    runner: Mapping[Digest, str],
    findings: list[Finding],
) -> CheckedSurface:
    walked: list[tuple[PortablePath, Digest]] = []
    paths_by_blob: dict[Digest, list[PortablePath]] = defaultdict(list)
    for path, entry in walk_tree(store, tree):
        walked.append((path, entry.digest))
        if entry.kind is not EntryKind.DIRECTORY:
            paths_by_blob[entry.digest].append(path)

    def path_findings() -> None:
        for path, digest in walked:
            for kind, marker in path_markers(path):
                findings.append(Finding(kind=kind, surface=surface, path=path, line=None, marker=marker))
            if digest in runner:
                marker = f"runner-owned {runner[digest]}"
                findings.append(
                    Finding(kind=FindingKind.SUSPICIOUS_METADATA, surface=surface, path=path, line=None, marker=marker)
                )

    # Read, verified and scanned here and, on a large tree, partly in a forked process (blobscan.py), in pack order;
    # the paths are checked here while the forked process reads its share.
    scanned, hits = scan_blobs(store, list(paths_by_blob), scanner, f"certify {surface}", path_findings)
    for digest, found in hits:
        for hit in found:
            for path in paths_by_blob[digest]:
                findings.append(Finding(kind=hit.kind, surface=surface, path=path, line=hit.line, marker=hit.marker))
    return CheckedSurface(surface=surface, digest=tree, entries=len(walked), scanned_bytes=scanned)


def _posing_as_oracle(store: Store, evidence: Digest, distractors: Digest) -> list[Finding]:
    """A distractor at an evidence document's path: restore would have to choose, and whichever won would be
    scored as the oracle."""
    documents = {path for path, entry in walk_tree(store, evidence) if entry.kind is not EntryKind.DIRECTORY}
    marker = "a distractor at an evidence document's path would pass for the oracle"
    return [
        Finding(kind=FindingKind.SOLUTION_LEAK, surface="distractors", path=path, line=None, marker=marker)
        for path, entry in walk_tree(store, distractors)
        if entry.kind is not EntryKind.DIRECTORY and path in documents
    ]


def _scan_graph(
    store: Store, surface: str, blob: Digest, scanner: TextScanner, findings: list[Finding]
) -> CheckedSurface:
    entries = 0
    for text in graph_texts(store.get_bytes(blob), surface):
        entries += 1
        for hit in scanner.scan(text.text.encode("utf-8")):
            findings.append(
                Finding(kind=hit.kind, surface=surface, path=text.pointer, line=hit.line, marker=hit.marker)
            )
        if text.identity:
            for term in identity_terms(text.text):
                marker = f"identity field names the experiment: {term}"
                findings.append(
                    Finding(
                        kind=FindingKind.BENCHMARK_AWARENESS, surface=surface, path=text.pointer, line=1, marker=marker
                    )
                )
    return CheckedSurface(surface=surface, digest=blob, entries=entries, scanned_bytes=blob.size)


def _scan_challenge(
    digest: Digest, challenge: ChallengeManifest, scanner: TextScanner, findings: list[Finding]
) -> CheckedSurface:
    visible = {"prompt": challenge.prompt, "follow_up_prompt": challenge.follow_up_prompt}
    scanned = 0
    for field, text in visible.items():
        if text is None:
            continue
        data = text.encode("utf-8")
        scanned += len(data)
        for hit in scanner.scan(data):
            findings.append(Finding(kind=hit.kind, surface="challenge", path=field, line=hit.line, marker=hit.marker))
    return CheckedSurface(
        surface="challenge", digest=digest, entries=len([t for t in visible.values() if t]), scanned_bytes=scanned
    )
