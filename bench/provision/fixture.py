"""The fixture contract: the evidence a memory condition is handed, kept apart from the challenge's question.

A fixture is a directory (the *fixture root*) holding ``fixture.json`` and its artifacts. It owns:

- ``evidence_corpus``: a directory of notes, ADRs and exported issue threads (or one file), pinned by SHA-256;
- ``graph_arms``: named frozen graph states, each one artifact pinned by SHA-256, handed to one condition;
- ``probes``: named full-text / semantic / graph retrieval probes with the evidence documents they must return,
  which the snapshot receipt checks after the run;
- ``memory_phrases``: distinctive phrases of the memory, which grading looks for in what the harness delivered;
- ``redact_paths``: extra paths to remove from the source corpus, through the same redaction as auto-loaded context;
- ``distractors``: an optional pool of documents from other projects and topics (:class:`DistractorPool`), seeded
  beside the evidence in every memory a run restores, so the memory has to find its facts among noise. The evidence
  corpus's own documents are the oracle: a distractor never shares a path with one (:mod:`bench.provision.pool`);
- ``retrieval_k``: the depths at which retrieval quality (recall@k, precision@k of a challenge's oracle documents)
  is scored, for a system whose retrieval is deterministic.

Artifact paths are portable paths relative to the fixture root. Before a provisioner sees one, the adapter resolves
it (symlinks included) and refuses it if it lands outside the root or its SHA-256 differs from the manifest.

The SHA-256 of a directory artifact is the SHA-256 of its listing: one line per entry below it, sorted by relative
POSIX path, ``<kind>\\t<hex>\\t<path>\\n`` where kind is ``file``, ``executable`` (hex = SHA-256 of the bytes),
``symlink`` (hex = SHA-256 of the link target) or ``directory`` (hex = 64 zeros). ``stele-bench provision digest``
prints it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from bench.contracts import ContractModel, Document, PortablePath, Sha256
from bench.contracts.checked_files import opened_regular, resolved
from bench.contracts.files import read_contract
from bench.errors import ContractError

from .errors import ProvisionRefused, RefusalReason
from .messages import ArtifactRef, ProbeKind, ProbeRequest

__all__ = [
    "FIXTURE_FILE",
    "PUBLIC_CONTRACTS",
    "DistractorPool",
    "Fixture",
    "FixtureArtifact",
    "FixtureProbe",
    "GraphArm",
    "PoolGenerator",
    "artifact_sha256",
    "check_expected_hits",
    "load_fixture",
    "verify_artifact",
]

FIXTURE_FILE = "fixture.json"
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
_NO_DIGEST = "0" * 64


class FixtureArtifact(ContractModel):
    path: PortablePath
    sha256: Sha256


class GraphArm(ContractModel):
    name: Name
    graph: FixtureArtifact


class FixtureProbe(ContractModel):
    """A retrieval probe and the evidence documents (portable paths inside the corpus) that must be among its hits."""

    name: Name
    kind: ProbeKind
    query: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    top_k: Annotated[int, Field(ge=1, le=50)] = 5
    expected: Annotated[tuple[PortablePath, ...], Field(min_length=1)]

    def request(self) -> ProbeRequest:
        """The probe as sent to a provisioner: without the expected hits."""
        return ProbeRequest(name=self.name, kind=self.kind, query=self.query, top_k=self.top_k)


class PoolGenerator(StrEnum):
    """A built-in source of distractor documents."""

    OTHER_PROJECTS = "other-projects"  # bench.provision.distractors: a dozen other projects' notes, issues, ADRs


class DistractorPool(ContractModel):
    """Documents from elsewhere, seeded beside the evidence so a memory has to find its facts among noise.

    Exactly one source: a built-in ``generator`` drawn from ``seed``, or a ``corpus`` artifact (a directory of
    documents in the evidence convention, none naming another by ``Related:``) sampled in the order ``seed`` gives.
    ``size`` is the most any run draws; a suite names the sizes it runs, and a pool of ``n`` is always the first
    ``n`` documents of the largest, so sizes nest.
    """

    seed: Annotated[int, Field(ge=0, le=2**63 - 1)]
    size: Annotated[int, Field(ge=1, le=10_000)]
    generator: PoolGenerator | None = None
    corpus: FixtureArtifact | None = None

    @model_validator(mode="after")
    def _one_source(self) -> DistractorPool:
        if (self.generator is None) == (self.corpus is None):
            raise ValueError("a distractor pool names exactly one source: `generator` or `corpus`")
        return self


class Fixture(Document):
    """The evidence one memory condition is handed, and how to prove it was there (see the module docstring)."""

    kind: Literal["fixture"] = "fixture"
    schema_version: Literal[1] = 1
    fixture_id: Name
    evidence_corpus: FixtureArtifact
    graph_arms: Annotated[tuple[GraphArm, ...], Field(min_length=1)]
    probes: Annotated[tuple[FixtureProbe, ...], Field(min_length=1)]
    memory_phrases: Annotated[tuple[Annotated[str, StringConstraints(min_length=4)], ...], Field(min_length=1)]
    # Extra source-corpus paths to remove before any arm sees the tree; applied by bench.packaging.redact only.
    redact_paths: tuple[PortablePath, ...] = ()
    distractors: DistractorPool | None = None
    retrieval_k: Annotated[tuple[Annotated[int, Field(ge=1, le=50)], ...], Field(min_length=1)] = (3,)

    @model_validator(mode="after")
    def _names_unique(self) -> Fixture:
        for label, names in (
            ("graph arm", [a.name for a in self.graph_arms]),
            ("probe", [p.name for p in self.probes]),
        ):
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise ValueError(f"{label} names must be unique; repeated: {', '.join(duplicates)}")
        if len(set(self.retrieval_k)) != len(self.retrieval_k):
            raise ValueError(f"retrieval_k must name each depth once, got {list(self.retrieval_k)}")
        return self

    def pool_sizes(self, declared: tuple[int, ...] | None) -> tuple[int, ...]:
        """The pool sizes a suite runs: those it declares (each at most the pool's size), else the pool's size (0:
        no pool)."""
        most = 0 if self.distractors is None else self.distractors.size
        if declared is None:
            return (most,)
        larger = [size for size in declared if size > most]
        if larger:
            raise ContractError(
                f"fixture {self.fixture_id!r} pools at most {most} distractor document(s); the suite asks for "
                f"{larger}: lower the sizes or raise the fixture's `distractors.size`",
                field="pool_sizes",
                expected=most,
                actual=larger,
            )
        return declared

    def frozen_form(self) -> dict[str, object]:
        """What a preregistration freezes of the fixture: every field, except the noise and depth fields when the
        fixture never stated them, so a fixture written before they existed keeps the digest it was frozen with."""
        unstated = {"distractors", "retrieval_k"} - self.model_fields_set
        return self.model_dump(mode="json", exclude=unstated)

    def graph_arm(self, name: str) -> GraphArm:
        for arm in self.graph_arms:
            if arm.name == name:
                return arm
        known = ", ".join(a.name for a in self.graph_arms)
        raise ContractError(f"fixture {self.fixture_id!r} has no graph arm {name!r}; it declares: {known}")


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (Fixture,)


def load_fixture(root: Path) -> Fixture:
    """Read and validate ``<root>/fixture.json``; a missing or malformed manifest is an error naming the file."""
    return read_contract(root / FIXTURE_FILE, Fixture, "the fixture manifest", "pass the fixture root")


def check_expected_hits(fixture: Fixture, evidence: ArtifactRef) -> None:
    """Every probe's expected hits name documents of the (verified) evidence corpus; a typo is an error now, not a
    probe that can never pass."""
    corpus = Path(evidence.path)

    def held(hit: str) -> bool:  # asked per expected hit: a corpus with a large pool is never listed here
        return hit == corpus.name if corpus.is_file() else os.path.lexists(corpus / hit)

    for probe in fixture.probes:
        unknown = [hit for hit in probe.expected if not held(hit)]
        if unknown:
            raise ContractError(
                f"fixture {fixture.fixture_id!r} probe {probe.name!r} expects {', '.join(unknown)}, which the evidence "
                f"corpus {corpus} does not hold; fix the probe's expected hits"
            )


def verify_artifact(root: Path, artifact: FixtureArtifact) -> ArtifactRef:
    """Resolve ``artifact`` under ``root`` and check it, returning what a provisioner is handed.

    Refuses (each with its own reason) an artifact that is missing, whose resolved path or any symlink inside it
    leaves the fixture root, or whose SHA-256 differs from the manifest.
    """
    try:
        real_root = root.resolve(strict=True)
        target = (real_root / artifact.path).resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise ProvisionRefused(
            RefusalReason.ARTIFACT_MISSING,
            f"fixture artifact {artifact.path!r} does not exist under {root} ({exc}); add it or fix the manifest",
        ) from exc
    _check_inside(real_root, target, artifact.path)
    actual = artifact_sha256(target, real_root)
    if actual != artifact.sha256:
        raise ProvisionRefused(
            RefusalReason.ARTIFACT_SHA256_MISMATCH,
            f"fixture artifact {artifact.path!r} has SHA-256 {actual}, the manifest pins {artifact.sha256}; "
            "the artifact changed after it was frozen: restore it, or re-freeze the fixture as a new version",
        )
    return ArtifactRef(path=str(target), sha256=Sha256(actual))


def artifact_sha256(path: Path, root: Path | None = None) -> str:
    """SHA-256 of a file's bytes, or of a directory's listing (see the module docstring).

    With ``root``, a symlink inside a directory whose target resolves outside ``root`` is refused.
    """
    if not path.is_dir():  # a file: a FIFO, a device or a symlink loop is refused naming it
        return _file_sha256(path)
    lines: list[str] = []
    # Plain strings, not Path objects, per entry: a pool of thousands of documents is listed on every restore.
    prefix = len(os.path.join(path, ""))
    for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = full[prefix:].replace(os.sep, "/")
            kind, digest = _entry(full, root, rel)
            lines.append(f"{kind}\t{digest}\t{rel}\n")
    lines.sort(key=lambda line: line.split("\t", 2)[2])
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def _entry(full: str, root: Path | None, rel: str) -> tuple[str, str]:
    mode = os.lstat(full).st_mode
    if stat.S_ISLNK(mode):
        if root is not None:
            _check_inside(root, resolved(Path(full), "artifact entry"), rel)
        return "symlink", hashlib.sha256(os.fsencode(os.readlink(full))).hexdigest()
    if stat.S_ISDIR(mode):
        return "directory", _NO_DIGEST
    if stat.S_ISREG(mode):
        return ("executable" if mode & 0o111 else "file"), _file_sha256(full)
    raise ContractError(f"artifact entry {rel!r} is neither a file, a directory nor a symlink; remove it")


def _check_inside(root: Path, resolved: Path, label: str) -> None:
    if not resolved.is_relative_to(root):
        raise ProvisionRefused(
            RefusalReason.ARTIFACT_ESCAPES_ROOT,
            f"fixture artifact {label!r} resolves to {resolved}, outside the fixture root {root}; "
            "artifacts (and symlinks inside them) must stay inside the fixture root",
        )


def _file_sha256(path: Path | str) -> str:
    digest = hashlib.sha256()
    with opened_regular(Path(path), "artifact") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
