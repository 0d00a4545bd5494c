"""The bundle's standard provenance: an in-toto Statement (v1) with a SLSA Provenance v1 predicate.

Its subjects are every file the manifest covers, with their SHA-256 (what supply-chain tooling checks) and their
BLAKE3 (the manifest's digest). The predicate says how the files were made: the build type is a stele-bench
publication, the external parameters are the roots (records, admissions, the report), and the resolved
dependencies are the code digests of the stages the lineage names, one per stage and code version. Nothing in it
depends on the time or the machine, so the same bundle always has the same statement, and ``verify`` rebuilds
it and compares bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..contracts import Digest, PortablePath, canonical_json
from ..store.actions import ActionKey
from .bundle_layout import ADMISSIONS, OBJECTS, RECORDS, BundleError, parse_document
from .manifest import LINEAGE_PATH, PublicationLineage

__all__ = ["BUILD_TYPE", "PREDICATE_TYPE", "STATEMENT_TYPE", "read_lineage", "statement", "statement_bytes"]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/provenance/v1"
BUILD_TYPE = "https://github.com/stele-bench/stele-bench/publication/v1"
BUILDER_ID = "https://github.com/stele-bench/stele-bench/publish"


def read_lineage(files: Mapping[PortablePath, bytes]) -> PublicationLineage:
    """The bundle's lineage document; a bundle without one is refused (nothing could be re-derived)."""
    if LINEAGE_PATH not in files:
        raise BundleError(LINEAGE_PATH, "is missing: a bundle carries its lineage; publish it again")
    return parse_document(LINEAGE_PATH, files[LINEAGE_PATH], PublicationLineage)


def _dependencies(files: Mapping[PortablePath, bytes], lineage: PublicationLineage) -> list[dict[str, Any]]:
    """One resource per stage and code digest the lineage names, read from the actions' key documents."""
    pairs: set[tuple[str, Digest]] = set()
    for action in lineage.actions:
        path = PortablePath(f"{OBJECTS}/{action.key.hex}.json")
        if path not in files:
            raise BundleError(path, f"is missing: the key of a {action.stage} action the lineage lists")
        pairs.add((action.stage, parse_document(path, files[path], ActionKey).code))
    return [{"name": f"stage:{stage}", "digest": {"blake3": digest.hex}} for stage, digest in sorted(pairs)]


def statement(files: Mapping[PortablePath, bytes]) -> dict[str, Any]:
    """The in-toto Statement of a bundle's ``files`` (the manifest's files: every file but the two at its root)."""
    subjects = [
        {"name": path, "digest": {"sha256": hashlib.sha256(data).hexdigest(), "blake3": Digest.of(data).hex}}
        for path, data in sorted(files.items())
    ]
    lineage = read_lineage(files)
    roots = sorted(path for path in files if path.parts[0] in (RECORDS, ADMISSIONS))
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {"roots": roots, "actions": len(lineage.actions)},
                "resolvedDependencies": _dependencies(files, lineage),
            },
            "runDetails": {"builder": {"id": BUILDER_ID}},
        },
    }


def statement_bytes(files: Mapping[PortablePath, bytes]) -> bytes:
    return canonical_json(statement(files))
