"""The agent image: the base image plus the Claude Code CLI as its native binary, and nothing else.

The npm package ``@anthropic-ai/claude-code`` is a thin wrapper whose per-platform optional dependency carries a
self-contained glibc executable, so the image needs no Node.js: ``npm pack`` fetches that platform package into
the cache and the binary is copied into ``/usr/local/bin/claude``. The layer is added with ``docker build`` on top
of the base image's ID (the legacy builder resolves a local ID, no registry involved), so the agent image shares
the base layer instead of importing a second copy of Debian.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from pathlib import Path

from ...contracts import Sha256, canonical_json
from ...digest_cache import file_digests
from ...errors import SandboxError

__all__ = ["CLI_PACKAGE", "CLI_VERSION", "agent_context", "agent_inputs", "fetch_cli"]

CLI_PACKAGE = "@anthropic-ai/claude-code-linux-x64"
CLI_VERSION = "2.1.332"  # the version whose interfaces agent-interfaces.md records
RECIPE_VERSION = 2  # 2: on the base image of recipe 2, which keeps no build logs
_DOCKERFILE = "FROM {base}\nCOPY --chown=0:0 claude /usr/local/bin/claude\n"


def fetch_cli(cache_dir: Path, version: str = CLI_VERSION) -> Path:
    """The CLI binary of ``version``, from the npm cache directory or fetched with ``npm pack``."""
    binary = cache_dir / f"claude-{version}"
    if binary.is_file():
        return binary
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix="npm-") as work:
        try:
            packed = subprocess.run(
                ["npm", "pack", "--silent", f"{CLI_PACKAGE}@{version}"], cwd=work, capture_output=True, text=True
            )
        except OSError as exc:
            raise SandboxError(f"cannot run npm to fetch {CLI_PACKAGE}@{version}: {exc}; install npm") from exc
        if packed.returncode != 0:
            raise SandboxError(f"`npm pack {CLI_PACKAGE}@{version}` failed: {packed.stderr.strip()[-1000:]}")
        tarball = Path(work) / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            member = archive.extractfile("package/claude")
            if member is None:
                raise SandboxError(f"{tarball.name} has no package/claude binary; is {version} a native build?")
            partial = Path(work) / "claude"
            partial.write_bytes(member.read())
        partial.chmod(0o755)
        partial.rename(binary)
    return binary


def _cli_sha256(binary: Path) -> Sha256:
    """Remembered by the binary's stat: it is hundreds of megabytes, and every plan (`status` too) pins it."""
    with file_digests() as digests:
        return Sha256(digests.sha256(binary))


def agent_inputs(base_image_id: str, binary: Path) -> str:
    data = {
        "recipe": "agent",
        "version": RECIPE_VERSION,
        "base": base_image_id,
        "cli": _cli_sha256(binary),
        "dockerfile": _DOCKERFILE,
    }
    return str(Sha256.of(canonical_json(data)))


def agent_context(base_image_id: str, binary: Path, destination: Path) -> Path:
    """Write the build context (Dockerfile plus the binary) as a tar file; it is too big to hold in memory twice."""
    with tarfile.open(destination, "w") as archive:
        dockerfile = _DOCKERFILE.format(base=base_image_id).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
        archive.add(binary, arcname="claude")
    return destination
