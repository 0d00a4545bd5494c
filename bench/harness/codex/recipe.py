"""The Codex CLI version the bench pins, and where its binary is in the npm registry (built by :mod:`.image`)."""

from __future__ import annotations

from ..base import ImageRecipe

__all__ = ["CLI_VERSION", "IMAGE_RECIPE"]

CLI_VERSION = "0.169.0"  # the version whose interfaces docs/harnesses.md records
IMAGE_RECIPE = ImageRecipe(
    package="@openai/codex",
    version=f"{CLI_VERSION}-linux-x64",  # the platform package's own version (the launcher's optional dependency)
    binary="package/vendor/x86_64-unknown-linux-musl/bin/codex",
    command="codex",
    install_path="/usr/local/bin/codex",
)
