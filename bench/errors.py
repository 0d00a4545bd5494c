"""The one error hierarchy of stele-bench.

Every error the package raises on purpose derives from :class:`BenchError`. The whole tree, wherever each class
lives::

    BenchError                          (bench.errors) base; keeps path / field / expected / actual / hint
     +-- ContractError                  a document or argument breaks its contract (names the field)
     |    +-- UsageError                the command line itself is wrong (an unknown option, a bad value)
     |    +-- PlanError                 a plan's link or source breaks a stage's declaration
     |    +-- PreregistrationMoved      (bench.analysis.prereg) a frozen input moved since it was preregistered
     |    +-- BundleError               (bench.publish.bundle_layout) a bundle file is not what publication expects
     |    +-- MixedKeysError            (bench.publish.svg) two comparability keys on one trend line
     +-- ProjectNotFound                no stele-bench project where the command looked (no stele-bench.toml)
     +-- StoreError                     the object store cannot do what was asked
     |    +-- StoreNotFound             a command that only reads was pointed at a directory holding no store
     |    +-- ObjectMissing             a digest names no stored object
     |    +-- ObjectCorrupt             stored bytes no longer hash to their name
     |    +-- StoreCorrupt              a file of the store cannot be read (a damaged index, pack or loose file)
     |    +-- RunLeaseHeld              (bench.run_lease) another `demo` or `run` holds the project (`--no-wait`)
     +-- StageError                     a stage was declared or invoked wrongly
     |    +-- MissingSurface            (bench.packaging.certify) certification was not given a surface
     |    +-- PipelineStopped           (bench.pipeline.failure) the pipeline stopped; exits as the stage's own error
     +-- SourceError                    an input from outside the store (git repository, directory) is refused
     |    +-- CorpusError               (bench.packaging.corpus) a commit's tree is refused at a path
     |    +-- CommitNotFound            (bench.packaging.gitsource) a commit or ref is not in the repository
     |    +-- GitSourceCorrupt          (bench.packaging.gitsource) git objects or a bundle cannot be read
     +-- SandboxError                   the container engine (or the process backend) refused or failed
     |    +-- ImageNotNeutral           (bench.images.scan) an image's filesystem names the harness
     +-- ExecutorError                  the executor (a Ray cluster) cannot be reached, or lost an invocation
     +-- ProvisionerError               a memory provisioner misbehaved (carries a reason code)
     |    +-- ProvisionRefused          (bench.provision.errors) one refusal, with its RefusalReason
     +-- FenceError                     the money fence stopped a paid run
     |    +-- FenceStopped              (bench.fence.errors) ... and recorded why in a FenceRecord
     |    +-- AccountStopped            (bench.fence.account) ... earlier: a stop latched the key's account
     +-- ProviderError                  (bench.fence.errors) a provider's quota API could not be read
     |    +-- ProviderUnreachable       transport: refused, reset, timed out, or a 5xx/429 answer
     |    +-- KeyRejected               the provider refused the key (401/403)
     |    +-- ProviderResponseInvalid   an answer that is not the documented shape
     +-- GatewayError                   (bench.gateway.errors) the gateway cannot start or serve as configured
     |    +-- PolicyDigestMismatch      a policy file's bytes are not the pinned ones
     |    +-- UnreadableRequest         a request body its dialect cannot read as a conversation (answered 400)
     +-- PublicationRefused             (bench.publish.checks) a publication check failed; lists the findings
     +-- SystemRefused                  the operating system refused (a full disk, a permission); names the file

User and configuration mistakes raise; a stage that ran and failed is a recorded result, not an exception.
Errors keep their inputs as attributes (``path``, ``field``, ``expected``, ``actual``, ``hint`` here, and each
subclass its own, such as ``digest`` or ``reason``) so callers report them without parsing messages, and
:meth:`BenchError.details` gives them as one JSON-ready mapping.

Every class has a stable ``code`` (its name in kebab case without a trailing ``Error``: ``contract``,
``object-missing``, ``provision-refused``) and an ``exit_code``; :meth:`BenchError.as_json` is the error object
the command line prints with ``--json``: ``{"code", "type", "message", "exit_code", ...the details}``.

Exit codes, one per family (:data:`EXIT_CODES`, and README.md's table): 1 a check whose answer is no (verify found
differences, certification rejected), 2 usage, 3 store corrupt, 4 objects missing (5 is
``store fsck`` finding both), 6 contract, 7 no project, 8 store, 9 source, 10 sandbox, 11 provisioner, 12 money
fence or provider, 13 gateway, 14 publication refused, 15 stage or a stopped pipeline, 16 executor; 70 a bug; 74 the
operating system refused; 128 + N a stop signal N.
Errors from a library underneath (dulwich, sqlite3, pydantic, the Docker SDK) are translated into this tree once,
at the module that calls the library, naming the input; anything else that reaches the command line is a bug,
reported in one line with the pointer to ``--debug``. Outside the tree on purpose: a stop signal raises
:class:`bench.stop_signals.Interrupted`, a ``KeyboardInterrupt``, so that it unwinds past every ``except
Exception`` and runs every cleanup on the way out.
"""

