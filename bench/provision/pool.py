"""A fixture's distractor pool: which documents it holds, and the corpus a restore is handed with them.

:func:`pool_documents` draws a pool of a given size from the fixture's declaration (:class:`DistractorPool`): the
built-in generator's first ``size`` documents, or a corpus artifact's documents in the order the seed gives them.
:func:`seed_corpus` lays the (verified) evidence corpus and a pool side by side in one directory: that directory is
the evidence corpus every memory system's restore is handed, the static baseline's included, so each pays for the
noise in its own way. The evidence's documents are the oracle; a distractor that shares a path with one would pass
for it, so it is refused, as is a pool document that is not a regular file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

from bench.contracts import Sha256
from bench.errors import ContractError

from .distractors import generated_pool
from .fixture import DistractorPool, PoolGenerator, artifact_sha256
from .messages import ArtifactRef

__all__ = ["PoolDocument", "pool_documents", "seed_corpus"]

PoolDocument = tuple[str, bytes]  # corpus-relative POSIX path, bytes


def _corpus_order(seed: int, paths: list[str]) -> list[str]:
    """The corpus's documents in the order ``seed`` gives them: by a keyed digest of each path, so the order of any
    two documents never depends on which others the corpus holds."""
    key = seed.to_bytes(8, "big")
    return sorted(paths, key=lambda path: (hashlib.blake2b(path.encode(), key=key).digest(), path))


def pool_documents(pool: DistractorPool, size: int, corpus: dict[str, bytes] | None = None) -> list[PoolDocument]:
    """The first ``size`` documents of ``pool``; ``corpus`` holds a corpus pool's documents by path."""
    if size > pool.size:
        raise ContractError(
            f"a pool of {size} distractor document(s) was asked for; the fixture declares at most {pool.size}",
            field="size",
            expected=pool.size,
            actual=size,
        )
    if pool.generator is PoolGenerator.OTHER_PROJECTS:
        return [(document.path, document.text.encode("utf-8")) for document in generated_pool(pool.seed, size)]
    if corpus is None:
        raise ContractError("the fixture's pool is a corpus; pass its documents to draw from it", field="corpus")
    if len(corpus) < size:
        raise ContractError(
            f"the pool's corpus holds {len(corpus)} document(s), fewer than the {size} asked for; add documents "
            "or lower the size",
            field="size",
            expected=len(corpus),
            actual=size,
        )
    return [(path, corpus[path]) for path in _corpus_order(pool.seed, sorted(corpus))[:size]]


def seed_corpus(evidence: ArtifactRef, pool: Path, target: Path) -> ArtifactRef:
    """``target`` made to hold the evidence corpus and every document below ``pool``; its path and SHA-256.

    ``evidence`` is the fixture's verified artifact (a directory, or one file kept under its own name). Pool
    documents are hard-linked where the file system allows (a restore of a large pool then costs no copy), else
    copied; both directories are the runner's scratch for one attempt.
    """
    source = Path(evidence.path)
    target.mkdir(parents=True)
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True, symlinks=True)
    else:
        shutil.copy2(source, target / source.name)
    made: set[str] = set()
    for relative in _documents(pool):
        placed = os.path.join(target, relative)
        if os.path.lexists(placed):
            raise ContractError(
                f"distractor {relative!r} has the path of an evidence document; a distractor must never pass for "
                "the oracle: rename it in the pool",
                field="distractors",
                actual=relative,
            )
        parent = os.path.dirname(placed)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        try:
            os.link(os.path.join(pool, relative), placed)
        except OSError:
            shutil.copyfile(os.path.join(pool, relative), placed)
    return ArtifactRef(path=str(target), sha256=Sha256(artifact_sha256(target)))


def _documents(pool: Path) -> list[str]:
    """Every regular file below ``pool`` by relative path, sorted; anything else there is refused."""
    found: list[str] = []
    prefix = len(os.path.join(pool, ""))
    for directory, subdirectories, files in os.walk(pool):
        for name in subdirectories + files:
            full = os.path.join(directory, name)
            mode = os.lstat(full).st_mode
            if stat.S_ISDIR(mode):
                continue
            relative = full[prefix:].replace(os.sep, "/")
            if not stat.S_ISREG(mode):
                raise ContractError(f"distractor {relative!r} is not a regular file; a pool holds documents only")
            found.append(relative)
    return sorted(found)
