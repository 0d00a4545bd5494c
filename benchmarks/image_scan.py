"""The image scan against the bare engine: scanning the agent image's whole filesystem for the harness's name vs
`docker export` of a created container piped to `tar -t` (listing only: the least any scan must do) and to
`grep -a -c -i -F` over the same terms (ratios: ours / peer; medians of a few repetitions, interleaved).

The scan exports the same way and reads every regular file in 1 MiB chunks; its cost over the pipe is the tar
parse in Python and the per-chunk lowering and search. Target at most 2x the `tar -t` peer.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.images import ImageName, build_image, scan_image
from bench.packaging.markers import HARNESS_TERMS
from bench.sandbox.backends.docker import DockerBackend

REPETITIONS = 3
GOAL = 2.0


def peer(image: str, consumer: list[str]) -> float:
    """`docker export` of a container created from ``image`` (never started), piped to ``consumer``."""
    container = subprocess.run(["docker", "create", image, "true"], check=True, capture_output=True, text=True)
    name = container.stdout.strip()
    try:
        start = time.perf_counter()
        subprocess.run(f"docker export {name} | {' '.join(consumer)} > /dev/null", shell=True, check=False)
        return time.perf_counter() - start
    finally:
        subprocess.run(["docker", "rm", "-f", name], check=True, capture_output=True)


def main() -> None:
    grep = ["grep", "-a", "-c", "-i", "-F", *(f"-e '{term}'" for term in HARNESS_TERMS)]
    with DockerBackend() as backend:
        image = build_image(ImageName.AGENT, backend).record.image_id
        ours, listing, searching = [], [], []
        size = 0
        for _ in range(REPETITIONS):
            scan = scan_image(image, backend)
            ours.append(scan.seconds)
            size = scan.bytes
            listing.append(peer(image, ["tar", "-t"]))
            searching.append(peer(image, grep))
    mine = statistics.median(ours)
    print(f"agent image {image[:19]}: {size / 1e6:.0f} MB of file content, {scan.files} files")
    for peer_name, times in (("docker export | tar -t", listing), ("docker export | grep -F -i", searching)):
        theirs = statistics.median(times)
        verdict = "holds" if mine / theirs <= GOAL else "misses"
        print(f"scan {mine:.2f} s vs {peer_name} {theirs:.2f} s: {mine / theirs:.2f}x ({verdict} <= {GOAL}x)")


if __name__ == "__main__":
    main()
