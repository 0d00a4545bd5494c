"""Building the images: idempotent (an image whose recipe label and inputs digest match is reused) and timed.

tiny and base are ``docker import``-ed rootfs tarballs; agent is a ``docker build`` layer on the base image's ID.
The rootfs and CLI downloads are cached under :func:`cache_dir`, so even a rebuild after the engine lost its
images fetches nothing.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from ...contracts import Sha256
from ...errors import SandboxError
from ..docker_backend import docker_client
from ..layout import BASE_ENV, WORKSPACE
from .agent import agent_context, agent_inputs, fetch_cli
from .debian import DebianRecipe, base_rootfs, configured_mirror, host_codename
from .registry import INPUTS_LABEL, RECIPE_LABEL, ImageName, ImageRecord, find_image, list_images
from .tiny import tiny_rootfs

__all__ = ["BuildResult", "build_image", "cache_dir"]


@dataclass(frozen=True)
class BuildResult:
    record: ImageRecord
    built: bool  # False: an image with the same inputs already existed
    seconds: float


def cache_dir() -> Path:
    """Where rootfs tarballs and CLI binaries are kept between builds: $STELE_BENCH_CACHE or ~/.cache/stele-bench."""
    root = (
        os.environ.get("STELE_BENCH_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "stele-bench"
    )
    return Path(root) / "images"


def _changes(name: ImageName, inputs: str) -> list[str]:
    env = [f"ENV {key}={value}" for key, value in sorted(BASE_ENV.items())]
    return [f"LABEL {RECIPE_LABEL}={name.value}", f"LABEL {INPUTS_LABEL}={inputs}", f"WORKDIR {WORKSPACE}", *env]


def _imported(client: docker.DockerClient, response: str, name: ImageName) -> str:
    for line in response.splitlines():
        status = json.loads(line).get("status", "") if line.strip() else ""
        if status.startswith("sha256:"):
            return status
    raise SandboxError(f"the engine did not report an image ID importing {name.value}: {response[-500:]}")


def _import(client: docker.DockerClient, name: ImageName, inputs: str, rootfs: bytes | Path) -> None:
    tag = {"repository": f"sandbox-{name.value}", "tag": inputs[:12], "changes": _changes(name, inputs)}
    try:
        if isinstance(rootfs, Path):
            response = client.api.import_image_from_file(str(rootfs), **tag)
        else:
            response = client.api.import_image_from_data(rootfs, **tag)
    except docker.errors.APIError as exc:
        raise SandboxError(f"the engine refused to import the {name.value} rootfs: {exc.explanation}") from exc
    _imported(client, response, name)


def _build_agent(client: docker.DockerClient, cache: Path) -> str:
    base = build_image(ImageName.BASE, client).record  # the agent layer needs its base: built when missing
    binary = fetch_cli(cache)
    inputs = agent_inputs(base.image_id, binary)
    if find_image(ImageName.AGENT, inputs, client) is None:
        with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
            context = agent_context(base.image_id, binary, Path(work) / "context.tar")
            labels = {RECIPE_LABEL: ImageName.AGENT.value, INPUTS_LABEL: inputs}
            with context.open("rb") as stream:
                try:
                    client.images.build(
                        fileobj=stream, custom_context=True, labels=labels, tag=f"sandbox-agent:{inputs[:12]}", rm=True
                    )
                except (docker.errors.BuildError, docker.errors.APIError) as exc:
                    raise SandboxError(f"building the agent image on {base.image_id} failed: {exc}") from exc
    return inputs


def build_image(name: ImageName, client: docker.DockerClient | None = None) -> BuildResult:
    """Build ``name`` unless an image with the same inputs exists; returns its record and the time taken."""
    client = client or docker_client()
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    before = {record.image_id for record in _all(client, name)}
    if name is ImageName.TINY:
        rootfs = tiny_rootfs()
        inputs = str(Sha256.of(rootfs))
        if find_image(name, inputs, client) is None:
            _import(client, name, inputs, rootfs)
    elif name is ImageName.BASE:
        suite = host_codename()
        recipe = DebianRecipe(mirror=configured_mirror(suite), suite=suite)
        inputs = recipe.inputs
        if find_image(name, inputs, client) is None:
            _import(client, name, inputs, base_rootfs(recipe, cache))
    else:
        inputs = _build_agent(client, cache)
    record = find_image(name, inputs, client)
    if record is None:
        raise SandboxError(f"the {name.value} image was built but no image carries inputs {inputs}")
    return BuildResult(record=record, built=record.image_id not in before, seconds=time.monotonic() - started)


def _all(client: docker.DockerClient, name: ImageName) -> list[ImageRecord]:
    return [record for record in list_images(client) if record.name is name]
