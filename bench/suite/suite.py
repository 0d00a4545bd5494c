"""The suite manifest: one project at a pinned commit, one fixture, the challenges asked of it, and how they run.

A suite directory holds ``suite.json`` (a :class:`SuiteManifest`), the project's git objects (a bundle), the fixture
root and one directory per challenge. Every path in the manifest is a portable path relative to the suite
directory, except a challenge's ``policy`` asset, which like its verifier is relative to the challenge directory.
Everything here is runner-owned: an agent only ever sees the packaged project tree and the challenge prompts.

The commit is the project's pin: a 40-hex git id covers the whole tree and history, so the bundle's bytes (which
dulwich does not write deterministically) are not pinned again. A challenge's gateway policy is pinned by SHA-256
here, because the challenge manifest belongs to the question and the policy to how this suite stands in for a model.

A policy may name files in the agent's workspace through :data:`WORKSPACE_PLACEHOLDER`; :func:`render_policy` puts
the container's workspace path in its place, and the rendered bytes are what the gateway is configured with.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import Field, SerializerFunctionWrapHandler, StringConstraints, model_serializer, model_validator

from ..contracts import ContractModel, Document, PortablePath
from ..contracts.checked_files import resolved
from ..contracts.files import read_contract
from ..errors import ContractError
from ..gateway import Mode
from ..grading.memory_declaration import MemoryDeclaration
from ..harness import DEFAULT_HARNESS, HarnessName, default_unnamed, harness_named
from ..provision.fixture import Fixture, load_fixture
from .challenge import Asset, ChallengeManifest, load_challenge, read_asset
from .forward import ForwardSettings
from .memory_system import MemorySystem, SystemName

__all__ = [
    "PUBLIC_CONTRACTS",
    "SUITE_FILE",
    "WORKSPACE_PLACEHOLDER",
    "ChallengeCategory",
    "FixtureRef",
    "LoadedChallenge",
    "ProjectSource",
    "Suite",
    "SuiteChallenge",
    "SuiteManifest",
    "WorkspaceIdentity",
    "load_suite",
    "open_suite",
    "render_policy",
]

SUITE_FILE = "suite.json"
WORKSPACE_PLACEHOLDER = "{workspace}"
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
GitId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{40}$")]
Marker = Annotated[str, StringConstraints(min_length=1, pattern=r"\S")]
_SAFE_WORKSPACE = re.compile(r"^/[A-Za-z0-9._/-]*$")


class ChallengeCategory(enum.StrEnum):
    """The kind of memory value a challenge probes; a control is chosen because memory should not help."""

    INVESTIGATION = "investigation"
    FOCUSED_CODING = "focused-coding"
    CONTINUITY = "continuity"
    LOW_MEMORY_CONTROL = "low-memory-control"


# A remote's URL as an agent would see it in `git remote -v`: a plain https, ssh or scp-like address, no spaces or
# shell characters (it is written into the workspace's .git/config).
RemoteUrl = Annotated[
    str, StringConstraints(pattern=r"^(https://|ssh://|git@)[A-Za-z0-9][A-Za-z0-9._~:/@+-]{0,254}$", max_length=300)
]
# A branch name git accepts (git check-ref-format --branch): components of plain characters, each starting with a
# letter or digit, no '..', no trailing '.' or '/' (a '.lock' ending is refused by WorkspaceIdentity).
_COMPONENT = r"[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*"
BranchName = Annotated[str, StringConstraints(pattern=rf"^{_COMPONENT}(/{_COMPONENT})*$", max_length=100)]


class WorkspaceIdentity(ContractModel):
    """The repository the workspace presents itself as: one remote and its default branch, checked out.

    Both arms get the same ``.git``: one synthetic commit holding exactly the packaged tree, never the project's
    history (:mod:`bench.stages.workspace_identity`). Memory systems that key their store by the repository then
    see one, and the same one in every arm.
    """

    remote_url: RemoteUrl
    default_branch: BranchName = "main"

    @model_validator(mode="after")
    def _a_branch_git_accepts(self) -> Self:
        if any(part.endswith(".lock") for part in self.default_branch.split("/")):
            raise ValueError(f"default_branch {self.default_branch!r}: git refuses a ref component ending '.lock'")
        return self


class ProjectSource(ContractModel):
    bundle: PortablePath  # a git bundle (or repository directory), relative to the suite directory
    commit: GitId
    repository: Name  # the label receipts name the project by
    identity: WorkspaceIdentity | None = None  # None: the workspace has no .git at all


PoolSize = Annotated[int, Field(ge=0, le=10_000)]


class FixtureRef(ContractModel):
    path: PortablePath  # the fixture root, relative to the suite directory
    graph_arm: Name  # the graph arm the memory condition is restored from
    # How many of the fixture's distractor documents each run seeds beside the evidence: every challenge runs its
    # attempts once per size (say 0, 50 and 500), so the report can show each system's effect against noise.
    # Absent: the fixture's whole pool (none when it declares none).
    pool_sizes: Annotated[tuple[PoolSize, ...], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _sizes_distinct(self) -> Self:
        if self.pool_sizes is not None and len(set(self.pool_sizes)) != len(self.pool_sizes):
            raise ValueError(f"pool_sizes must name each size once, got {list(self.pool_sizes)}")
        return self


class SuiteChallenge(ContractModel):
    directory: PortablePath  # relative to the suite directory; its last component is the challenge id
    category: ChallengeCategory
    policy: Asset | None = None  # the gateway policy for policy mode, relative to the challenge directory
    # Markers of use for grading's second layer: workspace files the memory points at, names only it gives.
    anchored_paths: tuple[PortablePath, ...] = ()
    identifiers: tuple[Marker, ...] = ()
    # The evidence documents that answer this challenge (paths in the evidence corpus): the oracle its memory's
    # retrieval is scored against. None for a challenge memory should not help with.
    oracle: tuple[PortablePath, ...] = ()

    @property
    def challenge_id(self) -> str:
        return self.directory.rsplit("/", 1)[-1]


class SuiteManifest(Document):
    kind: Literal["suite"] = "suite"
    schema_version: Literal[2] = 2
    suite_id: Name
    project: ProjectSource
    fixture: FixtureRef
    challenges: Annotated[tuple[SuiteChallenge, ...], Field(min_length=1)]
    # Each a treatment condition; one control arm per attempt is shared by all of them.
    memory_systems: Annotated[tuple[MemorySystem, ...], Field(min_length=1)]
    attempts: Annotated[int, Field(ge=1, le=100)] = 2
    model: Annotated[str, StringConstraints(min_length=1)]
    gateway_mode: Mode
    forward: ForwardSettings | None = None  # how forward mode reaches the provider; required there, refused otherwise
    # The memory system every other is also compared with, attempt by attempt (a static-context baseline: the
    # notes written down); it must be one of ``memory_systems``.
    baseline: SystemName | None = None
    # The coding agent every arm runs (:mod:`bench.harness`); a suite that names none runs the default.
    harness: HarnessName = DEFAULT_HARNESS
    # The model of each other harness the suite may run under (`run --harness`): ``model`` is ``harness``'s, and
    # a model is one of its harness's own (another harness's catalogue name can change how that harness behaves).
    models: dict[HarnessName, Annotated[str, StringConstraints(min_length=1)]] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _default_harness_unnamed(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The default harness and empty ``models`` are left out: a suite written before harnesses were named keeps
        its digest."""
        dumped = default_unnamed(handler(self))
        if not dumped.get("models"):
            dumped.pop("models", None)
        return dumped

    def model_for(self, harness: str) -> str:
        """The model a run under ``harness`` asks for; a harness the suite declares no model for is refused."""
        if harness == self.harness:
            return self.model
        if harness not in self.models:
            raise ContractError(
                f"suite {self.suite_id!r} declares no model for harness {harness!r} (its `model` is harness "
                f'{self.harness!r}\'s); add one to the suite\'s `models`, e.g. "models": {{"{harness}": "MODEL"}}',
                field="models",
                expected=sorted({self.harness, *self.models}),
                actual=harness,
            )
        return self.models[harness]

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for harness in (self.harness, *self.models):
            harness_named(harness)  # an unknown one is refused, naming the known ones
        if self.harness in self.models:
            raise ValueError(f"`models` names the suite's own harness {self.harness!r}: its model is `model`")
        ids = [challenge.challenge_id for challenge in self.challenges]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"challenge directories must end in distinct ids; repeated: {', '.join(repeated)}")
        names = [system.name for system in self.memory_systems]
        if len(set(names)) != len(names):
            raise ValueError(f"memory systems need distinct names; got {names}")
        if self.gateway_mode is Mode.POLICY:
            missing = [c.challenge_id for c in self.challenges if c.policy is None]
            if missing:
                raise ValueError(f"gateway_mode 'policy' needs a policy for every challenge; none for {missing}")
        if (self.gateway_mode is Mode.FORWARD) != (self.forward is not None):
            raise ValueError(
                "`forward` (provider, key variable, prices, caps) is given exactly in gateway_mode 'forward'"
            )
        if self.baseline is not None and self.baseline not in names:
            raise ValueError(f"baseline {self.baseline!r} is not among the declared memory systems {names}")
        if self.forward is not None:
            for model in (self.model, *self.models.values()):
                if model not in self.forward.prices:
                    raise ValueError(f"forward.prices has no price for the model {model!r}; spending must be metered")
        return self

    def memory_system(self, name: str) -> MemorySystem:
        for system in self.memory_systems:
            if system.name == name:
                return system
        known = ", ".join(system.name for system in self.memory_systems)
        raise ContractError(f"suite {self.suite_id!r} declares no memory system {name!r}; it declares: {known}")

    def challenge(self, challenge_id: str) -> SuiteChallenge:
        for challenge in self.challenges:
            if challenge.challenge_id == challenge_id:
                return challenge
        known = ", ".join(c.challenge_id for c in self.challenges)
        raise ContractError(f"suite {self.suite_id!r} has no challenge {challenge_id!r}; it declares: {known}")


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (SuiteManifest,)