from __future__ import annotations

import errno
import functools
import re
from collections.abc import Callable
from enum import Enum
from typing import Any, ClassVar

__all__ = [
    "EXIT_CODES",
    "NO_SPACE",
    "REFUSED_BY_SYSTEM",
    "BenchError",
    "ContractError",
    "ExecutorError",
    "FenceError",
    "ObjectCorrupt",
    "ObjectMissing",
    "PlanError",
    "ProjectNotFound",
    "ProvisionerError",
    "SandboxError",
    "SourceError",
    "StageError",
    "StoreCorrupt",
    "StoreError",
    "StoreNotFound",
    "SystemRefused",
    "UsageError",
    "json_ready",
    "printable",
]

_WORD_START = re.compile(r"(?<!^)(?=[A-Z])")


def _code_of(name: str) -> str:
    stem = name[: -len("Error")] if name.endswith("Error") and name != "Error" else name
    return _WORD_START.sub("-", stem).lower()


def printable(text: str) -> str:
    """``text`` as UTF-8 can carry it. A path that is not UTF-8 reaches Python as text holding lone surrogates
    (one per undecodable byte): each such byte is shown as ``\\xNN``, any other lone surrogate as ``\\uNNNN``,
    never written raw, so a message or a ``--json`` object stays valid UTF-8 whatever bytes an argument held."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def json_ready(value: object) -> Any:
    """``value`` as JSON can carry it: containers element by element, enums by value, text as UTF-8 can carry it
    (:func:`printable`), anything else as text."""
    if isinstance(value, str):
        return printable(value)
    if value is None or isinstance(value, int | float | bool):
        return value
    if isinstance(value, Enum):
        return json_ready(value.value)
    if isinstance(value, dict):
        return {printable(str(key)): json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = [json_ready(item) for item in value]
        return sorted(items, key=str) if isinstance(value, set | frozenset) else items
    return printable(str(value))


class BenchError(Exception):
    """Base of every error stele-bench raises on purpose; ``message`` is one line naming what and where."""

    exit_code = 1
    code: ClassVar[str] = "bench"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" not in cls.__dict__:
            cls.code = _code_of(cls.__name__)

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        field: str | None = None,
        expected: object = None,
        actual: object = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.field = field
        self.expected = expected
        self.actual = actual
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message

    def details(self) -> dict[str, Any]:
        """The error's inputs, by attribute name, as JSON-ready values (absent ones left out)."""
        found: dict[str, Any] = {"type": type(self).__name__}
        for name, value in vars(self).items():
            if name.startswith("_") or name == "message" or value is None:
                continue
            found[name] = json_ready(value)
        return found

    def as_json(self) -> dict[str, Any]:
        """The error object ``--json`` prints: code, type, message and exit code, then the details."""
        return {"code": self.code, "message": printable(self.message), "exit_code": self.exit_code, **self.details()}


class ContractError(BenchError, ValueError):
    """A document or argument breaks its contract."""

    exit_code = 6


class UsageError(ContractError):
    """The command line is wrong: an unknown command or option, a missing or malformed value."""

    exit_code = 2


class PlanError(ContractError):
    """An invocation's input breaks its stage's declaration; refused when the plan is loaded, before doit runs."""

    def __init__(
        self, invocation: str, port: str, problem: str, *, expected: str | None = None, actual: str | None = None
    ) -> None:
        super().__init__(
            f"plan invocation {invocation!r}: input {port!r} {problem}", field=port, expected=expected, actual=actual
        )
        self.invocation = invocation
        self.port = port


class ProjectNotFound(BenchError):
    """No project where the command looked: ``path`` is where it started (and walked up from, unless named)."""

    exit_code = 7

    def __init__(self, where: object, *, walked: bool) -> None:
        looked = f"in {where} or any directory above it" if walked else f"at {where}"
        super().__init__(
            f"no stele-bench project {looked} (a project is a directory holding stele-bench.toml)",
            path=str(where),
            hint="run `stele-bench init` to make one here, or pass --project DIR (or --store DIR for a store alone)",
        )


class StoreError(BenchError):
    """The object store cannot do what was asked."""

    exit_code = 8


class StoreNotFound(StoreError):
    """A reading command was pointed at a directory that holds no store; it is not created, only named."""

    def __init__(self, path: object) -> None:
        super().__init__(
            f"there is no store at {path}: nothing has been written there yet",
            path=str(path),
            hint="run a command that writes (`stele-bench demo`, `stele-bench run SUITE`, `store put`), or point "
            "--store/--project at the store you meant",
        )


