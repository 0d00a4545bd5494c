"""Every image is scanned for the harness's name before it is used: nothing an agent can see names the harness, and
no path in it names an arm's condition (:data:`~bench.packaging.markers.CONDITION_TERMS`).

The image's filesystem streams out of the backend (:meth:`~..backends.SandboxBackend.export_image`: a container
created from it, never started) and every path, link target and regular file's content is searched for the terms
certification looks for in a corpus (:mod:`bench.packaging.identity`). An image that names the harness is refused
with :class:`ImageNotNeutral`, naming each file and term. A clean verdict is remembered under the image cache (by
image ID and the term list), so an image is read once per machine, not once per build call.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import SandboxError
from ..packaging.identity import IdentityFinding, ScanTally, scan_tar
from ..packaging.markers import CONDITION_TERMS, HARNESS_TERMS
from ..sandbox.backends import SandboxBackend
from .labels import using

__all__ = ["ImageNotNeutral", "ImageScan", "require_neutral_image", "scan_image"]

_SHOWN = 20  # findings named in the error's message; all of them are in its ``findings``


@dataclass(frozen=True)
class ImageScan:
    image_id: str
    entries: int  # tar entries (files, directories, links, devices)
    files: int  # regular files, whose content was read
    bytes: int
    seconds: float
    findings: tuple[IdentityFinding, ...]


class ImageNotNeutral(SandboxError):
    """An image's filesystem names the harness; ``findings`` lists each file and term (``path:line: term``)."""

    def __init__(self, image_id: str, findings: tuple[IdentityFinding, ...]) -> None:
        shown = "; ".join(str(finding) for finding in findings[:_SHOWN])
        more = f"; and {len(findings) - _SHOWN} more" if len(findings) > _SHOWN else ""
        super().__init__(
            f"image {image_id} names the harness in {len(findings)} place(s) an agent can read: {shown}{more}",
            hint="rebuild it with `stele-bench image build NAME` (builds run in neutrally named directories and "
            "remove their logs); an image built otherwise must not leave such files behind",
        )
        self.image_id = image_id
        self.findings = [str(finding) for finding in findings]


def scan_image(image_id: str, backend: SandboxBackend | None = None) -> ImageScan:
    """Read the whole filesystem of ``image_id`` once, as a stream, and report every harness term in it."""
    started = time.monotonic()
    tally = ScanTally()
    with using(backend) as images, images.export_image(image_id) as stream:
        findings = tuple(scan_tar(stream, tally))
    return ImageScan(
        image_id=image_id,
        entries=tally.entries,
        files=tally.files,
        bytes=tally.bytes,
        seconds=time.monotonic() - started,
        findings=findings,
    )


def _verdict_file(cache: Path, image_id: str) -> Path:
    terms = hashlib.sha256("\n".join(HARNESS_TERMS + CONDITION_TERMS).encode()).hexdigest()[:12]
    return cache / "scans" / f"{image_id.removeprefix('sha256:')}-{terms}.clean"


def require_neutral_image(image_id: str, backend: SandboxBackend, cache: Path) -> ImageScan | None:
    """Refuse ``image_id`` unless it scans clean; the scan that proved it (None: proved before, on this machine)."""
    verdict = _verdict_file(cache, image_id)
    if verdict.is_file():
        return None
    scan = scan_image(image_id, backend)
    if scan.findings:
        raise ImageNotNeutral(image_id, scan.findings)
    verdict.parent.mkdir(parents=True, exist_ok=True)
    verdict.write_text(f"{scan.files} files, {scan.bytes} bytes, no harness term\n")
    return scan
