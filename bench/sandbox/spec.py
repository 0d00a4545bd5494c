"""A container as data: what the runner asks the engine for, compared field by field between arms.

Both arms' specs are built before either container starts. :func:`spec_diff` records every field where they
differ; :func:`check_one_respect` refuses a pair that differs in anything but the declared memory attachment, and
:func:`check_neutral` refuses any agent-visible field (hostname, environment, mount paths on both sides, working
directory) that names the harness, a condition or the experiment. :func:`prepare_pair` makes all three checks on a
pair's specs and returns the diff receipt.
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field

from ..contracts import ContractModel, Digest, Document
from ..errors import SandboxError
from .layout import BASE_ENV, GATEWAY_ALIAS, HOSTNAME, USER, WORKSPACE

__all__ = [
    "ContainerSpec",
    "FieldDifference",
    "Limits",
    "MemoryAttachment",
    "Mount",
    "NetworkMode",
    "NetworkSpec",
    "SandboxEnvironment",
    "SpecDiffReceipt",
    "check_neutral",
    "check_one_respect",
    "container_spec",
    "identity_terms_in",
    "prepare_pair",
    "runner_name",
    "spec_diff",
]


class NetworkMode(enum.StrEnum):
    NONE = "none"  # loopback only
    PUBLIC = "public"  # the engine's default bridge, with egress
    MODEL_ONLY = "model-only"  # an internal network whose only other member is the model gateway


class SandboxEnvironment(Protocol):
    """What a container's environment must say, whoever declares it (a challenge's ``Environment`` does): the seam
    names its own needs rather than importing the suite's types."""

    @property
    def network_mode(self) -> NetworkMode: ...

    @property
    def cpus(self) -> float: ...

    @property
    def memory_mb(self) -> int: ...


class Mount(ContractModel):
    """A bind mount. ``source`` is what a record shows: a portable name for what is mounted (``runner:<file>@<hash>``
    for a file the runner wrote, ``restore:<system>/<location>`` for restored state; see :func:`runner_name`).
    ``host`` is where it lies on this machine: bound when the container starts and never stored, so no record or
    spec-diff carries a host path (a publication must not). A mount read back from a record has no ``host`` and
    cannot start a container."""

    source: str
    target: str
    read_only: bool = True
    digest: Digest | None = None  # the bytes mounted as the container starts (a blob or a tree), where recorded
    host: str | None = Field(default=None, exclude=True, repr=False)

    @classmethod
    def of(cls, host: Path, name: str, target: str, read_only: bool = True) -> Mount:
        return cls(source=name, target=target, read_only=read_only, host=str(host))

    @property
    def bound(self) -> str:
        """The host path the engine binds; refused for a mount that names none (one read back from a record)."""
        if self.host is None:
            raise SandboxError(
                f"the mount of {self.source} at {self.target} names no host path (a recorded spec); "
                "build the spec anew to start a container"
            )
        return self.host


def runner_name(name: str, data: bytes) -> str:
    """The portable name of a file the runner wrote with ``data``: its name and the start of its SHA-256, so two
    arms' spec-diff shows whether their files differ without naming where they were staged."""
    return f"runner:{name}@{hashlib.sha256(data).hexdigest()[:16]}"


class Limits(ContractModel):
    cpus: float = Field(gt=0)
    memory_mb: int = Field(gt=0)
    pids: int = Field(default=4096, gt=0)


class NetworkSpec(ContractModel):
    mode: NetworkMode
    gateway_alias: str | None = None  # the name the gateway answers to on a model-only network


class MemoryAttachment(ContractModel):
    """The one respect in which the arms may differ: how the memory system reaches the agent.

    ``image_id`` is the memory system's own agent image (the agent image plus its declared packages), when it
    declares an image layer: the container then starts from it instead of the spec's image, and a spec diff
    names it as ``attachment.image_id``.
    """

    env: dict[str, str] = Field(default_factory=dict)
    mounts: tuple[Mount, ...] = ()
    image_id: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")


class ContainerSpec(ContractModel):
    image_id: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    user: str
    env: dict[str, str]
    mounts: tuple[Mount, ...] = ()
    limits: Limits
    network: NetworkSpec
    hostname: str
    workdir: str
    command: tuple[str, ...]
    attachment: MemoryAttachment | None = None

    def effective_env(self) -> dict[str, str]:
        return {**self.env, **(self.attachment.env if self.attachment else {})}

    def effective_mounts(self) -> tuple[Mount, ...]:
        """The base mounts, then the attachment's; an attachment mount replaces a base mount at the same target
        (a system that declares the CLI's own memory replaces the settings that turn it off)."""
        attached = self.attachment.mounts if self.attachment else ()
        replaced = {mount.target for mount in attached}
        return tuple(m for m in self.mounts if m.target not in replaced) + attached

    def effective_image(self) -> str:
        """The image the container starts from: the attachment's layer image when it has one."""
        if self.attachment is not None and self.attachment.image_id is not None:
            return self.attachment.image_id
        return self.image_id