def load_suite(path: Path) -> SuiteManifest:
    """Read ``path`` (a ``suite.json`` or the directory holding one) through the suite contract."""
    manifest = path / SUITE_FILE if path.is_dir() else path
    hint = f"pass a suite directory or its {SUITE_FILE}"
    return read_contract(manifest, SuiteManifest, "the suite manifest", hint)


@dataclass(frozen=True)
class LoadedChallenge:
    entry: SuiteChallenge
    directory: Path
    manifest: ChallengeManifest


@dataclass(frozen=True)
class Suite:
    """A suite whose every part was found and checked: challenges, pinned assets, fixture, graph arm, bundle."""

    root: Path
    manifest: SuiteManifest
    fixture: Fixture
    challenges: tuple[LoadedChallenge, ...]

    @property
    def bundle(self) -> Path:
        return self.root / self.manifest.project.bundle

    @property
    def fixture_root(self) -> Path:
        return self.root / self.manifest.fixture.path

    @property
    def pool_sizes(self) -> tuple[int, ...]:
        """The distractor pool sizes every challenge runs at (0: the evidence alone)."""
        return self.fixture.pool_sizes(self.manifest.fixture.pool_sizes)

    def challenge(self, challenge_id: str) -> LoadedChallenge:
        entry = self.manifest.challenge(challenge_id)
        return next(loaded for loaded in self.challenges if loaded.entry == entry)

    def policy(self, challenge_id: str, workspace: str) -> bytes:
        """The challenge's pinned policy with ``workspace`` in place of the placeholder (what the gateway serves)."""
        loaded = self.challenge(challenge_id)
        if loaded.entry.policy is None:
            raise ContractError(f"challenge {challenge_id!r} of suite {self.manifest.suite_id!r} declares no policy")
        return render_policy(read_asset(loaded.directory, loaded.entry.policy), workspace)

    def memory(self, challenge_id: str) -> MemoryDeclaration:
        """What grading looks for: the fixture's phrases and the challenge's markers of use."""
        entry = self.manifest.challenge(challenge_id)
        return MemoryDeclaration(
            phrases=self.fixture.memory_phrases, anchored_paths=entry.anchored_paths, identifiers=entry.identifiers
        )


