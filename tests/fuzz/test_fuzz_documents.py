"""Every document reader, fuzzed (issue 36, build item 5): random bytes, JSON nested past any depth, numbers past 64
bits and past a float, repeated keys, lone surrogates, valid documents with one field broken, and special files in
the document's place. Each reader either returns its document or refuses in the error tree, naming the file; no
other exception leaves it, whatever the bytes.

Readers: every public contract through :func:`bench.contracts.files.read_contract`, the strict JSON reader, and
each named loader the commands call (suite, challenge, fixture, preregistrations, publication manifest, fence and
gateway configs, a pinned policy, the project marker, a plan spec, a graph artifact, a bundle's documents).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile import SPECIAL, make_hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.analysis import PairedAttempt
from bench.analysis.prereg import load_preregistrations
from bench.contracts import Sha256
from bench.contracts.checked_files import read_bounded
from bench.contracts.files import read_contract
from bench.contracts.strict_json import read_json_object
from bench.errors import BenchError
from bench.fence.config import load_config
from bench.gateway.config import GatewayConfig
from bench.gateway.policy import load_policy
from bench.packaging.graph import graph_texts
from bench.pipeline.plans import load_plan
from bench.project import open_project
from bench.provision.fixture import load_fixture
from bench.publish.bundle_layout import parse_document
from bench.publish.manifest import read_manifest
from bench.run.catalogue import CONTRACTS, PLAN_BUILDERS, STAGES
from bench.store import Store
from bench.suite.challenge import load_challenge
from bench.suite.suite import load_suite

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "challenges" / "example"

Reader = Callable[[Path], object]  # reads the document at the path given (a directory for some, named below)


def _pin(path: Path) -> Sha256:
    """The policy's own digest when it is a small regular file (so its contents are what is fuzzed), else any."""
    small = path.is_file() and path.stat().st_size < 1 << 20
    return Sha256.of(path.read_bytes() if small else b"")


def _in(name: str, read: Callable[[Path], object]) -> tuple[str, Reader]:
    """A reader given the directory the document ``name`` lies in."""
    return name, lambda path: read(path.parent) if path.name == name else read(path)


READERS: dict[str, tuple[str, Reader]] = {
    "strict json": ("doc.json", lambda path: read_json_object(path, "a document")),
    "suite manifest": ("suite.json", load_suite),
    "challenge manifest": _in("challenge.json", load_challenge),
    "fixture manifest": _in("fixture.json", load_fixture),
    "preregistration": ("v1.json", lambda path: load_preregistrations(path.parent.parent)),
    "publication manifest": ("MANIFEST.json", read_manifest),
    "fence config": ("fence.json", load_config),
    "gateway config": ("gateway.json", lambda path: read_contract(path, GatewayConfig, "the gateway config")),
    "policy": ("policy.json", lambda path: load_policy(path, _pin(path))),
    "project marker": _in("stele-bench.toml", open_project),
    "plan spec": ("plan.json", lambda path: load_plan(path, Store.in_memory(), PLAN_BUILDERS, STAGES, {})),
    "graph artifact": ("graph.jsonl", lambda path: list(graph_texts(read_bounded(path, "graph"), str(path)))),
    "bundle record": ("r.json", lambda path: parse_document(str(path), read_bounded(path, "r"), PairedAttempt)),
    **{
        f"contract {name}": (f"{name}.json", lambda path, model=model: read_contract(path, model, "a document"))
        for name, model in CONTRACTS.models().items()
    },
}

# Valid documents to break one field at a time: the example suite's own.
SAMPLES = [
    EXAMPLE / "suite.json",
    EXAMPLE / "fixture" / "fixture.json",
    *sorted(EXAMPLE.glob("*/challenge.json")),
    *sorted((REPO / "manifests" / "example").glob("*/v1.json")),
    *sorted((REPO / "manifests" / "plans").glob("*.json")),
]


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
    )
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
        max_leaves=40,
    )


def _broken_sample(draw: st.DrawFn) -> bytes:
    """A valid document with one value replaced, one key dropped, or a key repeated."""
    document = json.loads(draw(st.sampled_from(SAMPLES)).read_text())
    keys = sorted(document) if isinstance(document, dict) else []
    if not keys:
        return json.dumps(document).encode()
    key = draw(st.sampled_from(keys))
    how = draw(st.sampled_from(["replace", "drop", "repeat"]))
    if how == "drop":
        del document[key]
        return json.dumps(document).encode()
    if how == "repeat":
        text = json.dumps(document)
        return (text[:-1] + f", {json.dumps(key)}: {json.dumps(draw(_json_values()))}}}").encode()
    document[key] = draw(_json_values())
    return json.dumps(document).encode()


@st.composite
def _documents(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "json", "deep", "number", "sample", "surrogate"]))
    if kind == "bytes":
        return draw(st.binary(max_size=2000))
    if kind == "json":
        return json.dumps(draw(_json_values())).encode()
    if kind == "deep":
        depth = draw(st.integers(60, 50_000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        return (opener * depth + "1" + closer * depth).encode()
    if kind == "number":
        digits = draw(st.integers(17, 5000))
        return (
            '{"n": ' + draw(st.sampled_from(["", "-", "0."])) + "9" * digits + draw(st.sampled_from(["", "e999"])) + "}"
        ).encode()
    if kind == "surrogate":
        return b'{"a": "\\udc80", "b": "\\ud800\\u0041"}'
    return _broken_sample(draw)


def _read(reader: Reader, path: Path) -> None:
    try:
        reader(path)
    except BenchError as exc:  # a refusal in the tree: it must name the file it read
        assert str(path.parent) in str(exc) or path.name in str(exc) or exc.path, exc


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_reader_returns_its_document_or_refuses_in_the_tree(tmp_path: Path, name: str) -> None:
    file_name, reader = READERS[name]
    folder = tmp_path / "manifests" / "suite" / "challenge"
    folder.mkdir(parents=True)
    path = folder / file_name

    @settings(
        max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(_documents())
    def case(data: bytes) -> None:
        path.write_bytes(data)
        _read(reader, path)

    case()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("special", [name for name in SPECIAL if name not in ("missing", "not-utf8")])
@pytest.mark.parametrize("name", sorted(READERS))
def test_a_special_file_in_a_documents_place_is_refused_naming_it(
    hostile: Path, tmp_path: Path, name: str, special: str
) -> None:
    file_name, reader = READERS[name]
    folder = tmp_path / "manifests" / "suite" / "challenge"
    folder.mkdir(parents=True)
    path = folder / file_name
    if special == "dir":
        path.mkdir()
    elif special == "loop":
        path.symlink_to(path.name)
    else:
        path.symlink_to(hostile / special)
    with pytest.raises(BenchError) as refused:
        reader(path)
    assert refused.value.exit_code in (6, 7, 9, 13, 14), refused.value  # a document's, a source's or its owner's
