"""The Codex image: the base image plus the Codex CLI's native binary (and the ``rg`` it puts on PATH), nothing else.

``@openai/codex`` is a node launcher whose per-platform optional dependency (the npm alias
``@openai/codex@<version>-linux-x64``) carries a static musl executable that runs without node, so ``npm pack``
fetches that platform tarball into the cache and two files are copied out of it: ``bin/codex`` to
``/usr/local/bin/codex`` and ``codex-path/rg`` (which the launcher would prefix to PATH) to ``/usr/local/bin/rg``.
Its bundled ``bwrap`` is left out: the CLI runs with its own sandbox off (inside a cap-dropped container bwrap fails
every command silently; docs/harnesses.md), the container is the sandbox.

The image is built like the Claude Code one, a layer on the base image's ID, and is found by its OWN recipe label
(:data:`RECIPE`): a build stage inherits its parent's labels, so the layer's labels replace both of them, and no
Codex image can ever be taken for the other harness's agent image (or the other way round).
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...contracts import Sha256, canonical_json
from ...errors import SandboxError
from ...sandbox.backends import SandboxBackend
from ...sandbox.images.registry import INPUTS_LABEL, RECIPE_LABEL, using
from ...sandbox.images.scan import require_neutral_image

__all__ = [
    "CLI_PACKAGE",
    "CLI_VERSION",
    "RECIPE",
    "CodexImage",
    "build_codex_image",
    "codex_context",
    "codex_inputs",
    "fetch_codex",
    "find_codex_image",
]

CLI_PACKAGE = "@openai/codex"
CLI_VERSION = "0.169.0"  # the version whose interfaces docs/harnesses.md records
_PLATFORM = "linux-x64"  # the npm alias of the optional dependency: @openai/codex@<version>-linux-x64
_VENDOR = "package/vendor/x86_64-unknown-linux-musl"
_MEMBERS = {"codex": f"{_VENDOR}/bin/codex", "rg": f"{_VENDOR}/codex-path/rg"}  # context name -> tarball member
RECIPE = "agent-codex"  # the recipe label's value: never the Claude agent image's "agent"
RECIPE_VERSION = 1
_DOCKERFILE = "FROM {base}\nCOPY --chown=0:0 codex rg /usr/local/bin/\n"


@dataclass(frozen=True)
class CodexImage:
    image_id: str
    inputs: str


def _npm_pack(work: Path, spec: str) -> Path:
    try:
        packed = subprocess.run(["npm", "pack", "--silent", spec], cwd=work, capture_output=True, text=True)
    except OSError as exc:
        raise SandboxError(f"cannot run npm to fetch {spec}: {exc}; install npm") from exc
    if packed.returncode != 0:
        raise SandboxError(f"`npm pack {spec}` failed: {packed.stderr.strip()[-1000:]}")
    return work / packed.stdout.strip().splitlines()[-1]


def fetch_codex(cache_dir: Path, version: str = CLI_VERSION) -> Path:
    """The directory holding ``codex`` and ``rg`` of ``version``, from the cache or fetched with ``npm pack``."""
    directory = cache_dir / f"codex-{version}"
    if all((directory / name).is_file() for name in _MEMBERS):
        return directory
    cache_dir.mkdir(parents=True, exist_ok=True)
    spec = f"{CLI_PACKAGE}@{version}-{_PLATFORM}"
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix="npm-") as work:
        tarball = _npm_pack(Path(work), spec)
        partial = Path(work) / "out"
        partial.mkdir()
        with tarfile.open(tarball) as archive:
            for name, member in _MEMBERS.items():
                data = archive.extractfile(member)
                if data is None:
                    raise SandboxError(f"{tarball.name} has no {member}; is {version} a native build?")
                (partial / name).write_bytes(data.read())
                (partial / name).chmod(0o755)
        partial.rename(directory)  # whole or not at all: a crash leaves no half-filled directory
    return directory


def _file_sha256(path: Path) -> Sha256:
    with path.open("rb") as stream:
        return Sha256(hashlib.file_digest(stream, "sha256").hexdigest())


def codex_inputs(base_image_id: str, binaries: Path) -> str:
    data = {
        "recipe": RECIPE,
        "version": RECIPE_VERSION,
        "base": base_image_id,
        "files": {name: _file_sha256(binaries / name) for name in sorted(_MEMBERS)},
        "dockerfile": _DOCKERFILE,
    }
    return str(Sha256.of(canonical_json(data)))


def codex_context(base_image_id: str, binaries: Path, destination: Path) -> Path:
    """The build context (Dockerfile, codex, rg) as a tar file; the binary is too big to hold in memory twice."""
    with tarfile.open(destination, "w") as archive:
        dockerfile = _DOCKERFILE.format(base=base_image_id).encode()
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        archive.addfile(info, io.BytesIO(dockerfile))
        for name in sorted(_MEMBERS):
            archive.add(binaries / name, arcname=name)
    return destination


def find_codex_image(inputs: str | None, backend: SandboxBackend) -> CodexImage | None:
    """The newest image labelled with this recipe (and exactly ``inputs`` when given), or None."""
    found = [
        image
        for image in backend.images(RECIPE_LABEL)
        if image.labels.get(RECIPE_LABEL) == RECIPE and (inputs is None or image.labels.get(INPUTS_LABEL) == inputs)
    ]
    if not found:
        return None
    newest = max(found, key=lambda image: image.created)
    return CodexImage(image_id=newest.image_id, inputs=newest.labels[INPUTS_LABEL])


def build_codex_image(base_image_id: str, cache: Path, backend: SandboxBackend | None = None) -> CodexImage:
    """The Codex image on ``base_image_id``, built unless one with the same inputs exists."""
    with using(backend) as images:
        binaries = fetch_codex(cache)
        inputs = codex_inputs(base_image_id, binaries)
        if find_codex_image(inputs, images) is None:
            with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
                context = codex_context(base_image_id, binaries, Path(work) / "context.tar")
                labels = {RECIPE_LABEL: RECIPE, INPUTS_LABEL: inputs}
                images.build_image(context, tag=f"sandbox-{RECIPE}:{inputs[:12]}", labels=labels)
        made = find_codex_image(inputs, images)
        if made is None:
            raise SandboxError(f"the {RECIPE} image was built but no image carries inputs {inputs}")
        require_neutral_image(made.image_id, images, cache)  # like every image: scanned clean before use
        return made
