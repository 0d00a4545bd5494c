"""A memory system's agent image: the agent image plus the packages its declaration names, pinned by ID.

Each package kind is fetched by its ordinary client where the network allows it, then installed in one layer built
on the agent image's ID (``docker build``, no registry):

- Debian packages with ``apt-get`` inside the build, from the mirror the base image was bootstrapped from (the
  machine's configured mirror, see :mod:`.debian`);
- npm packages with ``npm install --global --prefix`` on the host (dependencies resolved there, install scripts not
  run), the resulting prefix copied to ``/usr/local`` (so ``bin/`` links land on ``PATH``); they run on Debian's
  ``nodejs``, which the declaration must name;
- pip packages as wheels with ``pip download`` on the host (same Debian release and Python as the image), installed
  from the build context with Debian's ``python3-pip``, offline.

The image's inputs digest covers the agent image ID, the package lists and the bytes of everything fetched on the
host, so an identical layer is reused and any change gives a new image. The host-side fetches are cached under
:func:`~.build.cache_dir` by the package list, so a rebuild after the engine lost its images fetches nothing.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from ...contracts import Sha256, canonical_json
from ...errors import SandboxError
from ...suite.memory_system import ImageLayer

__all__ = ["LAYER_RECIPE_VERSION", "fetch_npm", "fetch_wheels", "layer_context", "layer_dockerfile", "layer_inputs"]

# 2: fetched outside the cache directory, apt's and dpkg's logs and pip's cache left out of the layer.
LAYER_RECIPE_VERSION = 2
_NPM_DIR = "npm"
# What apt-get leaves in /var/log (its command lines and dpkg's record of the install): build logs, not the system.
_BUILD_LOGS = "/var/log/apt/* /var/log/dpkg.log /var/log/alternatives.log"
_WHEEL_DIR = "wheels"


def _run(argv: list[str], cwd: Path, what: str) -> None:
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    except OSError as exc:
        raise SandboxError(f"cannot run {argv[0]} to fetch {what}: {exc}; install {argv[0]}") from exc
    if done.returncode != 0:
        raise SandboxError(f"fetching {what} failed (exit {done.returncode}): {(done.stderr or done.stdout)[-1500:]}")


def _cached(cache: Path, kind: str, pins: tuple[str, ...], fetch: list[str]) -> Path:
    """Run ``fetch`` (which fills the directory ``out``) once per package list; the result is moved into place.

    It runs in a neutrally named temporary directory, not under the cache (whose path names the project): what a
    client writes may record where it ran, and it all goes into the image.
    """
    name = hashlib.sha256("\n".join(pins).encode()).hexdigest()[:20]
    target = cache / f"{kind}-{name}"
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{kind}-") as work:
        _run(fetch, Path(work), f"{kind} packages {list(pins)}")
        partial = Path(tempfile.mkdtemp(dir=cache, prefix=f"{target.name}.partial-"))
        shutil.move(Path(work) / "out", partial / "out")  # across file systems: copied, then renamed in one step
        (partial / "out").rename(target)
        partial.rmdir()
    return target


def fetch_npm(cache: Path, pins: tuple[str, ...]) -> Path:
    """A global-install prefix (``bin/``, ``lib/node_modules/``) holding ``pins`` and their dependencies."""
    argv = ["npm", "install", "--global", "--prefix", "out", "--ignore-scripts", "--no-audit", "--no-fund"]
    return _cached(cache, "npm", pins, [*argv, "--silent", *pins])


def fetch_wheels(cache: Path, pins: tuple[str, ...]) -> Path:
    """A directory of wheels: ``pins`` and their dependencies, binary only (no build runs on the host)."""
    argv = ["python3", "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", "out"]
    return _cached(cache, "wheels", pins, [*argv, *pins])


def _tree_digest(root: Path) -> str:
    """SHA-256 over every entry below ``root``: its path, kind, mode bits and content (or link target)."""
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if (Path(directory) / d).is_symlink()]):
            path = Path(directory) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                digest.update(f"L {relative} {os.readlink(path)}\n".encode())
            else:
                mode = path.stat().st_mode & 0o777
                digest.update(f"F {relative} {mode:o} {Sha256.of(path.read_bytes())}\n".encode())
    return digest.hexdigest()


def layer_dockerfile(agent_image_id: str, layer: ImageLayer) -> str:
    lines = [f"FROM {agent_image_id}"]
    if layer.debian:
        packages = " ".join(layer.debian)
        lines.append(
            "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
            f"{packages} >/dev/null && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb {_BUILD_LOGS}"
        )
    if layer.npm:
        lines.append(f"COPY {_NPM_DIR}/ /usr/local/")
    if layer.pip:
        lines.append(f"COPY {_WHEEL_DIR}/ /tmp/{_WHEEL_DIR}/")
        lines.append(
            f"RUN python3 -m pip install --quiet --no-cache-dir --no-index --find-links /tmp/{_WHEEL_DIR} "
            f"--break-system-packages {' '.join(layer.pip)} && rm -rf /tmp/{_WHEEL_DIR}"
        )
    return "\n".join(lines) + "\n"


def layer_inputs(agent_image_id: str, layer: ImageLayer, npm: Path | None, wheels: Path | None) -> str:
    data = {
        "recipe": "layer",
        "version": LAYER_RECIPE_VERSION,
        "agent": agent_image_id,
        "packages": layer.model_dump(mode="json"),
        "npm": _tree_digest(npm) if npm is not None else None,
        "wheels": _tree_digest(wheels) if wheels is not None else None,
        "dockerfile": layer_dockerfile("AGENT", layer),
    }
    return str(Sha256.of(canonical_json(data)))


def layer_context(
    agent_image_id: str, layer: ImageLayer, npm: Path | None, wheels: Path | None, destination: Path
) -> Path:
    """Write the build context (Dockerfile, the npm prefix, the wheels) as a tar file."""
    with tarfile.open(destination, "w") as archive:
        dockerfile = layer_dockerfile(agent_image_id, layer).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
        for fetched, name in ((npm, _NPM_DIR), (wheels, _WHEEL_DIR)):
            if fetched is not None:
                archive.add(fetched, arcname=name, filter=_owned_by_root)
    return destination


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
