"""The base image's rootfs: Debian minbase with python3 and git, made by debootstrap from the configured mirror.

The mirror is read from this machine's apt sources when the image is built (deb822 ``*.sources`` files first,
then one-line ``sources.list``), never written into the code, so the image comes from wherever this machine is
allowed to fetch packages. The rootfs tarball is cached by its inputs digest, so a rebuild (or a re-import after
the engine lost its images) skips debootstrap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..contracts import Sha256, canonical_json
from ..errors import SandboxError
from ..sandbox.layout import USER_GID, USER_HOME, USER_NAME, USER_UID, WORKSPACE

__all__ = ["DebianRecipe", "base_rootfs", "configured_mirror", "host_codename"]

PACKAGES = ("python3", "git", "ca-certificates")
# 2: built outside the cache directory, build logs removed (version 1 left debootstrap's log, naming the build path).
RECIPE_VERSION = 2
# What the build leaves in /var/log: debootstrap's own log (every path it wrote) and dpkg's.
BUILD_LOGS = ("var/log/bootstrap.log", "var/log/dpkg.log", "var/log/alternatives.log")


@dataclass(frozen=True)
class DebianRecipe:
    """Everything that decides the rootfs bytes; its digest names the cached tarball and labels the image."""

    mirror: str
    suite: str
    packages: tuple[str, ...] = PACKAGES

    @property
    def inputs(self) -> str:
        data = {
            "recipe": "base",
            "version": RECIPE_VERSION,
            "mirror": self.mirror,
            "suite": self.suite,
            "packages": list(self.packages),
            "user": [USER_NAME, USER_UID, USER_GID, USER_HOME, WORKSPACE],
        }
        return str(Sha256.of(canonical_json(data)))


def host_codename(os_release: Path = Path("/etc/os-release")) -> str:
    """The Debian codename of this machine (the suite the mirror is known to serve)."""
    for line in os_release.read_text().splitlines():
        key, _, value = line.partition("=")
        if key == "VERSION_CODENAME" and value.strip('"'):
            return value.strip('"')
    raise SandboxError(f"{os_release} names no VERSION_CODENAME; the base image needs a Debian host")


def _deb822_stanzas(text: str) -> list[dict[str, str]]:
    stanzas: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                stanzas.append(current)
            current = {}
        elif not line.startswith("#") and not line[0].isspace() and ":" in line:
            key, _, value = line.partition(":")
            current[key.strip().lower()] = value.strip()
    if current:
        stanzas.append(current)
    return stanzas


def _sources(apt_dir: Path) -> list[tuple[str, list[str]]]:
    """(URI, suites) for every enabled ``deb`` source, deb822 files first."""
    found: list[tuple[str, list[str]]] = []
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        for stanza in _deb822_stanzas(path.read_text()):
            if "deb" in stanza.get("types", "").split() and stanza.get("enabled", "yes").lower() != "no":
                found += [(uri, stanza.get("suites", "").split()) for uri in stanza.get("uris", "").split()]
    lists = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in lists:
        for line in path.read_text().splitlines() if path.is_file() else []:
            words = line.split("#", 1)[0].split()
            if words[:1] == ["deb"]:
                words = [word for word in words[1:] if not word.startswith("[") and not word.endswith("]")]
                if len(words) >= 2:
                    found.append((words[0], [words[1]]))
    return found


def configured_mirror(suite: str, apt_dir: Path = Path("/etc/apt")) -> str:
    """The first configured ``deb`` URI serving ``suite``; an error names the files read when there is none."""
    for uri, suites in _sources(apt_dir):
        if suite in suites:
            return uri
    raise SandboxError(
        f"no enabled deb source in {apt_dir}/sources.list or {apt_dir}/sources.list.d serves {suite!r}; "
        "configure a Debian mirror for apt first"
    )


def _add_user(root: Path) -> None:
    """The non-root user and the workspace, written straight into the rootfs (no chroot tools needed)."""
    with (root / "etc/passwd").open("a") as passwd:
        passwd.write(f"{USER_NAME}:x:{USER_UID}:{USER_GID}::{USER_HOME}:/bin/bash\n")
    with (root / "etc/group").open("a") as group:
        group.write(f"{USER_NAME}:x:{USER_GID}:\n")
    with (root / "etc/shadow").open("a") as shadow:
        shadow.write(f"{USER_NAME}:!:19000:0:99999:7:::\n")
    for directory in (USER_HOME, WORKSPACE):
        path = root / directory.lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, USER_UID, USER_GID)


def _run(argv: list[str], what: str) -> None:
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout)[-2000:]
        raise SandboxError(f"{what} failed (exit {result.returncode}): {' '.join(argv[:4])} ...\n{tail}")


def base_rootfs(recipe: DebianRecipe, cache_dir: Path) -> Path:
    """The cached rootfs tarball of ``recipe``, made by debootstrap when absent.

    debootstrap runs in a neutrally named directory of the system's temporary directory, never under the cache
    (whose path names the project): it writes its root's path into the logs it leaves, and whatever it leaves
    the agent can read. The build logs are removed all the same (:data:`BUILD_LOGS`).
    """
    tarball = cache_dir / f"base-{recipe.inputs[:16]}.tar"
    if tarball.is_file():
        return tarball
    if shutil.which("debootstrap") is None:
        raise SandboxError("debootstrap is not installed; run `apt-get install debootstrap`")
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rootfs-") as work:
        root = Path(work) / "root"
        argv = ["debootstrap", "--variant=minbase", f"--include={','.join(recipe.packages)}", recipe.suite, str(root)]
        _run([*argv, recipe.mirror], f"debootstrap of {recipe.suite} from {recipe.mirror}")
        shutil.rmtree(root / "var/cache/apt/archives", ignore_errors=True)
        shutil.rmtree(root / "var/lib/apt/lists", ignore_errors=True)
        for log in BUILD_LOGS:
            (root / log).unlink(missing_ok=True)
        _add_user(root)
        handle, name = tempfile.mkstemp(dir=cache_dir, prefix=f"{tarball.name}.", suffix=".partial")
        os.close(handle)
        partial = Path(name)
        try:
            _run(["tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", name, "."], "packing the rootfs")
            partial.rename(tarball)
        finally:
            partial.unlink(missing_ok=True)  # a failed pack leaves no half-written tarball behind
    return tarball
