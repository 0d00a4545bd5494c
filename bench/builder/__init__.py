"""Stages: declared functions from typed digests to typed digests, cached in the store's action cache."""

from .catalogue import Catalogue
from .context import StageContext
from .execution import ActionOutcome, execute
from .stage import (
    LOCATOR,
    SUPPLIED,
    Locator,
    NoInputs,
    NoParams,
    Port,
    Ports,
    Stage,
    StageKind,
    TreeReads,
    keyed_params,
    stage,
)

__all__ = [
    "LOCATOR",
    "SUPPLIED",
    "ActionOutcome",
    "Catalogue",
    "Locator",
    "NoInputs",
    "NoParams",
    "Port",
    "Ports",
    "Stage",
    "StageContext",
    "StageKind",
    "TreeReads",
    "execute",
    "keyed_params",
    "stage",
]
