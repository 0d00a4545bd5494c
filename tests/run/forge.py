"""A careful forger of a published bundle: change one file, then make every digest that names it agree.

What changes is renamed when a file is named by its digest (``objects/<hex>``, ``records/<hex>.json``, the
admission named by its record), every file naming an old digest is rewritten to the new one, until nothing
names an old digest; then the manifest and the in-toto statement are written afresh, and signed again when the
forger holds the publisher's key (a publisher forging their own bundle). What is left to catch a forgery like this
is what verify re-derives: the stage code run on the forged inputs does not give the recorded outputs.
"""

from __future__ import annotations

from pathlib import Path

from bench.contracts import Digest
from bench.publish.bundle_layout import PROVENANCE_NAME, bundle_files
from bench.publish.manifest import PublicationManifest, PublishedFile, write_manifest
from bench.publish.provenance import statement_bytes
from bench.publish.release import sign
from bench.publish.signing import load_private_key

__all__ = ["forge", "reseal"]


def reseal(root: Path, key: Path | None = None) -> None:
    """A manifest and a statement that match the files as they now are, signed with ``key`` if the forger has it
    (else the old signature stays, over another statement)."""
    files = bundle_files(root)
    manifest = PublicationManifest(files=[PublishedFile(path=p, digest=Digest.of(d)) for p, d in sorted(files.items())])
    write_manifest(root, manifest)
    (root / PROVENANCE_NAME).write_bytes(statement_bytes(files))
    if key is not None:
        sign(root, load_private_key(key))


def forge(root: Path, path: str, data: bytes, key: Path | None = None) -> str:
    """Replace the file at ``path`` with ``data`` and cascade; return where it now lives."""
    old = (root / path).read_bytes()
    mapping = {Digest.of(old): Digest.of(data)}
    for relative, content in bundle_files(root).items():
        if content == old:  # one object can be published at two paths (two arms' identical verifier results)
            (root / relative).write_bytes(data)
    changed = True
    while changed:
        changed = False
        for relative, content in sorted(bundle_files(root).items()):
            new_content, new_name = content, str(relative)
            for before, after in mapping.items():
                new_content = new_content.replace(before.encode(), after.encode())
                new_name = new_name.replace(before.hex, after.hex)
            if new_content == content and new_name == relative:
                continue
            changed = True
            if new_content != content:
                mapping[Digest.of(content)] = Digest.of(new_content)
            (root / relative).unlink()
            (root / new_name).write_bytes(new_content)
            if relative == path:
                path = new_name
    reseal(root, key)
    return path
