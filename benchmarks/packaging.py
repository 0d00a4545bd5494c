"""Packaging against its command-line peers, on a generated repository of ~11,000 files / ~80 MB of text.

    corpus + redact   vs  git archive COMMIT | tar -x        (goal: at most 1.0x)
    certify           vs  rg -uuu -F -i -c, the same fixed strings over the same files   (goal: at most 1.5x)

Where both sides write: the peer extracts the archive into a fresh directory in RAM (/dev/shm); ours writes a
fresh store (SQLite index and one pack) in RAM too. Neither then waits on a disk that other work on the machine
keeps busy, and both write the same bytes once. Certify reads the redacted corpus tree from that store (the
evidence surface is a one-file tree, so it is the corpus that is compared); rg reads the extracted files.

Ours runs both stages through the stage engine (action keys, receipts, the action cache), timed after its imports
and after reading each stage's source for its code digest, which a pipeline does once per process.

The repository is written with `git fast-import` (a packed repository with deltas, as real ones are) and carries
a few auto-loaded context files, so redaction has work to do. Each side runs in its own process (peak memory is
that process's), alternating, ``--repeat`` times after a warm-up; medians are compared. Then everything again at
4x the repository, for the growth lines. ``--repository DIR`` also measures a real repository at its HEAD.
Usage: python3 benchmarks/packaging.py [--repeat N] [--repository DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.contracts import Ref
from bench.store import Store
from bench.suite import ChallengeManifest
from benchmarks.corpus_gen import _text  # the same text generator as the store benchmark
from benchmarks.harness import Sample, child_main, compare, growth_line, ours, peer, print_comparison, ram_directory

FILES, BYTES = 11_000, 80_000_000
PACKAGE_GOAL, CERTIFY_GOAL, MEMORY_GOAL_MB = 1.0, 1.5, 150
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
    return _rev_parse(path, "main")


def _rev_parse(repository: Path, ref: str) -> str:
    command = ["git", "-C", str(repository), "rev-parse", ref]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


# -- our side, in a child process -------------------------------------------------------------------------


def _package(args: list[str]) -> Callable[[], object]:
    """corpus then redact of ``args[0]`` at commit ``args[1]`` into a fresh store at ``args[2]``."""
    from bench.builder import StageContext, execute
    from bench.builder.code_digest import code_manifest
    from bench.packaging import corpus_params
    from bench.packaging.redact import RedactParams
    from bench.stages.corpus import corpus
    from bench.stages.redact import redact
    from bench.store import Store

    repository, commit, where = args
    for stage in (corpus, redact):
        code_manifest(stage.module)  # reading the stage's source: paid once per process, like the imports

    def run() -> None:
        context = StageContext(Store(where))
        tree = execute(context, corpus, {}, corpus_params(repository, commit)).outputs["tree"]
        execute(context, redact, {"tree": tree}, RedactParams())

    return run


def _certify(args: list[str]) -> Callable[[], object]:
    """certify of the redacted corpus ``args[1]`` in the store at ``args[0]``, with the surfaces it requires."""
    from bench.contracts import PortablePath, TreeDigest
    from bench.packaging import CertifyInputs, CertifyParams, Verdict, certify_surfaces
    from bench.store import EntryKind, FileEntry, Store, tree_from_entries

    store = Store(args[0])
    evidence = tree_from_entries(store, [FileEntry(PortablePath("notes.md"), EntryKind.FILE, b"release notes\n")])
    inputs = CertifyInputs(
        source=TreeDigest(args[1]),
        evidence=evidence,
        challenge=_challenge(store),
        graph={"memory": store.put_bytes(b'{"project": "acme"}')},
    )

    def run() -> None:
        report = certify_surfaces(store, inputs, CertifyParams(memory_phrases=()))
        assert report.verdict is Verdict.CERTIFIED, report.findings[:3]

    return run


def _challenge(store: Store) -> Ref[ChallengeManifest]:
    from bench.contracts import Sha256
    from bench.suite import ChallengeManifest

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
    return store.put_document(ChallengeManifest.model_validate_json(json.dumps(fields)))


def _redacted_tree(store: Path, repository: str, commit: str) -> str:
    """Package once (untimed) into ``store`` and return the redacted tree certify is given."""
    from bench.builder import StageContext, execute
    from bench.packaging import corpus_params
    from bench.packaging.redact import RedactParams
    from bench.stages.corpus import corpus
    from bench.stages.redact import redact
    from bench.store import Store

    context = StageContext(Store(store))
    tree = execute(context, corpus, {}, corpus_params(repository, commit)).outputs["tree"]
    return str(execute(context, redact, {"tree": tree}, RedactParams()).outputs["tree"])


# -- the peers ----------------------------------------------------------------------------------------------


def _archive(repository: str, commit: str, target: Path) -> Sample:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    pipeline = f"git -C '{repository}' archive {commit} | tar -x -C '{target}'"
    return peer(["sh", "-c", f"set -e; {pipeline}"])


def _literals() -> list[bytes]:
    from bench.packaging import TextScanner

    return list(TextScanner(ANSWER_PHRASES).literals)


# -- one measurement at one size ----------------------------------------------------------------------------


def measure(title: str, repository: str, commit: str, repeat: int, ram: Path) -> tuple[Sample, Sample]:
    """corpus+redact and certify against their peers; returns our samples."""
    packaged = compare(
        repeat,
        lambda attempt: ours("packaging.py", "package", repository, commit, _fresh(ram / "store")),
        lambda attempt: _archive(repository, commit, ram / "archive"),
    )
    print_comparison(f"{title} corpus + redact", "git archive | tar -x", packaged, PACKAGE_GOAL)
    verdict = "holds" if packaged.ours.peak_mb < MEMORY_GOAL_MB else "MISSED"
    print(f"{title} corpus + redact peak memory {packaged.ours.peak_mb:.0f} MB (goal < {MEMORY_GOAL_MB} MB: {verdict})")

    store = ram / "certify-store"
    redacted = _redacted_tree(store, repository, commit)
    patterns = ram / "patterns.txt"
    patterns.write_bytes(b"\n".join(_literals()) + b"\n")
    rg = ["rg", "-uuu", "-F", "-i", "-c", "-f", str(patterns), str(ram / "archive")]
    certified = compare(
        repeat,
        lambda attempt: ours("packaging.py", "certify", str(store), redacted),
        lambda attempt: _rg(rg),
    )
    print_comparison(f"{title} certify", "rg -F -i", certified, CERTIFY_GOAL)
    shutil.rmtree(store)
    return packaged.ours, certified.ours


def _rg(argv: list[str]) -> Sample:
    # rg exits 1 when nothing matches, which is the expected outcome here.
    return peer(["sh", "-c", " ".join(f"'{part}'" for part in argv) + " > /dev/null; test $? -le 1"])


def _fresh(path: Path) -> str:
    shutil.rmtree(path, ignore_errors=True)
    return str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--repository", help="also measure a real repository (a directory) at its HEAD")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="packaging-bench-"))
    try:
        with ram_directory("packaging-bench-") as ram:
            results = []
            for scale in (1, 4):
                repository = work / f"repo{scale}"
                commit = make_repository(repository, FILES * scale, BYTES * scale)
                print(f"\n{scale}x: {FILES * scale} files, ~{BYTES * scale // 1_000_000} MB, commit {commit}")
                results.append(measure(f"{scale}x", str(repository), commit, args.repeat, ram))
                shutil.rmtree(repository)
            growth_line("corpus + redact", results[0][0], results[1][0], 4)
            growth_line("certify", results[0][1], results[1][1], 4)
            if args.repository:
                print(f"\nreal repository {args.repository}")
                measure("real", args.repository, _rev_parse(Path(args.repository), "HEAD"), args.repeat, ram)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__" and not child_main({"package": _package, "certify": _certify}):
    main()
