"""A harness's own agent image: the base image plus the CLI its recipe names, found by the harness's own recipe label.

Built with the agent image's recipe (:mod:`.agent`: ``npm pack`` into the cache, the binary copied in), but labelled
with the label the harness gives (e.g. its name's), never the default harness's ``agent``: a build stage inherits
its parent's labels and the layer's own replace them, so no harness's image can be taken for another's.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import SandboxError
from ..harness import ImageRecipe
from ..sandbox.backends import SandboxBackend
from .agent import agent_context, agent_inputs, fetch_cli
from .engine_memo import images_changed, listed
from .labels import INPUTS_LABEL, RECIPE_LABEL, using
from .scan import require_neutral_image

__all__ = ["HarnessImage", "build_harness_image", "find_harness_image"]


@dataclass(frozen=True)
class HarnessImage:
    image_id: str
    inputs: str


def find_harness_image(label: str, inputs: str | None, backend: SandboxBackend) -> HarnessImage | None:
    """The newest image of recipe ``label`` (and exactly ``inputs`` when given), or None."""
    found = [
        image
        for image in listed(backend, RECIPE_LABEL)
        if image.labels.get(RECIPE_LABEL) == label and (inputs is None or image.labels.get(INPUTS_LABEL) == inputs)
    ]
    if not found:
        return None
    newest = max(found, key=lambda image: image.created)
    return HarnessImage(image_id=newest.image_id, inputs=newest.labels[INPUTS_LABEL])


def build_harness_image(
    recipe: ImageRecipe, label: str, base_image_id: str, cache: Path, backend: SandboxBackend | None = None
) -> HarnessImage:
    """``recipe``'s CLI on ``base_image_id`` labelled ``label``, built unless one with the same inputs exists;
    scanned clean like every image."""
    with using(backend) as images:
        binary = fetch_cli(cache, recipe)
        inputs = agent_inputs(base_image_id, binary, recipe, label)
        if find_harness_image(label, inputs, images) is None:
            with tempfile.TemporaryDirectory(dir=cache, prefix="context-") as work:
                context = agent_context(base_image_id, binary, recipe, Path(work) / "context.tar")
                labels = {RECIPE_LABEL: label, INPUTS_LABEL: inputs}
                try:
                    images.build_image(context, tag=f"sandbox-{label}:{inputs[:12]}", labels=labels)
                finally:
                    images_changed()
        made = find_harness_image(label, inputs, images)
        if made is None:
            raise SandboxError(f"the {label} image was built but no image carries inputs {inputs}")
        require_neutral_image(made.image_id, images, cache)
        return made
