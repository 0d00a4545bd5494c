"""A report page opened in headless Chromium at a given width and colour scheme, checked by axe-core (npm), with
its layout width.

The page is loaded in an iframe of the asked width inside a probe page (headless Chromium will not make a window
narrower than 500 px); a script in the framed copy runs axe and posts its violations and the page's scroll width
to the probe, which writes them into its own DOM for ``--dump-dom`` to print. The dark scheme is the browser's
(``--force-dark-mode``), so ``prefers-color-scheme: dark`` matches in the frame as it would for a reader.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

__all__ = ["AXE", "CHROMIUM_FLAGS", "audit", "chromium"]

AXE = Path("/usr/lib/node_modules/axe-core/axe.min.js")  # scripts/setup.sh installs it (npm, pinned)

_FRAMED = """<script>%s</script><script>
axe.run(document).then(function (r) {
  parent.postMessage(JSON.stringify({
    violations: r.violations.map(function (v) { return {id: v.id, impact: v.impact, nodes: v.nodes.length}; }),
    scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth
  }), "*");
});
</script>"""

_PROBE = """<!DOCTYPE html><html><body><pre id="result"></pre>
<iframe src="%s" style="border:0;width:%dpx;height:900px"></iframe>
<script>window.addEventListener("message", function (e) { document.getElementById("result").textContent = e.data; });
</script></body></html>"""


CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--allow-file-access-from-files", "--hide-scrollbars")  # fmt: skip


def chromium(work: Path, dark: bool) -> list[str]:
    """Headless Chromium's command line with a profile in ``work``, in the dark scheme when ``dark``."""
    found = shutil.which("chromium")
    assert found, "headless Chromium is needed: install the Debian package `chromium`"
    scheme = ["--force-dark-mode"] if dark else []
    return [found, *CHROMIUM_FLAGS, *scheme, f"--user-data-dir={work / ('profile-dark' if dark else 'profile')}"]


def audit(page: Path, width: int, work: Path, dark: bool = False) -> dict[str, Any]:
    """axe-core's violations and the layout widths of ``page`` (a file beside its links) at ``width`` px, in the
    dark colour scheme when ``dark``."""
    assert AXE.is_file(), f"axe-core is needed at {AXE}: run scripts/setup.sh (npm install -g axe-core)"
    framed = page.with_name(f"axe-{width}-{'dark' if dark else 'light'}-{page.name}")
    html = page.read_text()
    framed.write_text(html.replace("</body>", _FRAMED % AXE.read_text() + "</body>"))
    probe = work / f"probe-{width}-{'dark' if dark else 'light'}.html"
    probe.write_text(_PROBE % (framed.as_uri(), width))
    command = [*chromium(work, dark), "--window-size=1400,1000", "--virtual-time-budget=60000", "--dump-dom",
               probe.as_uri()]  # fmt: skip
    try:
        dom = subprocess.run(command, check=True, timeout=180, capture_output=True, text=True).stdout
    finally:
        framed.unlink()
    found = dom.split('<pre id="result">', 1)[1].split("</pre>", 1)[0]
    assert found, "axe reported nothing: the page or the probe did not load"
    result: dict[str, Any] = json.loads(found.replace("&quot;", '"').replace("&amp;", "&"))
    return result
