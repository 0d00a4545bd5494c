"""A publication bundle on disk: its layout, its file listing and its typed contents.

Layout (every file except ``MANIFEST.json`` is covered by the manifest)::

    records/<hex>.json              one PairedAttempt per file, named by its digest's hex
    admissions/<hex>.json           the AdmissionDecision about records/<hex>.json
    manifests/<challenge>/v<N>.json preregistrations
    receipts/statistics-summary.json (and the stages' receipts, receipts/<challenge>/...)
    receipts/lineage.json           every action below the records and the report (PublicationLineage)
    objects/<hex>[.json]            every object those actions read or wrote, by digest (.json: a document)
    report/index.html, report/attempts/<challenge>-<attempt>.html
    MANIFEST.json, provenance.intoto.json, provenance.dsse.json (the publisher's signature of the statement): the
                                    files the manifest does not cover

A directory is a bundle only when it has this layout and at least one record (:func:`check_layout`): publication
and verification refuse anything else rather than manifest whatever happens to be there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from ..analysis import AdmissionDecision, PairedAttempt, Preregistration
from ..contracts import Digest, PortablePath
from ..contracts.files import parse_contract
from ..errors import ContractError
from ..store.trees import EntryKind, list_directory, read_regular_file
from .manifest import MANIFEST_NAME
from .signing import SIGNATURE_NAME

__all__ = [
    "ADMISSIONS",
    "ATTEMPT_PAGES",
    "MANIFESTS",
    "OBJECTS",
    "PROVENANCE_NAME",
    "RECORDS",
    "REPORT_PATH",
    "SUMMARY_PATH",
    "BundleError",
    "bundle_files",
    "bundle_paths",
    "check_layout",
    "load_admissions",
    "load_bundled_preregistrations",
    "load_records",
    "parse_document",
    "read_bundle_file",
]

RECORDS = "records"
ADMISSIONS = "admissions"
MANIFESTS = "manifests"
OBJECTS = "objects"
PROVENANCE_NAME = "provenance.intoto.json"
SUMMARY_PATH = PortablePath("receipts/statistics-summary.json")
REPORT_PATH = PortablePath("report/index.html")
ATTEMPT_PAGES = "report/attempts"  # <challenge>-<attempt>.html, linked from the report
FOLDERS = (RECORDS, ADMISSIONS, MANIFESTS, "receipts", "report", OBJECTS)
ROOT_FILES = (MANIFEST_NAME, PROVENANCE_NAME, SIGNATURE_NAME)  # beside the files they describe, not covered
_FILE, _DIRECTORY = EntryKind.FILE, EntryKind.DIRECTORY

Model = TypeVar("Model", bound=BaseModel)


class BundleError(ContractError):
    """The bundle's layout or a file in it is not what publication expects; ``path`` names the file."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}", path=path)


def bundle_files(root: Path) -> dict[PortablePath, bytes]:
    """Every regular file under ``root`` except the manifest, by portable path. Links and devices are refused."""
    return dict(iter_bundle_files(root))


def iter_bundle_files(
    root: Path, listed: Mapping[str, PortablePath] | None = None
) -> Iterator[tuple[PortablePath, bytes]]:
    """:func:`bundle_files` one file at a time, in path order: only one file's bytes are held at once. ``listed``:
    the manifest's paths, each mapped to itself (checked already; see :func:`list_directory`)."""
    for path, where in bundle_paths(root, listed):
        yield path, read_bundle_file(root, where)


def bundle_paths(root: Path, listed: Mapping[str, PortablePath] | None = None) -> Iterator[tuple[PortablePath, str]]:
    """Each file of the bundle at ``root`` (every regular file but the two beside the manifest's) in path order,
    with its path on this machine; nothing is read. Links and devices are refused."""
    if not root.is_dir():
        raise BundleError(str(root), "is not a directory; pass a bundle directory")
    try:
        for path, kind, where in list_directory(root, listed):
            if kind is _FILE:
                if path not in ROOT_FILES:
                    yield path, where
            elif kind is not _DIRECTORY:
                raise BundleError(path, f"in {root} is not a regular file; a bundle holds only files and folders")
    except OSError as exc:
        raise _unreadable(root, exc) from exc


def read_bundle_file(root: Path, where: str) -> bytes:
    """The bytes of the bundle file at ``where`` (listed by :func:`bundle_paths`)."""
    try:
        return read_regular_file(where)[1]
    except OSError as exc:
        raise _unreadable(root, exc) from exc


def _unreadable(root: Path, exc: OSError) -> BundleError:
    """Unreadable, or removed while the bundle is read: a refusal, not a traceback."""
    return BundleError(str(exc.filename or root), f"cannot be read ({exc.strerror}); check the bundle")


def check_layout(paths: Iterable[PortablePath], where: str) -> None:
    """Refuse what is not a bundle: a file outside its folders, or no record at all (an empty directory)."""
    listed = sorted(paths)
    stray = [path for path in listed if len(path.parts) < 2 or path.parts[0] not in FOLDERS]
    if stray:
        raise BundleError(
            stray[0],
            f"is outside a bundle's layout ({len(stray)} such file(s) in {where}); a bundle holds only "
            f"{', '.join(folder + '/' for folder in FOLDERS)} and {MANIFEST_NAME}: move it out or pass the bundle",
        )
    if not any(path.parts[0] == RECORDS for path in listed):
        raise BundleError(
            where,
            f"holds no {RECORDS}/: it is not a publication bundle; pass the directory the bundle stage exported",
        )


def parse_document(path: str, data: bytes, model: type[Model]) -> Model:
    """A bundle file read strictly (repeated keys, NaN and the like refused) through its contract."""
    try:
        return parse_contract(data, model, path)
    except ContractError as exc:
        raise BundleError(path, exc.message.removeprefix(f"{path} ")) from None


def _in_folder(files: Mapping[PortablePath, bytes], folder: str) -> dict[PortablePath, bytes]:
    return {p: data for p, data in files.items() if p.parts[0] == folder}


def load_records(files: Mapping[PortablePath, bytes]) -> dict[Digest, tuple[PortablePath, PairedAttempt]]:
    """Records by the digest of their file bytes; each file must be named by that digest."""
    records: dict[Digest, tuple[PortablePath, PairedAttempt]] = {}
    for path, data in _in_folder(files, RECORDS).items():
        digest = Digest.of(data)
        if path != f"{RECORDS}/{digest.hex}.json":
            raise BundleError(path, f"holds record {digest}; name it {RECORDS}/{digest.hex}.json")
        records[digest] = (path, parse_document(path, data, PairedAttempt))
    return records


def load_admissions(files: Mapping[PortablePath, bytes]) -> dict[PortablePath, AdmissionDecision]:
    return {path: parse_document(path, data, AdmissionDecision) for path, data in _in_folder(files, ADMISSIONS).items()}


def load_bundled_preregistrations(files: Mapping[PortablePath, bytes]) -> list[Preregistration]:
    """The preregistrations the records ran under, ``manifests/<challenge>/v<N>.json``, each where it belongs."""
    found = []
    for path, data in sorted(_in_folder(files, MANIFESTS).items()):
        prereg = parse_document(path, data, Preregistration)
        expected = f"{MANIFESTS}/{prereg.challenge}/v{prereg.version}.json"
        if path != expected:
            raise BundleError(path, f"holds {prereg.challenge} v{prereg.version}; name it {expected}")
        found.append(prereg)
    return found
