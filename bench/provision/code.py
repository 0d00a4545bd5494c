"""A provisioner's code, as the action keys cover it: every byte the runner runs as a memory system's provisioner.

A :class:`ProvisionerCode` document names

- the executable: ``argv[0]`` as found (under the suite directory, or on ``PATH`` with the running interpreter's
  directory first, as every process of a run finds it), by the SHA-256 of its bytes: a value, not a stored object,
  since an interpreter's binary is the host's and names host paths no bundle may carry;
- with an interpreter's ``-m MODULE``, the module's source by module name: the module and every module of its
  package that it imports (read from import statements, as a stage's code digest is) when it belongs to the package
  stele-bench runs from, else every module of its top-level package;
- every file of the paths the declaration names in ``code`` (relative to the suite directory), by its bytes.
  Bytecode (``__pycache__``) is left out: the interpreter writes it beside the source it derives from.

The document is an input of the paired-attempt stage, so a changed provisioner makes exactly the attempts that
run it stale, and ``status`` says which part changed (:func:`code_change`). The stage reads the code again before
it restores anything and refuses a difference: what runs is what the key names.

The suite's own files among them (an executable under the suite directory and the declared paths) are pinned by
the declaration's ``code_sha256`` (:func:`code_pin`), which `stele-bench pin` writes and `pin --check` checks, and
`run` refuses a stale pin as it refuses a stale verifier pin; the interpreter and an installed package are not the
suite's, so no pin names them (they differ between machines), but every key does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, Protocol

from ..builder.code_digest import PACKAGE, code_manifest
from ..contracts import BlobDigest, Document, PortablePath, Ref, Sha256
from ..errors import ContractError
from ..store import Store

__all__ = [
    "PUBLIC_CONTRACTS",
    "DeclaredProvisioner",
    "ProvisionerCode",
    "code_change",
    "code_pin",
    "provisioner_code",
    "require_code_pin",
    "resolve_provisioner",
    "store_code",
]

_BYTECODE = "__pycache__"


class DeclaredProvisioner(Protocol):
    """What this module reads of a memory system's declaration (``bench.suite.MemorySystem`` is one): the
    provisioner lives below the suite manifest, so it names the fields it needs instead of importing the suite."""

    @property
    def name(self) -> str: ...
    @property
    def provisioner(self) -> tuple[str, ...]: ...
    @property
    def code(self) -> tuple[PortablePath, ...]: ...
    @property
    def code_sha256(self) -> Sha256 | None: ...


def resolve_provisioner(system: DeclaredProvisioner, suite_root: Path) -> tuple[str, ...]:
    """The argv prefix to execute: ``argv[0]`` found on ``PATH``, or, when it names a path, under the suite directory.

    Refused unless the program exists and is executable, so a misspelled provisioner stops the run before any
    container starts.
    """
    program, *rest = system.provisioner
    if "/" in program:
        if Path(program).is_absolute() or ".." in Path(program).parts:
            raise ContractError(
                f"memory system {system.name!r}: provisioner {program!r} must be a command on PATH or a path inside "
                "the suite directory",
                field="provisioner",
            )
        path = suite_root / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ContractError(
                f"memory system {system.name!r}: provisioner {path} is not an executable file; "
                f"create it or `chmod +x {path}`",
                path=str(path),
                field="provisioner",
            )
        return (str(path.resolve()), *rest)
    # The running interpreter's directory first, as the pipeline's PATH has it (bench.run.runner): every
    # process finds the same program, so a plan made by `status` keys what the pipeline runs.
    search = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    found = shutil.which(program, path=search)
    if found is None:
        raise ContractError(
            f"memory system {system.name!r}: provisioner command {program!r} is not on PATH; install it or name "
            "its path relative to the suite directory",
            field="provisioner",
        )
    return (found, *rest)


class ProvisionerCode(Document):
    kind: Literal["provisioner-code"] = "provisioner-code"
    schema_version: Literal[1] = 1
    system: str
    program: str  # argv[0] as declared
    executable: Sha256  # of the bytes argv[0] names, as found
    modules: dict[str, BlobDigest]  # `-m MODULE`'s source by module name (none without `-m`)
    files: dict[PortablePath, BlobDigest]  # the declared code paths' files, relative to the suite directory


def _interpreted_module(argv: tuple[str, ...]) -> str | None:
    """MODULE of ``python... -m MODULE ...``; None for any other program."""
    if len(argv) >= 3 and Path(argv[0]).name.startswith("python") and argv[1] == "-m":
        return argv[2]
    return None


def _files(path: Path) -> Iterator[Path]:
    """``path`` if a file, else every file below it (bytecode left out), in name order."""
    if path.is_file():
        yield path
        return
    for directory, names, files in os.walk(path):
        names[:] = sorted(name for name in names if name != _BYTECODE)
        for name in sorted(files):
            yield Path(directory) / name


def _module_sources(module: str) -> dict[str, bytes]:
    """The source of ``module`` and of what it runs with, by module name (see the module docstring)."""
    top = module.split(".")[0]
    if top == PACKAGE:
        return code_manifest(module)
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin is None:
        raise ContractError(f"provisioner module {module!r} cannot be found by this interpreter; install it")
    origin = Path(spec.origin)
    if origin.name != "__init__.py":
        return {top: origin.read_bytes()}
    base = origin.parent.parent
    sources: dict[str, bytes] = {}
    for file in _files(origin.parent):
        if file.suffix == ".py":
            name = ".".join(file.relative_to(base).with_suffix("").parts).removesuffix(".__init__")
            sources[name] = file.read_bytes()
    return sources


def _declared(system: DeclaredProvisioner, suite_root: Path) -> dict[PortablePath, bytes]:
    """Every file of the declared code paths, by its path relative to the suite directory."""
    root = suite_root.resolve()
    found: dict[PortablePath, bytes] = {}
    for declared in system.code:
        path = (root / declared).resolve()
        if not path.is_relative_to(root) or not path.exists():
            raise ContractError(
                f"memory system {system.name!r} declares code {declared!r}, which is "
                f"{'outside the suite directory' if path.exists() else 'missing'} ({path})",
                path=str(path),
                field="code",
                hint="declare paths of files or directories inside the suite directory",
            )
        for file in _files(path):
            found[PortablePath(file.relative_to(root).as_posix())] = file.read_bytes()
    return dict(sorted(found.items()))


def _suite_executable(executable: Path, suite_root: Path) -> PortablePath | None:
    """The executable's path relative to the suite directory, when it lies there."""
    root = suite_root.resolve()
    return PortablePath(executable.relative_to(root).as_posix()) if executable.is_relative_to(root) else None


