"""Stages: declared functions from digests to digests, cached in the store's action cache."""

from .engine import ActionOutcome, execute
from .stage import Stage, StageKind, get_stage, stage

__all__ = ["ActionOutcome", "Stage", "StageKind", "execute", "get_stage", "stage"]
