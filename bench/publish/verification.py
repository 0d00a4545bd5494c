"""Verification of a published bundle, from the bundle alone: re-hash, rebuild, check the run's shape, re-run, and
check the signature that what cannot be re-run rests on.

1. The hashing pass: every file against the manifest, and every ``objects/`` file against its own name.
2. The in-toto statement is rebuilt from the files and compared byte for byte.
3. The signature: the DSSE envelope's payload is that statement, signed by a key given with ``--trust``. Without
   it, only ``--unsigned`` verifies, and says that nothing rests on a signature.
4. The bundle is exactly its run (:mod:`.completeness`): every file is an input or output of a listed action or
   an object one brings (no extras anywhere, ``manifests/`` included), the lineage is closed from the suite's
   inputs and the commit to the report, and records and admissions are bound to their names and actions.
5. Every file goes into an in-memory store by its content, and each action ``receipts/lineage.json`` lists is
   looked up in the stage catalogue. A deterministic action whose inputs are documents, blobs, or trees it reads
   only as listings (redact, audit: a bundle carries every listing) is *re-derived*: the same stage code runs on
   the recorded inputs and params, and its outputs must be the recorded ones. Any other action is *attested*: a
   container run (observed) is never re-run, and a stage that reads files (corpus, certify) would need the
   project's files; it rests on the signature, except what its stage declares re-derivable from its outputs
   (a pair's spec-diff from its arms' container specs), which is *cross-checked*.

A difference names the file, the stage that reads or wrote it, and for a re-derivation the first differing
field. Nothing here needs the store, Docker or the network: ``verify`` works on a copy of the bundle anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..builder import Stage, StageContext
from ..builder.catalogue import Catalogue
from ..builder.lineage import rederivable, rerun
from ..contracts import Digest, PortablePath
from ..contracts.files import collection_paused
from ..errors import BenchError
from ..store.actions import ActionKey, ActionResult
from ..store.references import references
from .bundle_layout import OBJECTS, PROVENANCE_NAME, bundle_files, check_layout
from .bundle_store import BundleStore
from .completeness import Finding, Listed, bound, closed, complete, supplied_by
from .difference import first_difference
from .filedigests import BundleDigests
from .judged_beside import Files, JudgedBeside
from .manifest import PublicationManifest, PublishedAction, read_manifest
from .provenance import read_lineage, statement_bytes
from .signing import SIGNATURE_NAME, PublicKey, key_id, read_envelope, signed_by

__all__ = ["Claim", "ClaimKind", "Difference", "Signature", "Trust", "Verification", "rehash", "verify"]


_SAID = ("run", "signed", "cross-checked")  # differences whose first trail line says what is wrong


@dataclass(frozen=True)
class Difference:
    """A file whose recorded digest is not what re-hashing or re-deriving gives (None: absent or unknown)."""

    path: str
    recorded: Digest | None
    actual: Digest | None
    how: str  # "re-hashed", "re-derived", "rebuilt", "named", "cross-checked", "signed" or "run" (its shape)
    lineage: tuple[str, ...]

    def __str__(self) -> str:
        if self.how in _SAID:  # no digest to compare: what is wrong is said in the first line of the trail
            head, trail = f"{self.path}: {self.lineage[0]}", self.lineage[1:]
        else:
            recorded = self.recorded or "(not in the manifest)"
            head, trail = f"{self.path}: recorded {recorded}, {self.how} {self.actual or '(missing)'}", self.lineage
        return "\n".join([head, *(f"  {line}" for line in trail)])


class ClaimKind(StrEnum):
    REDERIVED = "re-derived"
    ATTESTED = "attested"


@dataclass(frozen=True)
class Claim:
    """One action of the lineage and how verification stood behind it."""

    stage: str
    action: Digest
    kind: ClaimKind
    cross_checked: bool = False  # attested, with part of its outputs re-derived from the bundle


@dataclass(frozen=True)
class Trust:
    """What verification accepts as the publisher's signature: a key given, or (``unsigned``) none at all."""

    keys: tuple[PublicKey, ...] = ()
    unsigned: bool = False