class FieldDifference(ContractModel):
    field: str  # dotted path into the spec, e.g. "attachment.env.MEM_URL"
    first: Any
    second: Any


class SpecDiffReceipt(Document):
    kind: Literal["spec-diff"] = "spec-diff"
    schema_version: Literal[1] = 1
    first_label: str
    second_label: str
    differences: tuple[FieldDifference, ...]
    only_attachment: bool


def _flatten(value: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        for key in sorted(value):
            yield from _flatten(value[key], f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix, value


def spec_diff(first: ContainerSpec, second: ContainerSpec, labels: tuple[str, str]) -> SpecDiffReceipt:
    """Every dotted field where ``first`` and ``second`` differ, sorted, as a deterministic receipt."""
    left = dict(_flatten(first.model_dump(mode="json"), ""))
    right = dict(_flatten(second.model_dump(mode="json"), ""))
    differences = tuple(
        FieldDifference(field=key, first=left.get(key), second=right.get(key))
        for key in sorted(left.keys() | right.keys())
        if left.get(key) != right.get(key)
    )
    only = all(difference.field.split(".")[0] == "attachment" for difference in differences)
    return SpecDiffReceipt(first_label=labels[0], second_label=labels[1], differences=differences, only_attachment=only)


def check_one_respect(receipt: SpecDiffReceipt) -> None:
    """Refuse a pair whose specs differ outside the memory attachment."""
    if not receipt.only_attachment:
        stray = [d.field for d in receipt.differences if d.field.split(".")[0] != "attachment"]
        raise SandboxError(
            f"the {receipt.first_label} and {receipt.second_label} container specs differ in {', '.join(stray)}, "
            "not only in the memory attachment; make those fields equal before starting the pair"
        )


# Identity terms for fields the runner writes itself (the seed's stricter set): each names the harness, an arm
# or the experiment. Checked as whole words so "armv7" or "controller" do not trip it.
_IDENTITY = re.compile(
    r"(stele|bench|benchmark|treatment|control|experiment|condition|fixture|arm|baseline|harness|oracle|verifier)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]+")


def identity_terms_in(text: str) -> list[str]:
    """The identity terms in ``text``, matched against its alphabetic words and their camel/snake pieces."""
    pieces = {word.lower() for word in _WORD.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", text))}
    return sorted({piece for piece in pieces if _IDENTITY.fullmatch(piece)} | _substrings(text))


def _substrings(text: str) -> set[str]:
    # The harness's own name is refused even inside a longer word (a path like /tmp/stelebench-x).
    lowered = text.lower()
    return {term for term in ("stele", "bench") if term in lowered}


def check_neutral(spec: ContainerSpec) -> None:
    """Refuse a spec whose agent-visible fields name the harness, a condition or the experiment."""
    visible = {"hostname": spec.hostname, "workdir": spec.workdir, "user": spec.user}
    visible |= {f"env {key}": f"{key}={value}" for key, value in spec.effective_env().items()}
    for mount in spec.effective_mounts():  # the host path shows in the container's /proc/self/mountinfo
        visible[f"mount {mount.target}"] = f"{mount.bound} {mount.target}"
    found = {where: terms for where, text in visible.items() if (terms := identity_terms_in(text))}
    if found:
        detail = "; ".join(f"{where}: {', '.join(terms)}" for where, terms in sorted(found.items()))
        raise SandboxError(f"agent-visible container fields name the harness or the experiment ({detail}); rename them")


def container_spec(
    image_id: str,
    environment: SandboxEnvironment,
    command: tuple[str, ...],
    *,
    network: NetworkMode | None = None,
    env: dict[str, str] | None = None,
    mounts: tuple[Mount, ...] = (),
    attachment: MemoryAttachment | None = None,
) -> ContainerSpec:
    """The spec every runner container starts from: the challenge's limits, the fixed user, hostname and workdir.

    ``network`` overrides the challenge's mode (prebuild and verifier runs have no gateway to talk to).
    """
    mode = network or environment.network_mode
    return ContainerSpec(
        image_id=image_id,
        user=USER,
        env={**BASE_ENV, **(env or {})},
        mounts=mounts,
        limits=Limits(cpus=environment.cpus, memory_mb=environment.memory_mb),
        network=NetworkSpec(mode=mode, gateway_alias=GATEWAY_ALIAS if mode is NetworkMode.MODEL_ONLY else None),
        hostname=HOSTNAME,
        workdir=WORKSPACE,
        command=command,
        attachment=attachment,
    )


def prepare_pair(first: ContainerSpec, second: ContainerSpec, labels: tuple[str, str]) -> SpecDiffReceipt:
    """Check both arms' specs and return their diff receipt; raises before any container starts.

    Each spec must be neutral (:func:`check_neutral`) and the two may differ only in the memory attachment
    (:func:`check_one_respect`).
    """
    check_neutral(first)
    check_neutral(second)
    receipt = spec_diff(first, second, labels)
    check_one_respect(receipt)
    return receipt
