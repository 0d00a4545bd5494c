"""The published bundle in the project, when it already is the store's published tree, and the superseded
versions beside it.

A no-op `demo` or `run` used to export and sign the whole bundle again (~1,100 identical files, a fifth of its
time). A bundle whose ``MANIFEST.json`` is byte for byte the tree's is verified where it is instead: `verify`
re-hashes every file against that manifest, refuses a file it does not list and rebuilds the statement the
signature covers, so a verified bundle in place holds exactly the tree's files, signed by the trusted key. One
that does not verify is exported anew, as before.
"""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..contracts import Digest, canonical_bytes
from ..publish.manifest import MANIFEST_NAME
from ..publish.release import sign
from ..store import Store, export_tree
from ..store.trees import EntryKind, read_tree
from ..store.versions import version_index

__all__ = ["export_versions", "manifest_in_place"]


def manifest_in_place(store: Store, tree: Digest, target: Path) -> bool:
    """``target`` is a directory whose ``MANIFEST.json`` has exactly the bytes of the one at the top of ``tree``."""
    listed = [entry for entry in read_tree(store, tree).entries if entry.name == MANIFEST_NAME]
    path = target / MANIFEST_NAME
    if len(listed) != 1 or listed[0].kind is not EntryKind.FILE or target.is_symlink() or not path.is_file():
        return False
    return path.read_bytes() == store.get_bytes(listed[0].digest)


def export_versions(store: Store, ref: str, target: Path, key: Ed25519PrivateKey | None) -> None:
    """Every superseded version of ``ref`` beside ``target``, ``<target>-versions/v<N>/`` (each written once, signed
    with ``key`` if given), and ``index.json`` listing them all: a re-grade never reinterprets a published bundle."""
    index = version_index(store, ref)
    kept = target.with_name(target.name + "-versions")
    for version in index.versions:
        if version.superseded and not (kept / f"v{version.version}").is_dir():
            export_tree(store, version.digest, kept / f"v{version.version}")
            if key is not None:
                sign(kept / f"v{version.version}", key)
    kept.mkdir(parents=True, exist_ok=True)
    (kept / "index.json").write_bytes(canonical_bytes(index))