@dataclass(frozen=True)
class Signature:
    """Who signed the bundle, as verified: a trusted key's id, or None (unsigned, accepted by ``--unsigned``)."""

    signer: str | None
    present: bool  # the bundle carries an envelope (checked or not)
    checked: bool = False  # keys were given to check it against (None as signer: it did not hold for any)


@dataclass(frozen=True)
class Verification:
    differences: list[Difference]
    claims: list[Claim]
    signature: Signature

    @property
    def verified(self) -> bool:
        return not self.differences

    def counts(self) -> dict[ClaimKind, dict[str, int]]:
        counted: dict[ClaimKind, dict[str, int]] = {kind: {} for kind in ClaimKind}
        for claim in self.claims:
            counted[claim.kind][claim.stage] = counted[claim.kind].get(claim.stage, 0) + 1
        return counted

    def cross_checked(self) -> dict[str, int]:
        counted: dict[str, int] = {}
        for claim in self.claims:
            if claim.cross_checked:
                counted[claim.stage] = counted.get(claim.stage, 0) + 1
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


class _Lineage:
    """The bundle's files as a store, and which actions read and wrote each digest."""

    def __init__(self, files: Mapping[PortablePath, bytes]) -> None:
        self.store = BundleStore()  # verify adds re-derived outputs, deletes nothing
        self.paths: dict[Digest, list[PortablePath]] = {}
        with self.store.batch():
            for path, data in files.items():
                self.paths.setdefault(self.store.put_bytes(data, document=path.endswith(".json")), []).append(path)
        self.present = set(self.paths)
        self._referrers: dict[Digest, list[Digest]] | None = None
        self.actions: list[Listed] = []
        self.missing: list[Difference] = []
        for action in read_lineage(files).actions:
            found = self._documents(action)
            if found is not None:
                self.actions.append(Listed(action, *found))

    def _documents(self, action: PublishedAction) -> tuple[ActionKey, ActionResult] | None:
        for digest in (action.key, action.result):
            if digest not in self.present:
                trail = (f"the {action.stage} action's key and result must both be in {OBJECTS}/",)
                self.missing.append(Difference(f"{OBJECTS}/{digest.hex}.json", digest, None, "named", trail))
                return None
        try:
            spec = self.store.get_document(action.key, ActionKey)
            outcome = self.store.get_document(action.result, ActionResult)
        except BenchError as exc:  # an altered key or result: re-hashing names it; here, why it cannot be read
            self.missing.append(Difference(self.where(action.result), action.result, None, "named", (str(exc),)))
            return None
        if spec.stage != action.stage or outcome.key != action.key:
            trail = (f"the lineage lists it as a {action.stage} result of {action.key}",)
            self.missing.append(Difference(self.where(action.result), action.result, None, "named", trail))
            return None
        return spec, outcome

    def identity(self) -> Digest:
        """The files read, by path and digest: what two readings of one bundle must agree on."""
        listing = sorted(f"{path} {digest}" for digest, paths in self.paths.items() for path in paths)
        return Digest.of("\n".join(listing).encode("utf-8"))

    def where(self, digest: Digest) -> str:
        paths = self.paths.get(digest)
        return paths[0] if paths else f"{OBJECTS}/{digest.hex}"

    def _direct(self, digest: Digest) -> list[str]:
        lines = []
        for item in self.actions:
            read = [name for name, value in item.spec.inputs.items() if value == digest]
            wrote = [name for name, value in item.outcome.outputs.items() if value == digest]
            lines += [f"read by {item.action.stage} as {name} (action {item.action.key.short})" for name in read]
            lines += [f"written by {item.action.stage} as {name} (action {item.action.key.short})" for name in wrote]
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

    def difference(self, finding: Finding) -> Difference:
        """A shape finding (:mod:`.completeness`) as a difference, placed at its file."""
        path = finding.path or (self.where(finding.digest) if finding.digest else "(bundle)")
        actual = finding.digest if finding.digest in self.present else None
        trail = (finding.why, *(self.roles(finding.digest) if finding.digest else ()))
        return Difference(path, finding.digest, actual, "run", trail)


