"""Packaging against its command-line peers, on a generated repository of ~11,000 files / ~80 MB of text.

    corpus + redact   vs  git archive COMMIT | tar -x        (target: at most 1.0x)
    certify           vs  rg -uuu -F -i -c, same fixed strings over the same files   (target: at most 2x)

The repository is written with `git fast-import` (a packed repository, as real ones are) and carries a few
auto-loaded context files, so redaction has work to do. Each side runs ``--repeat`` times, interleaved, from a
fresh store or a fresh directory; the best time of each is compared. Usage: python benchmarks/packaging.py
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.contracts import Sha256
from bench.packaging import CertifyParams, CorpusParams, TextScanner, certify_surfaces, corpus, corpus_params, redact
from bench.packaging.redact import RedactParams
from bench.stages.engine import execute
from bench.store import Store
from bench.suite import ChallengeManifest
from benchmarks.corpus_gen import _text  # the same text generator as the store benchmark

PLANTED = {
    "CLAUDE.md": b"# memory\nalways run make check\n",
    "pkg03/CLAUDE.md": b"nested memory\n",
    "pkg07/mod02/AGENTS.md": b"codex rules\n",
    ".claude/settings.json": b"{}\n",
    ".cursor/rules/style.mdc": b"use tabs\n",
}
ANSWER_PHRASES = ("Automatic Update Checks", "labels come from one table")


def _fast_import_stream(files: int, total_bytes: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    mean = total_bytes // files
    yield b"commit refs/heads/main\ncommitter Dev <dev@example.org> 1700000000 +0000\ndata 9\nsnapshot\n"
    for index in range(files):
        path = f"pkg{index % 97:02}/mod{index % 13:02}/file{index:05}.{rng.choice(('py', 'md', 'rs', 'txt'))}"
        data = _text(rng, max(64, int(rng.expovariate(1 / mean))))
        mode = "100755" if index % 50 == 0 else "100644"
        yield f"M {mode} inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
    for path, data in PLANTED.items():
        yield f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
    yield b"M 120000 inline docs/current\ndata 17\npkg00/mod00/file0\n"


def make_repository(path: Path, files: int, total_bytes: int, seed: int = 7) -> str:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    importer = subprocess.Popen(["git", "-C", str(path), "fast-import", "--quiet"], stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for chunk in _fast_import_stream(files, total_bytes, seed):
        importer.stdin.write(chunk)
    importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")
    return subprocess.run(
        ["git", "-C", str(path), "rev-parse", "main"], check=True, capture_output=True, text=True
    ).stdout.strip()


def best(runs: list[float]) -> float:
    return min(runs)


def timed(action: Callable[[], object]) -> float:
    os.sync()  # each side starts with no dirty pages of the other's to write back
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def challenge_document(store: Store) -> dict[str, object]:
    fields = {
        "challenge_id": "bench-settings",
        "prompt": "Rename the update row on the Settings screen.",
        "allowed_output_paths": ["src"],
        "agent_timeout_seconds": 600,
        "environment": {"network_mode": "none", "cpus": 1, "memory_mb": 1024},
        "verifier": {
            "kind": "script",
            "runtime": "posix-shell",
            "asset": {"path": "verifier.sh", "sha256": Sha256.of(b"exit 0\n")},
            "timeout_seconds": 60,
        },
        "answer_phrases": list(ANSWER_PHRASES),
    }
    return {"challenge": store.put_document(ChallengeManifest.model_validate_json(json.dumps(fields)))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=11_000)
    parser.add_argument("--megabytes", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--repository", help="also measure a real repository at hand (directory) and ref")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="packaging-bench-"))
    try:
        repo = work / "repo"
        commit = make_repository(repo, args.files, args.megabytes * 1_000_000)
        print(f"repository: {args.files} files, ~{args.megabytes} MB, commit {commit}")
        measure(work, str(repo), commit, args.repeat)
        if args.repository:
            print(f"\nreal repository {args.repository}")
            measure(work, args.repository, "HEAD", args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(parent: Path, repository: str, ref: str, repeat: int) -> None:
    work = Path(tempfile.mkdtemp(dir=parent))
    params = corpus_params(repository, ref)
    ours: list[float] = []
    peer: list[float] = []
    for attempt in range(repeat):
        store = Store(work / f"store{attempt}")

        ours.append(timed(lambda store=store: _package(store, params)))
        target = work / f"archive{attempt}"
        target.mkdir()
        peer.append(timed(lambda target=target: _archive(repository, params.commit, target)))
    print(
        f"corpus+redact {best(ours):.2f}s  git archive | tar -x {best(peer):.2f}s  ratio {best(ours) / best(peer):.2f}x"
    )

    store = Store(work / "store0")
    source = execute(store, corpus, {}, params).outputs["tree"]
    redacted = execute(store, redact, {"tree": source}, RedactParams()).outputs["tree"]
    inputs = {"source": redacted, "evidence": source, "graph/memory": store.put_bytes(b'{"project": "acme"}')}
    inputs |= challenge_document(store)
    patterns = work / "patterns.txt"
    patterns.write_bytes(b"\n".join(TextScanner(ANSWER_PHRASES).literals) + b"\n")
    checks, greps = [], []
    for _ in range(repeat):
        checks.append(timed(lambda: certify_surfaces(store, inputs, CertifyParams())))
        greps.append(timed(lambda: _rg(patterns, work / "archive0")))
    # certify reads two trees (source and evidence: the same corpus here); rg reads the files once.
    per_tree = best(checks) / 2
    print(
        f"certify (per corpus tree) {per_tree:.2f}s  rg -F -i {best(greps):.2f}s  ratio {per_tree / best(greps):.2f}x"
    )


def _package(store: Store, params: CorpusParams) -> None:
    tree = execute(store, corpus, {}, params).outputs["tree"]
    execute(store, redact, {"tree": tree}, RedactParams())


def _archive(repository: str, commit: str, target: Path) -> None:
    archive = subprocess.Popen(["git", "-C", repository, "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit("git archive failed")


def _rg(patterns: Path, directory: Path) -> None:
    subprocess.run(
        ["rg", "-uuu", "-F", "-i", "-c", "-f", str(patterns), str(directory)], stdout=subprocess.DEVNULL, check=False
    )


if __name__ == "__main__":
    main()