def _read(system: DeclaredProvisioner, suite_root: Path) -> tuple[Path, dict[str, bytes], dict[PortablePath, bytes]]:
    argv = resolve_provisioner(system, suite_root)
    module = _interpreted_module(argv)
    modules = _module_sources(module) if module is not None else {}
    return Path(argv[0]).resolve(), modules, _declared(system, suite_root)


def provisioner_code(store: Store, system: DeclaredProvisioner, suite_root: Path) -> ProvisionerCode:
    """Read ``system``'s provisioner code now and store its bytes; the document names them."""
    executable, modules, files = _read(system, suite_root)
    with store.batch():
        return ProvisionerCode(
            system=system.name,
            program=system.provisioner[0],
            executable=Sha256.of(executable.read_bytes()),
            modules={name: store.put_bytes(source) for name, source in sorted(modules.items())},
            files={path: store.put_bytes(data) for path, data in files.items()},
        )


def store_code(store: Store, system: DeclaredProvisioner, suite_root: Path) -> Ref[ProvisionerCode]:
    """:func:`provisioner_code`, stored: the digest a paired attempt's key names."""
    return store.put_document(provisioner_code(store, system, suite_root))


def code_pin(system: DeclaredProvisioner, suite_root: Path) -> str | None:
    """The SHA-256 that pins the suite's own code of ``system`` (its executable when it lies in the suite
    directory, and the declared paths), over one ``path<TAB>sha256`` line per file; None when it has none."""
    executable, _, files = _read(system, suite_root)
    own = dict(files)
    inside = _suite_executable(executable, suite_root)
    if inside is not None:
        own[inside] = executable.read_bytes()
    if not own:
        return None
    lines = "".join(f"{path}\t{hashlib.sha256(data).hexdigest()}\n" for path, data in sorted(own.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def require_code_pin(system: DeclaredProvisioner, suite_root: Path, suite: str) -> None:
    """Refuse ``system`` unless its pin matches its suite code now, as a stale verifier pin is refused."""
    actual = code_pin(system, suite_root)
    if actual != system.code_sha256:
        state = "is not pinned" if system.code_sha256 is None else f"is pinned at {system.code_sha256[:12]}"
        raise ContractError(
            f"memory system {system.name!r}: its code {state}, but the files now hash to "
            f"{actual[:12] if actual else 'nothing (it has no code in the suite)'}",
            field="code_sha256",
            expected=system.code_sha256,
            actual=actual,
            hint=f"if the change was meant, run `stele-bench pin {suite}`; `stele-bench status {suite}` says what "
            "it makes stale",
        )


def code_change(old: ProvisionerCode, new: ProvisionerCode) -> str:
    """What changed between two readings of one system's code, for people: ``provisioner NAME: code changed
    (executable; module bench.memory.recall; file systems/x/lib.py)``."""
    changed = ["executable"] if old.executable != new.executable or old.program != new.program else []
    parts: tuple[tuple[str, dict[str, BlobDigest], dict[str, BlobDigest]], ...] = (
        ("module", old.modules, new.modules),
        ("file", {str(path): blob for path, blob in old.files.items()}, {str(p): b for p, b in new.files.items()}),
    )
    for part, before, after in parts:
        changed += [
            f"{part} {name}" for name in sorted(before.keys() | after.keys()) if before.get(name) != after.get(name)
        ]
    return f"provisioner {new.system}: code changed ({'; '.join(changed) or 'its listing'})"


PUBLIC_CONTRACTS = (ProvisionerCode,)