def _absent(lineage: _Lineage, item: Listed) -> list[Difference]:
    """Every input and output of an action that the bundle does not hold."""
    sides = (("input", item.spec.inputs), ("output", item.outcome.outputs))
    return [
        Difference(lineage.where(digest), digest, None, "named", (f"the {side} {name} of {item.action.stage}",))
        for side, ports in sides
        for name, digest in ports.items()
        if digest not in lineage.present
    ]


def _rederive(lineage: _Lineage, stage: Stage[Any, Any, Any], item: Listed) -> list[Difference]:
    action, spec, outcome = item.action, item.spec, item.outcome
    head = f"stage {action.stage} (action {action.key.short})"
    if spec.stage_version != stage.version:
        trail: tuple[str, ...] = (
            f"{head}: derived by v{spec.stage_version}, this code is v{stage.version}; verify with its release",
        )
        return [Difference(lineage.where(action.result), action.result, None, "re-derived", trail)]
    try:
        rederived = rerun(StageContext(lineage.store), stage, spec, outcome)
    except (BenchError, ValueError) as exc:
        first = next(iter(outcome.outputs.values()), action.result)
        return [Difference(lineage.where(first), first, None, "re-derived", (f"{head}: could not re-run: {exc}",))]
    differences = []
    for name, (recorded, actual) in rederived.differing.items():
        field = first_difference(
            lineage.store.get_bytes(recorded) if recorded in lineage.present else None,
            lineage.store.get_bytes(actual) if actual else None,
        )
        where = lineage.where(recorded) if recorded else name
        trail = (f"{head}: output {name}: {field}", *lineage.roles(recorded or actual or action.key))
        differences.append(Difference(where, recorded, actual, "re-derived", trail))
    return differences


def _cross_check(lineage: _Lineage, stage: Stage[Any, Any, Any], item: Listed) -> list[Difference]:
    """What an attested stage declares re-derivable from its outputs, checked (its stage's ``checks``)."""
    assert stage.checks is not None
    found = stage.checks(lineage.store, item.outcome.outputs)
    where = lineage.where(item.action.result)
    return [
        Difference(where, item.action.result, None, "cross-checked", (f"{item.action.stage}: {line}",))
        for line in found
    ]


def _rerun(lineage: _Lineage, catalogue: Catalogue) -> tuple[list[Difference], list[Claim]]:
    differences: list[Difference] = list(lineage.missing)
    claims: list[Claim] = []
    for item in lineage.actions:
        absent = _absent(lineage, item)
        differences += absent
        try:
            stage = catalogue.get(item.action.stage)
        except BenchError as exc:
            differences.append(Difference(lineage.where(item.action.key), item.action.key, None, "named", (str(exc),)))
            continue
        if not rederivable(stage, item.spec, listings_only=True):
            checked = stage.checks is not None and not absent
            claims.append(Claim(item.action.stage, item.action.key, ClaimKind.ATTESTED, cross_checked=checked))
            if checked:
                differences += _cross_check(lineage, stage, item)
        elif not absent:
            claims.append(Claim(item.action.stage, item.action.key, ClaimKind.REDERIVED))
            differences += _rederive(lineage, stage, item)
    return differences, claims


def _judged_shape(files: Files, catalogue: Catalogue) -> tuple[Digest, list[Difference]]:
    """The shape of the bundle as delivered (read into a store of its own, before any re-derivation adds to it)."""
    lineage = _Lineage(files)
    return lineage.identity(), _shape(lineage, files, catalogue)