def open_suite(path: Path) -> Suite:
    """Load the suite at ``path`` and everything it names, refusing the first part that is missing or off its pin."""
    manifest = load_suite(path)
    root = resolved(path if path.is_dir() else path.parent, "the suite directory")
    bundle = root / manifest.project.bundle
    if not bundle.exists():
        raise ContractError(f"suite {manifest.suite_id!r}: the project bundle {bundle} does not exist")
    fixture = load_fixture(root / manifest.fixture.path)
    fixture.graph_arm(manifest.fixture.graph_arm)  # raises naming the arms it does declare
    fixture.pool_sizes(manifest.fixture.pool_sizes)  # raises naming the sizes past the fixture's pool
    _check_oracles(manifest, root / manifest.fixture.path / fixture.evidence_corpus.path)
    return Suite(root, manifest, fixture, tuple(_load_challenge(root, entry) for entry in manifest.challenges))


def _check_oracles(manifest: SuiteManifest, evidence: Path) -> None:
    """Every oracle document a challenge names is an evidence document: a typo, or a distractor named as oracle,
    is refused now, not scored as a retrieval the memory could never make."""
    documents = (
        {evidence.name}
        if evidence.is_file()
        else {p.relative_to(evidence).as_posix() for p in evidence.rglob("*") if p.is_file()}
    )
    for entry in manifest.challenges:
        unknown = [path for path in entry.oracle if path not in documents]
        if unknown:
            raise ContractError(
                f"suite {manifest.suite_id!r} challenge {entry.challenge_id!r} names oracle document(s) "
                f"{', '.join(unknown)}, which the evidence corpus {evidence} does not hold; an oracle is an evidence "
                "document, never a distractor",
                field="oracle",
                actual=unknown,
            )


