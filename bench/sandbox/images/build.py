"""Building the images: idempotent (an image whose recipe label and inputs digest match is reused) and timed.

tiny and base are rootfs tarballs imported through the backend (``docker import`` on Docker); agent is a layer the
backend builds on the base image's ID (``docker build``), and a memory system's image a layer on the agent image's
(:func:`build_layer`, from the packages its declaration names). Without a backend given, the default one is used. The
rootfs and CLI downloads are cached under :func:`cache_dir`, so even a rebuild after the engine lost its
images fetches nothing. Every image returned has scanned clean of the harness's name (:mod:`.scan`).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from ...contracts import Digest, Sha256
from ...errors import SandboxError
from ...harness import DEFAULT_HARNESS, harness_named
from ...machine_cache import cache_root
from ...store import Store
from ...suite.memory_system import ImageLayer
from ..backends import SandboxBackend
from ..layout import BASE_ENV
from .agent import agent_context, agent_inputs, fetch_cli
from .archive import archive_image
from .debian import DebianRecipe, base_rootfs, configured_mirror, host_codename
from .layer import fetch_layer, layer_context, layer_inputs
from .registry import INPUTS_LABEL, RECIPE_LABEL, ImageName, ImageRecord, find_image, list_images, using
from .scan import require_neutral_image
from .tiny import tiny_rootfs

__all__ = ["BuildResult", "build_image", "build_layer", "cache_dir"]


@dataclass(frozen=True)
class BuildResult:
    record: ImageRecord
    built: bool  # False: an image with the same inputs already existed
    seconds: float
    archive: Digest | None = None  # the ImageArchive document in the store, when asked to archive it


def cache_dir() -> Path:
    """Where rootfs tarballs and CLI binaries are kept between builds: ``images/`` under the machine's cache."""
    return cache_root() / "images"


def _labels(name: ImageName, inputs: str) -> dict[str, str]:
    return {RECIPE_LABEL: name.value, INPUTS_LABEL: inputs}


def _import(backend: SandboxBackend, name: ImageName, inputs: str, rootfs: bytes | Path) -> None:
    tag = f"sandbox-{name.value}:{inputs[:12]}"
    backend.import_image(rootfs, tag=tag, labels=_labels(name, inputs), env=BASE_ENV)


def _build_agent(backend: SandboxBackend, cache: Path) -> str:
    base = build_image(ImageName.BASE, backend).record  # the agent layer needs its base: built when missing
    recipe = harness_named(DEFAULT_HARNESS).image_recipe()  # one agent image: the default harness's
    binary = fetch_cli(cache, recipe)
    inputs = agent_inputs(base.image_id, binary, recipe)
    if find_image(ImageName.AGENT, inputs, backend) is None:
        with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
            context = agent_context(base.image_id, binary, recipe, Path(work) / "context.tar")
            labels = _labels(ImageName.AGENT, inputs)
            backend.build_image(context, tag=f"sandbox-agent:{inputs[:12]}", labels=labels)
    return inputs


def build_image(name: ImageName, backend: SandboxBackend | None = None, store: Store | None = None) -> BuildResult:
    """Build ``name`` unless an image with the same inputs exists; returns its record and the time taken. With
    ``store``, the image's archive is kept there too, so every node of a cluster loads this very image."""
    started = time.monotonic()
    with using(backend) as images:
        return _archived(_build(name, images), store, images, started)


def _archived(result: BuildResult, store: Store | None, images: SandboxBackend, started: float) -> BuildResult:
    """``result``, its image archived into ``store`` when one is given."""
    if store is None:
        return result
    archived = archive_image(store, result.record.image_id, images)
    return replace(result, archive=archived, seconds=time.monotonic() - started)


def _build(name: ImageName, backend: SandboxBackend) -> BuildResult:
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    before = {record.image_id for record in list_images(backend) if record.name is name}
    if name is ImageName.TINY:
        rootfs = tiny_rootfs()
        inputs = str(Sha256.of(rootfs))
        if find_image(name, inputs, backend) is None:
            _import(backend, name, inputs, rootfs)
    elif name is ImageName.BASE:
        suite = host_codename()
        recipe = DebianRecipe(mirror=configured_mirror(suite), suite=suite)
        inputs = recipe.inputs
        if find_image(name, inputs, backend) is None:
            _import(backend, name, inputs, base_rootfs(recipe, cache))
    elif name is ImageName.AGENT:
        inputs = _build_agent(backend, cache)
    else:
        raise SandboxError(
            "a layer image is built from a memory system's declared packages (build_layer), not by name; "
            "the suite plan builds each system's layer"
        )
    return _found(name, inputs, backend, before, started)


def _found(name: ImageName, inputs: str, backend: SandboxBackend, before: set[str], started: float) -> BuildResult:
    record = find_image(name, inputs, backend)
    if record is None:
        raise SandboxError(f"the {name.value} image was built but no image carries inputs {inputs}")
    require_neutral_image(record.image_id, backend, cache_dir())  # every image returned has scanned clean
    return BuildResult(record=record, built=record.image_id not in before, seconds=time.monotonic() - started)


def build_layer(layer: ImageLayer, backend: SandboxBackend | None = None, store: Store | None = None) -> BuildResult:
    """The agent image plus ``layer``'s packages, built unless an image with the same inputs exists; with
    ``store``, archived there as :func:`build_image` does."""
    with using(backend) as images:
        cache = cache_dir()
        cache.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        before = {record.image_id for record in list_images(images) if record.name is ImageName.LAYER}
        agent = build_image(ImageName.AGENT, images).record.image_id
        fetched = fetch_layer(cache, layer)
        inputs = layer_inputs(agent, layer, fetched)
        if find_image(ImageName.LAYER, inputs, images) is None:
            with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
                context = layer_context(agent, layer, fetched, Path(work) / "context.tar")
                labels = _labels(ImageName.LAYER, inputs)
                images.build_image(context, tag=f"sandbox-layer:{inputs[:12]}", labels=labels)
        return _archived(_found(ImageName.LAYER, inputs, images, before, started), store, images, started)
