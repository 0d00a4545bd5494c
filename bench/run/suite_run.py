"""What one suite plan carries from stage to stage: the suite run's settings and what the bundle collects."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..agent.harness_files import container_path
from ..contracts import Digest, ImageId, TreeDigest
from ..gateway import Mode
from ..harness import Harness, harness_named
from ..pipeline.builder import Link
from ..store import Store
from ..suite.memory_system import MemorySystem
from ..suite.suite import Suite

__all__ = ["CONTROL_CONDITION", "Published", "SuiteRun", "policy_mode"]

CONTROL_CONDITION = "no-memory"


@dataclass(frozen=True)
class SuiteRun:
    """What one plan needs besides the suite: where it runs and how many attempts it makes."""

    store: Store
    suite: Suite
    root: Path  # the suite directory, relative to where the plan runs (params hold no host paths)
    preregistrations: Path
    attempts: int
    build_sequence: int
    image_id: ImageId
    fixture: TreeDigest
    layers: dict[str, ImageId]  # memory system name -> its layer image, for systems that declare one
    provisioners: dict[str, Digest]  # memory system name -> its provisioner's code (a ProvisionerCode)
    selected: tuple[str, ...] = ()  # the memory systems to run (`run --memory`); empty: every declared one
    pools: dict[int, Link | None] = field(default_factory=dict)  # pool size -> its distractor-pool tree (0: none)
    harness_name: str | None = None  # the harness every arm runs (`run --harness`); None: the suite's own

    @property
    def harness(self) -> Harness:
        return harness_named(self.harness_name or self.suite.manifest.harness)

    @property
    def model(self) -> str:
        """The model the suite declares for the harness run (:meth:`~bench.suite.suite.SuiteManifest.model_for`)."""
        return self.suite.manifest.model_for(self.harness.name)

    @property
    def systems(self) -> tuple[MemorySystem, ...]:
        """The systems to run, each as the suite's harness runs it (an instructions file placed where it reads it)."""
        declared = self.suite.manifest.memory_systems
        instructions = str(container_path(self.harness.instructions_path))
        return tuple(s.placed(instructions) for s in declared if not self.selected or s.name in self.selected)


@dataclass
class Published:
    """What the bundle takes: records and admissions by label, and files by their bundle path."""

    records: dict[str, Link] = field(default_factory=dict)
    admissions: dict[str, Link] = field(default_factory=dict)
    files: dict[str, Link | Digest] = field(default_factory=dict)
    pages: dict[str, Link] = field(default_factory=dict)  # attempt label -> its transcript page
    preregistrations: dict[str, Digest] = field(default_factory=dict)  # "<challenge>/v<N>" -> its frozen bytes


def policy_mode(run: SuiteRun) -> bool:
    return run.suite.manifest.gateway_mode is Mode.POLICY
