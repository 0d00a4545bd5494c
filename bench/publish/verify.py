"""Verification of a published bundle, from the bundle alone: re-hash every file, then re-run its lineage.

1. The hashing pass: every file against the manifest, and every ``objects/`` file against its own name.
2. The in-toto statement is rebuilt from the files and compared byte for byte.
3. Every file goes into an in-memory store by its content, and each action ``receipts/lineage.json`` lists is
   looked up in the stage catalogue. A deterministic action whose inputs are documents and blobs (grade,
   paired-record, admit, analyze, report, view) is *re-derived*: the same stage code runs on the recorded inputs
   and params, and its outputs must be the recorded ones. Any other action is *attested*: a container run
   (observed) is never re-run, and a stage that reads whole trees (corpus, redact, certify, audit) would need
   the project's files, which a bundle carries only as listings; its outputs are in the bundle by digest.
4. Every named file (records, admissions, receipts, the report) must be the output of an action listed.

A difference names the file, the stage that reads or wrote it, and for a re-derivation the first differing
field. Nothing here needs the store, Docker or the network: ``verify`` works on a copy of the bundle anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..contracts import Digest, PortablePath, TreeDigest
from ..contracts.files import collection_paused
from ..errors import BenchError
from ..stages import Stage, StageContext, StageKind
from ..stages.catalogue import Catalogue
from ..store import Store
from ..store.actions import ActionKey, ActionResult
from ..store.references import references
from .bundle import OBJECTS, PROVENANCE_NAME, bundle_files, check_layout
from .difference import first_difference
from .filedigests import BundleDigests
from .manifest import LINEAGE_PATH, PublicationManifest, PublishedAction, read_manifest
from .provenance import read_lineage, statement_bytes

__all__ = ["Claim", "ClaimKind", "Difference", "Verification", "rehash", "verify"]

DERIVED = ("receipts", "report")  # folders whose every file some action wrote


@dataclass(frozen=True)
class Difference:
    """A file whose recorded digest is not what re-hashing or re-deriving gives (None: absent or unknown)."""

    path: str
    recorded: Digest | None
    actual: Digest | None
    how: str  # "re-hashed", "re-derived", "rebuilt" or "named"
    lineage: tuple[str, ...]

    def __str__(self) -> str:
        recorded = self.recorded or "(not in the manifest)"
        actual = self.actual or "(missing)"
        head = f"{self.path}: recorded {recorded}, {self.how} {actual}"
        return "\n".join([head, *(f"  {line}" for line in self.lineage)])


class ClaimKind(StrEnum):
    REDERIVED = "re-derived"
    ATTESTED = "attested"


@dataclass(frozen=True)
class Claim:
    """One action of the lineage and how verification stood behind it."""

    stage: str
    action: Digest
    kind: ClaimKind


@dataclass(frozen=True)
class Verification:
    differences: list[Difference]
    claims: list[Claim]

    @property
    def verified(self) -> bool:
        return not self.differences

    def counts(self) -> dict[ClaimKind, dict[str, int]]:
        counted: dict[ClaimKind, dict[str, int]] = {kind: {} for kind in ClaimKind}
        for claim in self.claims:
            counted[claim.kind][claim.stage] = counted[claim.kind].get(claim.stage, 0) + 1
        return counted


def rehash(manifest: PublicationManifest, files: BundleDigests) -> list[Difference]:
    """The hashing pass: every file of the bundle re-hashed (``files``, entered before ``manifest`` was read, so
    the hashing began meanwhile) against ``manifest``. In this order: each listed file that differs or is missing
    (in the manifest's order), each file the manifest does not list, and each ``objects/`` file not named by its
    digest (both by path)."""
    with collection_paused():  # an object or two per file, no cycles: see collection_paused
        listed: dict[str, PortablePath] = {entry.path: entry.path for entry in manifest.files}
        actual = files.digests(listed)
        differences = [
            Difference(entry.path, entry.digest, actual.get(entry.path), "re-hashed", ())
            for entry in manifest.files
            if actual.get(entry.path) != entry.digest
        ]
        for path in sorted(actual.keys() - listed.keys()):
            differences.append(Difference(path, None, actual[path], "re-hashed", ("not covered by the manifest",)))
        objects = sorted(path for path in actual if path.partition("/")[0] == OBJECTS)
        for path in objects:
            if path.rpartition("/")[2].removesuffix(".json") != actual[path].hex:
                trail = ("an object not named by its digest",)
                differences.append(Difference(path, None, actual[path], "re-hashed", trail))
        return differences


def _rederivable(stage: Stage[Any, Any, Any], spec: ActionKey) -> bool:
    """Deterministic, reads no tree (a bundle holds listings, not files) and no locator (an outside input)."""
    if stage.kind is not StageKind.DETERMINISTIC or not spec.inputs:
        return False
    ports = stage.inputs.ports()
    return not any(issubclass(ports[name.split("/", 1)[0]].kind, TreeDigest) for name in spec.inputs)


class _Lineage:
    """The bundle's files as a store, and which actions read and wrote each digest."""

    def __init__(self, files: Mapping[PortablePath, bytes]) -> None:
        self.store = Store.in_memory()
        self.paths: dict[Digest, PortablePath] = {}
        with self.store.batch():
            for path, data in files.items():
                self.paths.setdefault(self.store.put_bytes(data, document=path.endswith(".json")), path)
        self.present = set(self.paths)
        self._referrers: dict[Digest, list[Digest]] | None = None
        self.actions: list[tuple[PublishedAction, ActionKey, ActionResult]] = []
        self.missing: list[Difference] = []
        for action in read_lineage(files).actions:
            found = self._documents(action)
            if found is not None:
                self.actions.append((action, *found))

    def _documents(self, action: PublishedAction) -> tuple[ActionKey, ActionResult] | None:
        for digest in (action.key, action.result):
            if digest not in self.present:
                trail = (f"the {action.stage} action's key and result must both be in {OBJECTS}/",)
                self.missing.append(Difference(f"{OBJECTS}/{digest.hex}.json", digest, None, "named", trail))
                return None
        spec = self.store.get_document(action.key, ActionKey)
        outcome = self.store.get_document(action.result, ActionResult)
        if spec.stage != action.stage or outcome.key != action.key:
            trail = (f"the lineage lists it as a {action.stage} result of {action.key}",)
            self.missing.append(Difference(self.where(action.result), action.result, None, "named", trail))
            return None
        return spec, outcome

    def where(self, digest: Digest) -> str:
        return self.paths.get(digest) or f"{OBJECTS}/{digest.hex}"

    def _direct(self, digest: Digest) -> list[str]:
        lines = []
        for action, spec, outcome in self.actions:
            read = [name for name, value in spec.inputs.items() if value == digest]
            wrote = [name for name, value in outcome.outputs.items() if value == digest]
            lines += [f"read by {action.stage} as {name} (action {action.key.short})" for name in read]
            lines += [f"written by {action.stage} as {name} (action {action.key.short})" for name in wrote]
        return lines

    def _named_by(self) -> dict[Digest, list[Digest]]:
        """Which documents of the bundle name each digest (made once, when a difference needs it)."""
        if self._referrers is None:
            self._referrers = {}
            for digest in self.paths:
                try:
                    named = set(references(self.store, digest))  # none for a blob
                except ValueError:  # a .json file that is not JSON (altered): it names nothing
                    continue
                for target in named:
                    self._referrers.setdefault(target, []).append(digest)
        return self._referrers

    def roles(self, digest: Digest) -> tuple[str, ...]:
        """Which actions read and wrote ``digest``, or read a document that names it (a session file is named by
        its arm record, which grade reads): how a difference in one file reaches the claims."""
        direct = self._direct(digest)
        if direct:
            return tuple(direct)
        lines: list[str] = []
        seen, frontier = {digest}, [digest]
        while frontier and not lines:
            frontier = sorted({r for d in frontier for r in self._named_by().get(d, [])} - seen)
            seen.update(frontier)
            for referrer in frontier:
                lines += [f"{line} via {self.where(referrer)}" for line in self._direct(referrer)]
        return tuple(lines)


def _absent(lineage: _Lineage, action: PublishedAction, spec: ActionKey, outcome: ActionResult) -> list[Difference]:
    """Every input and output of an action that the bundle does not hold."""
    sides = (("input", spec.inputs), ("output", outcome.outputs))
    return [
        Difference(lineage.where(digest), digest, None, "named", (f"the {side} {name} of {action.stage}",))
        for side, ports in sides
        for name, digest in ports.items()
        if digest not in lineage.present
    ]


def _rederive(
    lineage: _Lineage, stage: Stage[Any, Any, Any], action: PublishedAction, spec: ActionKey, outcome: ActionResult
) -> list[Difference]:
    head = f"stage {action.stage} (action {action.key.short})"
    if spec.stage_version != stage.version:
        trail: tuple[str, ...] = (
            f"{head}: derived by v{spec.stage_version}, this code is v{stage.version}; verify with its release",
        )
        return [Difference(lineage.where(action.result), action.result, None, "re-derived", trail)]
    try:
        context = StageContext(lineage.store)
        derived = stage.run(context, stage.parse_inputs(spec.inputs), stage.parse_params(spec.params)).flat()
    except (BenchError, ValueError) as exc:
        first = next(iter(outcome.outputs.values()), action.result)
        return [Difference(lineage.where(first), first, None, "re-derived", (f"{head}: could not re-run: {exc}",))]
    differences = []
    for name in sorted(outcome.outputs.keys() | derived.keys()):
        recorded, actual = outcome.outputs.get(name), derived.get(name)
        if recorded == actual:
            continue
        field = first_difference(
            lineage.store.get_bytes(recorded) if recorded in lineage.present else None,
            lineage.store.get_bytes(actual) if actual else None,
        )
        where = lineage.where(recorded) if recorded else name
        trail = (f"{head}: output {name}: {field}", *lineage.roles(recorded or actual or action.key))
        differences.append(Difference(where, recorded, actual, "re-derived", trail))
    return differences


def _rerun(lineage: _Lineage, catalogue: Catalogue) -> tuple[list[Difference], list[Claim]]:
    differences: list[Difference] = list(lineage.missing)
    claims: list[Claim] = []
    for action, spec, outcome in lineage.actions:
        absent = _absent(lineage, action, spec, outcome)
        differences += absent
        try:
            stage = catalogue.get(action.stage)
        except BenchError as exc:
            differences.append(Difference(lineage.where(action.key), action.key, None, "named", (str(exc),)))
            continue
        if not _rederivable(stage, spec):
            claims.append(Claim(action.stage, action.key, ClaimKind.ATTESTED))
        elif not absent:
            claims.append(Claim(action.stage, action.key, ClaimKind.REDERIVED))
            differences += _rederive(lineage, stage, action, spec, outcome)
    return differences, claims


def _named(lineage: _Lineage, files: Mapping[PortablePath, bytes]) -> list[Difference]:
    """Every derived file (receipts, the report) is some listed action's output. Records, admissions and
    preregistrations may be sources: a bundle assembled by hand has no action behind its records."""
    written = {digest for _, _, outcome in lineage.actions for digest in outcome.outputs.values()}
    return [
        Difference(path, digest, None, "named", ("is the output of no action the lineage lists",))
        for digest, path in sorted(lineage.paths.items(), key=lambda item: item[1])
        if path.parts[0] in DERIVED and path != LINEAGE_PATH and digest not in written
    ]


def _provenance(root: Path, files: Mapping[PortablePath, bytes]) -> list[Difference]:
    path = root / PROVENANCE_NAME
    expected = statement_bytes(files)
    actual = path.read_bytes() if path.is_file() else None
    if actual == expected:
        return []
    found = Digest.of(actual) if actual is not None else None
    trail: tuple[str, ...] = ("the in-toto statement must list every file the manifest covers, with its digests",)
    return [Difference(PROVENANCE_NAME, Digest.of(expected), found, "rebuilt", trail)]


def verify(manifest_path: Path, catalogue: Catalogue) -> Verification:
    """Every difference between the manifest and the bundle beside it, and each claim's standing."""
    root = manifest_path.parent
    with BundleDigests(root) as hashing:  # a forked process begins re-hashing while the manifest is read
        manifest = read_manifest(manifest_path)
        check_layout([entry.path for entry in manifest.files], str(manifest_path))
        hashed = rehash(manifest, hashing)
    files = bundle_files(root)
    lineage = _Lineage(files)
    rerun, claims = _rerun(lineage, catalogue)
    hashed = [replace(d, lineage=d.lineage + lineage.roles(d.recorded)) if d.recorded else d for d in hashed]
    return Verification(hashed + rerun + _named(lineage, files) + _provenance(root, files), claims)
