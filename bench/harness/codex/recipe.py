"""The Codex CLI version the bench pins, where its binary is in the npm registry, and its image's recipe label.

The image (:func:`bench.images.harness_image.build_harness_image`) takes the platform package's static
musl binary alone: it runs without node or its sibling files. The bundled ``bwrap`` stays out (the CLI's own
sandbox is off: the container is the sandbox) and so does its ``rg``.
"""

from __future__ import annotations

from ..base import ImageRecipe

__all__ = ["CLI_VERSION", "IMAGE_LABEL", "IMAGE_RECIPE"]

CLI_VERSION = "0.169.0"  # the version whose interfaces docs/harnesses.md records
IMAGE_RECIPE = ImageRecipe(
    package="@openai/codex",
    version=f"{CLI_VERSION}-linux-x64",  # the platform package's own version (the launcher's optional dependency)
    binary="package/vendor/x86_64-unknown-linux-musl/bin/codex",
    command="codex",
    install_path="/usr/local/bin/codex",
)
IMAGE_LABEL = "agent-codex"  # its image's recipe label: never the default harness's "agent"
