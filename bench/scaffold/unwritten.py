"""The scaffold's templates announce themselves, so a suite cannot run on a verifier nobody wrote."""

from __future__ import annotations

from pathlib import Path

from ..errors import ContractError
from ..suite.challenge import read_asset
from ..suite.suite import Suite

__all__ = ["UNWRITTEN_MARKER", "refuse_unwritten", "unwritten_assets"]

# In every template `new suite` writes for a human to replace; `run` refuses a suite while any asset holds it.
UNWRITTEN_MARKER = "UNWRITTEN TEMPLATE: replace this file"


def unwritten_assets(suite: Suite) -> list[Path]:
    """The verifiers and oracles of ``suite`` that are still templates."""
    found = []
    for loaded in suite.challenges:
        manifest = loaded.manifest
        assets = [manifest.verifier.asset, *([manifest.oracle.asset] if manifest.oracle else [])]
        for asset in assets:
            if UNWRITTEN_MARKER.encode() in read_asset(loaded.directory, asset):
                found.append(loaded.directory / asset.path)
    return found


def refuse_unwritten(suite: Suite, shown_as: Path) -> None:
    """Refuse, naming each file, a suite whose verifier or oracle is still the scaffold's template."""
    unwritten = unwritten_assets(suite)
    if unwritten:
        names = ", ".join(str(path.relative_to(suite.root)) for path in unwritten)
        raise ContractError(
            f"suite {suite.manifest.suite_id!r} is not ready to run: {names} still "
            f"{'is a template' if len(unwritten) == 1 else 'are templates'} (calibration would reject them: the "
            "template verifier fails every tree and the template oracle changes nothing)",
            path=str(unwritten[0]),
            hint=f"write them, then `stele-bench pin {shown_as}` and `stele-bench prereg freeze {shown_as}`",
        )
