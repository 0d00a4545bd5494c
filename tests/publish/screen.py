"""The first screen of a report page as a reader sees it: a screenshot of the page in a frame of a given size, so
a phone's 390 px is possible (headless Chromium will not make a window narrower than 500 px)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.publish.axe import chromium

__all__ = ["first_screen"]

_PROBE = """<!DOCTYPE html><html><body style="margin:0;background:#fff">
<iframe src="%s" style="border:0;width:%dpx;height:%dpx;display:block"></iframe></body></html>"""


def first_screen(page: Path, width: int, height: int, work: Path, dark: bool = False) -> bytes:
    """A PNG of ``page``'s first ``width`` x ``height`` pixels, its frame at the top left of the image."""
    probe = work / f"screen-{width}-{'dark' if dark else 'light'}.html"
    probe.write_text(_PROBE % (page.as_uri(), width, height))
    shot = probe.with_suffix(".png")
    window = f"--window-size={max(width, 500)},{height}"
    command = [*chromium(work, dark), window, "--virtual-time-budget=10000", f"--screenshot={shot}", probe.as_uri()]
    subprocess.run(command, check=True, timeout=180, capture_output=True)
    return shot.read_bytes()