class ObjectMissing(StoreError, KeyError):
    """A digest names no stored object."""

    exit_code = 4

    def __init__(self, digest: object) -> None:
        super().__init__(
            f"object {digest} is not in the store",
            hint="run `stele-bench store fsck` to see what else is missing",
        )
        self.digest = digest

    def __str__(self) -> str:  # KeyError would quote the message
        return BenchError.__str__(self)

    def __reduce__(self) -> tuple[type[ObjectMissing], tuple[object]]:
        """Rebuilt from its digest: how a refusal crosses from a forked process (bench.forking)."""
        return type(self), (self.digest,)


class ObjectCorrupt(StoreError):
    """Stored bytes no longer hash to their name."""

    exit_code = 3

    def __init__(self, digest: object, actual: object) -> None:
        super().__init__(
            f"object {digest} is corrupt: its bytes hash to {actual}; it was refused",
            expected=str(digest),
            actual=str(actual),
            hint="run `stele-bench store fsck` and re-create it from its source",
        )
        self.digest = digest

    def __reduce__(self) -> tuple[type[ObjectCorrupt], tuple[object, object]]:
        """Rebuilt from its digests: how a refusal crosses from a forked process (bench.forking)."""
        return type(self), (self.digest, self.actual)


class StoreCorrupt(StoreError):
    """A file of the store cannot be read: its index (``what="index"``) or a pack or loose file beside it is
    damaged. Exit 3, as ``store fsck`` for corruption."""

    exit_code = 3

    def __init__(self, path: str, problem: str, *, what: str = "index") -> None:
        super().__init__(
            f"the store {what} {path} is corrupt ({problem})",
            path=path,
            hint="restore the store from a backup or re-create it; the objects' sources can be packaged again",
        )
        self._parts = (path, problem, what)  # not a detail of its own: the message names them

    def __reduce__(self) -> tuple[Callable[..., StoreCorrupt], tuple[str, str]]:
        """Rebuilt from its parts: how a refusal crosses from a forked process (bench.forking)."""
        path, problem, what = self._parts
        return functools.partial(type(self), what=what), (path, problem)


class StageError(BenchError):
    """A stage was declared or invoked wrongly."""

    exit_code = 15


class SourceError(BenchError):
    """An input from outside the store is refused; the message names the path."""

    exit_code = 9


class SandboxError(BenchError):
    """The container engine refused or failed; the message says what to run next."""

    exit_code = 10


class ExecutorError(BenchError):
    """The executor cannot run invocations: its cluster is unreachable, or an invocation was lost with its node."""

    exit_code = 16


class ProvisionerError(BenchError):
    """A memory provisioner misbehaved; ``reason`` is the recorded reason code."""

    exit_code = 11

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{message} [{reason}]")
        self.reason = reason


class FenceError(BenchError):
    """The money fence stopped a paid run; ``check`` names the check that stopped it."""

    exit_code = 12

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"money fence, {check}: {message}")
        self.check = check


class SystemRefused(BenchError):
    """The operating system refused what was asked (a full disk, a quota, a permission, a read-only filesystem);
    ``path`` is the file being read or written, so the message says which disk or directory to look at."""

    exit_code = 74

    @classmethod
    def of(cls, exc: OSError, path: object = None) -> SystemRefused:
        """The refusal ``exc`` reports, naming ``path`` (default: the file the error names)."""
        where = path if path is not None else exc.filename
        problem = exc.strerror or str(exc)
        return cls(
            f"{problem}: {where}" if where is not None else problem,
            path=None if where is None else str(where),
            hint="free space on that disk" if exc.errno in NO_SPACE else "check that file's permissions",
        )


NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})  # what a full disk (or quota) answers
# What the operating system answers when it, not the file's content, refuses: space, quotas and permissions.
REFUSED_BY_SYSTEM = NO_SPACE | {errno.EACCES, errno.EPERM, errno.EROFS}


# What each exit code means, for the README's table and `stele-bench --help`; a test keeps the three in step.
EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "a check answered no (verify found differences, certification rejected, a re-derivation differs)",
    2: "usage: the command line is wrong",
    3: "the store is corrupt (store fsck: corrupt objects, or a damaged index)",
    4: "objects are missing from the store (store fsck: missing objects)",
    5: "store fsck: corrupt and missing objects",
    6: "contract: a document or argument breaks its contract (plans and preregistrations included)",
    7: "no stele-bench project where the command looked",
    8: "store: the store cannot do what was asked (none at the path, cannot be created)",
    9: "source: an outside input (git repository, directory) is refused",
    10: "sandbox: the container engine refused or failed",
    11: "provisioner: a memory provisioner misbehaved",
    12: "money fence or provider: a paid run was stopped, or the provider's quota API could not be read",
    13: "gateway: the model gateway cannot start or serve as configured",
    14: "publication refused: a publication check failed",
    15: "stage: a stage was declared or invoked wrongly, or the pipeline stopped",
    16: "executor: the Ray cluster cannot be reached, or an invocation was lost with its node",
    70: "internal error: a bug (--debug shows the traceback)",
    74: "the operating system refused (permissions, a full disk): the message names the file",
    129: "stopped by SIGHUP",
    130: "stopped by Ctrl-C (SIGINT)",
    143: "stopped by SIGTERM",
}
