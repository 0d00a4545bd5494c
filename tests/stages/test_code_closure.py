"""A stage's code closure: what each module imports, parsed once per exact source and remembered on the machine.

Real files: the package's own modules, and a small package of our own (the code module pointed at it) for an edit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bench.builder import code_digest as code
from bench.machine_cache import CACHE_VARIABLE


def _forget() -> None:
    for cached in (code.code_manifest, code._imports, code._module_file, code._source):
        cached.cache_clear()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's own machine cache, and no closure remembered in this process before or after it."""
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "cache"))
    _forget()
    yield tmp_path / "cache" / "imports"
    _forget()


def _unparsable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(code.ast, "parse", refuse)


def test_a_remembered_import_list_gives_the_closure_parsing_gives(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = code.code_manifest("bench.stages.tree_summary")
    assert "bench.builder.code_digest" in parsed and "bench.machine_cache" in parsed
    assert len(list(cache.glob("*.txt"))) == len(parsed)
    _forget()
    _unparsable(monkeypatch)
    assert code.code_manifest("bench.stages.tree_summary") == parsed


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package named like ours, with a stage module ``a`` importing ``b``."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from . import b\n")
    (root / "b.py").write_text("X = 1\n")
    (root / "c.py").write_text("Y = 2\n")
    monkeypatch.setattr(code, "PACKAGE_ROOT", root)
    _forget()
    return root


def test_an_edited_module_is_parsed_again_not_served_its_old_list(package: Path) -> None:
    assert set(code.code_manifest("bench.a")) == {"bench", "bench.a", "bench.b"}
    (package / "a.py").write_text("from . import b\nfrom .c import Y\n")
    _forget()
    assert set(code.code_manifest("bench.a")) == {"bench", "bench.a", "bench.b", "bench.c"}


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda text: "", id="empty"),
        pytest.param(lambda text: text.removesuffix("end\n"), id="cut-before-its-end"),
        pytest.param(lambda text: text.replace("bench.b", "bench.b; rm -rf /"), id="not-a-module-name"),
        pytest.param(lambda text: text.replace("imports 1", "imports 2"), id="another-format"),
        pytest.param(lambda text: "\udcff", id="not-text"),
    ],
)
def test_a_damaged_list_is_parsed_again_and_written_anew(
    package: Path, cache: Path, damage: Callable[[str], str]
) -> None:
    whole = set(code.code_manifest("bench.a"))
    for memo in cache.glob("*.txt"):
        good = memo.read_text()
        memo.write_bytes(damage(good).encode("utf-8", "surrogateescape"))
    _forget()
    assert set(code.code_manifest("bench.a")) == whole
    texts = {memo.read_text() for memo in cache.glob("*.txt")}
    assert all(text.startswith("imports 1\n") and text.endswith("\nend\n") for text in texts)
    assert any("bench.b" in text for text in texts)


def test_a_cache_that_cannot_be_written_only_means_parsing_again(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocked))
    assert set(code.code_manifest("bench.a")) == {"bench", "bench.a", "bench.b"}
    _forget()
    assert set(code.code_manifest("bench.a")) == {"bench", "bench.a", "bench.b"}
    assert blocked.read_text() == "not a directory"
