"""The Codex image: the base image plus the Codex CLI's native binary, built like the agent image but found by its
own recipe label.

``@openai/codex`` is a node launcher whose per-platform optional dependency, the npm alias
``@openai/codex@<version>-linux-x64``, carries a static musl executable that runs without node: the agent image's
recipe (:mod:`bench.sandbox.images.agent`) fetches that tarball with ``npm pack`` and copies the binary to
``/usr/local/bin/codex``. Its bundled ``bwrap`` stays out (the CLI runs with its own sandbox off: the container is the
sandbox) and so does its ``rg``.

A build stage inherits its parent's labels, so the layer's own labels replace the base image's; the recipe label
is :data:`RECIPE`, never the Claude Code agent image's ``agent``, so neither image can be taken for the other.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...errors import SandboxError
from ...sandbox.backends import SandboxBackend
from ...sandbox.images.agent import agent_context, agent_inputs, fetch_cli
from ...sandbox.images.registry import INPUTS_LABEL, RECIPE_LABEL, using
from ...sandbox.images.scan import require_neutral_image
from .recipe import IMAGE_RECIPE

__all__ = ["RECIPE", "CodexImage", "build_codex_image", "find_codex_image"]

RECIPE = "agent-codex"  # the recipe label's value


@dataclass(frozen=True)
class CodexImage:
    image_id: str
    inputs: str


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
    """The Codex image on ``base_image_id``, built unless one with the same inputs exists; scanned clean."""
    with using(backend) as images:
        binary = fetch_cli(cache, IMAGE_RECIPE)
        inputs = agent_inputs(base_image_id, binary, IMAGE_RECIPE)
        if find_codex_image(inputs, images) is None:
            with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
                context = agent_context(base_image_id, binary, IMAGE_RECIPE, Path(work) / "context.tar")
                labels = {RECIPE_LABEL: RECIPE, INPUTS_LABEL: inputs}
                images.build_image(context, tag=f"sandbox-{RECIPE}:{inputs[:12]}", labels=labels)
        made = find_codex_image(inputs, images)
        if made is None:
            raise SandboxError(f"the {RECIPE} image was built but no image carries inputs {inputs}")
        require_neutral_image(made.image_id, images, cache)  # like every image: scanned clean before use
        return made
