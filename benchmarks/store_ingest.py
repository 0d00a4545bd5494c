"""Ingest of a 10,000-file, ~80 MB tree into the store, against `b3sum` and `tar -x` of the same files.

Also measures the packing choice: the same small objects as loose files versus rows of one SQLite transaction,
and the same ingest into the in-memory backend: what is left is reading and hashing, so the difference is what
the SQLite index and loose files cost. Prints ratios (ours / peer) measured in this run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.store import Store, tree_from_directory
from benchmarks.corpus_gen import generate_tree


def timed(action: object) -> float:
    os.sync()  # each side starts with no dirty pages of the other's to write back
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="ingest-bench-"))
    try:
        source = work / "src"
        written = generate_tree(source, 10_000, 80 * 1024 * 1024)
        files = sorted(str(path) for path in source.rglob("*.py"))
        subprocess.run(["tar", "-cf", str(work / "src.tar"), "-C", str(source), "."], check=True)
        subprocess.run(["cat", *files[:1]], check=True, stdout=subprocess.DEVNULL)
        timed(lambda: subprocess.run(["b3sum", "--no-names", *files], check=True, stdout=subprocess.DEVNULL))  # warm

        b3 = timed(lambda: subprocess.run(["b3sum", "--no-names", *files], check=True, stdout=subprocess.DEVNULL))
        (work / "untar").mkdir()
        untar = timed(
            lambda: subprocess.run(["tar", "-xf", str(work / "src.tar"), "-C", str(work / "untar")], check=True)
        )
        ours = timed(lambda: tree_from_directory(Store(work / "store"), source))
        again = timed(lambda: tree_from_directory(Store(work / "store"), source))
        in_memory = timed(lambda: tree_from_directory(Store.in_memory(), source))

        blobs = [os.urandom(2048) for _ in range(11_000)]
        loose_dir = work / "loose"
        loose_dir.mkdir()

        def loose() -> None:
            for index, blob in enumerate(blobs):
                path = loose_dir / f"{index:05}"
                with open(path, "wb") as handle:
                    handle.write(blob)
                    handle.flush()
                    os.fsync(handle.fileno())

        def packed() -> None:
            store = Store(work / "packed")
            with store.batch():
                for blob in blobs:
                    store.put_bytes(blob)

        print(f"tree: {len(files)} files, {written / 1e6:.1f} MB")
        print(f"ingest (ours)            {ours:7.2f} s")
        print(f"re-ingest, all present   {again:7.2f} s")
        print(f"ingest into memory       {in_memory:7.2f} s   the store directory costs {ours - in_memory:5.2f} s")
        print(f"b3sum of the same files  {b3:7.2f} s   ratio ours/b3sum  = {ours / b3:5.2f}x")
        print(f"tar -x of the same files {untar:7.2f} s   ratio ours/tar -x = {ours / untar:5.2f}x")
        loose_s, packed_s = timed(loose), timed(packed)
        print(
            f"11,000 small objects: loose files {loose_s:.2f} s, one SQLite transaction {packed_s:.2f} s "
            f"(packing is {loose_s / packed_s:.1f}x faster)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
