"""The project: a directory marked by ``stele-bench.toml``, found by walking up from where a command runs.

Like git and dvc, every command finds its project from the working directory upward, so a command run anywhere
inside uses one store, one doit database and one place for published bundles, and re-runs nothing another
directory already ran. Layout::

    <root>/stele-bench.toml       the marker (``[project] format = 1``), and optionally the project's settings:
                                  ``[sandbox] backend = "docker"`` (bench.sandbox.backends.choice)
    <root>/store/                 the object store, made by the first command that writes to it
    <root>/.doit.sqlite           doit's dependency database: a disposable cache, the store is the truth
    <root>/.run-lease             held by the one `demo` or `run` at a time (bench.run_lease)
    <root>/published/<suite>/     bundles exported by `demo` and `run`
    <root>/manifests/<suite>/     preregistrations (`prereg freeze`)
    <root>/suites/                where `init` suggests `new suite` puts a user's own suites
    <root>/keys/publisher.key     the key `demo` and `run` sign published bundles with (made by the first of them;
                                  never published); publisher.key.pub is what `verify --trust` is given

``stele-bench init`` makes one. The repository is a project too, and the bundled example suite lives in it; an
installed wheel carries the same example as package data (:func:`example_root`).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .contracts.checked_files import describe, read_bounded, resolved
from .errors import ContractError, ProjectNotFound, SourceError

__all__ = [
    "MARKER",
    "PROJECT_VARIABLE",
    "SANDBOX_SETTING",
    "Project",
    "example_root",
    "find_project",
    "init_project",
    "open_project",
]

MARKER = "stele-bench.toml"
SANDBOX_SETTING = "[sandbox] backend"  # the one setting a marker may hold besides its format
PROJECT_VARIABLE = "STELE_BENCH_PROJECT"
FORMAT = 1
_MARKER_TEXT = f"""\
# A stele-bench project. Commands run anywhere below this directory use the store, doit's database and the
# published bundles kept here (store/, .doit.sqlite, published/), whatever the working directory.
[project]
format = {FORMAT}
"""
_MARKER_LIMIT = 64 * 1024  # the marker holds one line; a large one is not a marker
_IGNORED = "store/\n.doit.sqlite*\npublished/\nkeys/\n.run-lease\n"
_PACKAGE = Path(__file__).resolve().parent
_EXAMPLE_SUITE = Path("challenges/example")


@dataclass(frozen=True)
class Project:
    """A project directory and the places inside it that commands use."""

    root: Path
    sandbox_backend: str | None = None  # the marker's ``[sandbox] backend``: a name, checked where it is used

    @property
    def marker(self) -> Path:
        return self.root / MARKER

    @property
    def store(self) -> Path:
        return self.root / "store"

    @property
    def doit_db(self) -> Path:
        return self.root / ".doit.sqlite"

    @property
    def manifests(self) -> Path:
        return self.root / "manifests"

    @property
    def signing_key(self) -> Path:
        """The project's publisher key (its public half beside it, ``.pub``): kept here, outside every bundle."""
        return self.root / "keys" / "publisher.key"

    def published(self, suite_id: str) -> Path:
        return self.root / "published" / suite_id

    def relative(self, path: Path) -> Path:
        """``path`` relative to the root; refused when it lies outside (plans keep no host paths)."""
        try:
            return resolved(path, "the path").relative_to(self.root)
        except ValueError:
            raise ContractError(
                f"{path} lies outside the project {self.root}",
                path=str(path),
                hint="move it into the project (paths in a plan are relative to the project root), or pass "
                "--project with a directory that contains it",
            ) from None