def _shape(lineage: _Lineage, files: Mapping[PortablePath, bytes], catalogue: Catalogue) -> list[Difference]:
    """The bundle is exactly its run: complete, closed and bound (:mod:`.completeness`)."""
    named = {digest for digest, paths in lineage.paths.items() if any(p.parts[0] != OBJECTS for p in paths)}
    findings = complete(lineage.store, lineage.paths, lineage.actions)
    findings += closed(lineage.actions, named, supplied_by(catalogue.get))
    findings += bound(files, lineage.actions)
    return [lineage.difference(finding) for finding in findings]


def _provenance(root: Path, files: Mapping[PortablePath, bytes]) -> tuple[bytes, list[Difference]]:
    path = root / PROVENANCE_NAME
    expected = statement_bytes(files)
    actual = path.read_bytes() if path.is_file() else None
    if actual == expected:
        return expected, []
    found = Digest.of(actual) if actual is not None else None
    trail: tuple[str, ...] = ("the in-toto statement must list every file the manifest covers, with its digests",)
    return expected, [Difference(PROVENANCE_NAME, Digest.of(expected), found, "rebuilt", trail)]


def _signature(root: Path, statement: bytes, trust: Trust) -> tuple[Signature, list[Difference]]:
    """The envelope's payload is the rebuilt statement, signed by a trusted key; or ``--unsigned`` asked for none."""
    path = root / SIGNATURE_NAME
    if not path.is_file():
        if trust.unsigned:
            return Signature(None, present=False), []
        why = "the bundle is unsigned: verify it with --unsigned, and nothing attested rests on a signature"
        return Signature(None, present=False), [Difference(SIGNATURE_NAME, None, None, "signed", (why,))]
    if trust.unsigned and not trust.keys:
        return Signature(None, present=True), []  # asked not to check: said so by the command
    data = path.read_bytes()
    try:
        envelope = read_envelope(data)
        payload = envelope.statement()
    except BenchError as exc:
        return Signature(None, present=True), [Difference(SIGNATURE_NAME, None, Digest.of(data), "signed", (str(exc),))]
    if payload != statement:
        why = "the envelope signs another statement than the one these files make"
        return Signature(None, present=True), [
            Difference(SIGNATURE_NAME, Digest.of(payload), Digest.of(statement), "signed", (why,))
        ]
    signer = signed_by(envelope, list(trust.keys))
    if signer is None:
        ids = ", ".join(signature.keyid[:16] for signature in envelope.signatures)
        trusted = ", ".join(key_id(key)[:16] for key in trust.keys) or "none (pass --trust PUBKEY)"
        why = f"signed by key {ids}, which is not a trusted key ({trusted}) or whose signature does not hold"
        return Signature(None, present=True, checked=True), [
            Difference(SIGNATURE_NAME, None, Digest.of(data), "signed", (why,))
        ]
    return Signature(signer, present=True, checked=True), []


def verify(manifest_path: Path, catalogue: Catalogue, trust: Trust) -> Verification:
    """Every difference between the manifest and the bundle beside it, and each claim's standing."""
    root = manifest_path.parent
    # Forked processes begin checking the bundle's shape and re-hashing its files while the manifest is read here.
    shaping = JudgedBeside(root, "the bundle's shape", lambda files: _judged_shape(files, catalogue))
    with shaping, BundleDigests(root) as hashing:
        manifest = read_manifest(manifest_path)
        check_layout([entry.path for entry in manifest.files], str(manifest_path))
        hashed = rehash(manifest, hashing)
        files = bundle_files(root)
        statement, rebuilt = _provenance(root, files)
        signature, signed = _signature(root, statement, trust)
        lineage = _Lineage(files)
        shaping.here(files)  # where nothing was forked: judged now, before re-deriving
        rerun, claims = _rerun(lineage, catalogue)
        shape = shaping.found(lineage.identity())
    hashed = [replace(d, lineage=d.lineage + lineage.roles(d.recorded)) if d.recorded else d for d in hashed]
    return Verification(hashed + rebuilt + signed + shape + rerun, claims, signature)
