"""Stages: declared functions from typed digests to typed digests, cached in the store's action cache."""

from .catalogue import Catalogue
from .context import StageContext
from .engine import ActionOutcome, execute
from .stage import NoInputs, NoParams, Port, Ports, Stage, StageKind, stage

__all__ = [
    "ActionOutcome",
    "Catalogue",
    "NoInputs",
    "NoParams",
    "Port",
    "Ports",
    "Stage",
    "StageContext",
    "StageKind",
    "execute",
    "stage",
]