def _load_challenge(root: Path, entry: SuiteChallenge) -> LoadedChallenge:
    directory = root / entry.directory
    manifest = load_challenge(directory)
    if manifest.challenge_id != entry.challenge_id:
        raise ContractError(
            f"{directory}/challenge.json names challenge {manifest.challenge_id!r}, but its directory says "
            f"{entry.challenge_id!r}; rename one so they agree"
        )
    assets = [manifest.verifier.asset, *([manifest.oracle.asset] if manifest.oracle else [])]
    for asset in [*assets, *([entry.policy] if entry.policy else [])]:
        read_asset(directory, asset)  # refuses an escaping path or a SHA-256 off its pin
    return LoadedChallenge(entry, directory, manifest)


def render_policy(template: bytes, workspace: str) -> bytes:
    """``template`` with every :data:`WORKSPACE_PLACEHOLDER` replaced by ``workspace``.

    The workspace must be an absolute path of plain characters, so the substitution cannot break the JSON around
    it or smuggle in anything else.
    """
    if not _SAFE_WORKSPACE.fullmatch(workspace):
        raise ContractError(
            f"workspace {workspace!r} cannot be put into a policy: use an absolute path of letters, digits, . _ - /"
        )
    return template.replace(WORKSPACE_PLACEHOLDER.encode(), workspace.encode())