def _read_marker(marker: Path) -> Project:
    """The project ``marker`` marks, with its settings; a marker this version cannot read is refused, naming it."""
    try:
        data = tomllib.loads(read_bounded(marker, "the project marker", max_bytes=_MARKER_LIMIT).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ContractError(f"cannot read the project marker {marker}: {exc}", path=str(marker)) from None
    _check_format(marker, data)
    return Project(marker.parent.resolve(), sandbox_backend=_sandbox_backend(marker, data.get("sandbox")))


def _check_format(marker: Path, data: dict[str, object]) -> None:
    section = data.get("project")
    if not set(data) <= {"project", "sandbox"} or not isinstance(section, dict) or set(section) != {"format"}:
        raise ContractError(
            f"the project marker {marker} must hold [project] format = {FORMAT} (and at most {SANDBOX_SETTING})",
            path=str(marker),
            expected=f"[project] format = {FORMAT}",
            actual=str(data),
        )
    if section["format"] != FORMAT:
        raise ContractError(
            f"the project marker {marker} declares format {section['format']!r}; this stele-bench reads {FORMAT}",
            path=str(marker),
            field="project.format",
            expected=FORMAT,
            actual=section["format"],
        )


def _sandbox_backend(marker: Path, section: object) -> str | None:
    """The ``[sandbox]`` table's backend name: a table holding exactly ``backend``, a non-empty string."""
    if section is None:
        return None
    name = section.get("backend") if isinstance(section, dict) and set(section) == {"backend"} else None
    if not isinstance(name, str) or not name:
        raise ContractError(
            f'{marker}: {SANDBOX_SETTING} must be the one key of [sandbox], a backend\'s name such as "docker"; '
            f"got [sandbox] = {section!r}",
            path=str(marker),
            field=SANDBOX_SETTING,
            actual=str(section),
        )
    return name


def find_project(start: Path) -> Project | None:
    """The nearest directory at or above ``start`` holding the marker, or None."""
    here = start.resolve()
    for directory in (here, *here.parents):
        if (directory / MARKER).is_file():
            return _read_marker(directory / MARKER)
    return None


def open_project(explicit: Path | None = None, start: Path | None = None) -> Project:
    """The project named by ``explicit`` (``--project``), else ``$STELE_BENCH_PROJECT``, else found upward from
    ``start`` (the working directory); refused naming where it looked."""
    named = explicit if explicit is not None else _from_environment()
    if named is not None:
        if not (named / MARKER).is_file():
            raise ProjectNotFound(named, walked=False)
        return _read_marker(named / MARKER)
    where = start if start is not None else Path.cwd()
    found = find_project(where)
    if found is None:
        raise ProjectNotFound(where, walked=True)
    return found


def _from_environment() -> Path | None:
    value = os.environ.get(PROJECT_VARIABLE)
    return Path(value) if value else None


def init_project(directory: Path) -> tuple[Project, bool]:
    """Make ``directory`` a project (creating it if need be); False when it already was one. Writes the marker,
    a ``.gitignore`` for what runs produce and an empty ``suites/``; the store is made by the first write."""
    marker = directory / MARKER
    if marker.is_file():
        return _read_marker(marker), False
    if marker.exists() or marker.is_symlink():
        raise ContractError(f"the project marker {marker} is {describe(marker)}, not a file", path=str(marker))
    if directory.exists() and not directory.is_dir():
        raise ContractError(f"{directory} exists and is not a directory", path=str(directory))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "suites").mkdir(exist_ok=True)
    ignore = directory / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORED, encoding="utf-8")
    marker.write_text(_MARKER_TEXT, encoding="utf-8")
    return Project(directory.resolve()), True


def example_root() -> Path:
    """The directory the bundled example suite's plan runs from: it holds ``challenges/example`` and
    ``manifests/example``. In a checkout that is the repository; in an installed wheel, the copy packed into
    ``bench/_example`` (the same bytes, so the same action keys)."""
    checkout = _PACKAGE.parent
    if (checkout / MARKER).is_file() and (checkout / _EXAMPLE_SUITE / "suite.json").is_file():
        return checkout
    packed = _PACKAGE / "_example"
    if (packed / _EXAMPLE_SUITE / "suite.json").is_file():
        return packed
    raise SourceError(
        f"the bundled example suite is missing from this installation (looked in {packed} and {checkout})",
        path=str(packed),
        hint="reinstall stele-bench: the wheel carries challenges/example and its preregistrations",
    )
