"""Random and mutated input through every boundary: each answer is a result or a refusal, never another exception.

Property-based (hypothesis), over the real boundaries: the strict JSON reader, a provisioner's reply, publication
documents, tar streams into the store, and git objects (loose, in a real repository on disk, and in bundles)
into the corpus stage. Every test is derandomized (a fixed seed: the same examples on every run, so CI is
repeatable) and bounded in examples, so the whole file adds seconds, not minutes, to CI.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import tempfile
import zlib
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from dulwich.objects import Blob, Tree
from dulwich.repo import Repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.analysis import AdmissionDecision, PairedAttempt, ReasonCode, decide
from bench.contracts import Digest, PortablePath, canonical_bytes
from bench.contracts.strict_json import MAX_DEPTH, parse_json
from bench.errors import BenchError, ContractError
from bench.packaging.corpus import materialize
from bench.packaging.gitsource import open_source
from bench.provision import ProvisionRefused
from bench.provision.messages import DestroyResponse, RestoreResponse, SnapshotResponse, Verb
from bench.provision.protocol_call import interpret_reply
from bench.publish.bundle_layout import parse_document
from bench.publish.manifest import PublicationManifest, PublishedFile
from bench.store import Store, tree_from_tar
from tests.analysis.attempt_factory import arm, attempt, record_digest
from tests.packaging.gitrepos import commit_tree

BOUNDED = settings(
    derandomize=True,
    database=None,
    max_examples=120,
    deadline=timedelta(seconds=10),  # generous per example (CI shares two cores); the count bounds the whole
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(BOUNDED, max_examples=40)

# JSON values, including what the strict reader refuses: huge integers, repeated keys (built as text below).
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
JSON_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@st.composite
def mutated(draw: st.DrawFn, base: st.SearchStrategy[bytes]) -> bytes:
    """``base`` with a few byte-level edits: flips, deletions, insertions, a cut, a repeated slice."""
    data = bytearray(draw(base))
    for _ in range(draw(st.integers(0, 4))):
        action = draw(st.sampled_from(["flip", "delete", "insert", "cut", "repeat"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if action == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif action == "delete" and data:
            del data[at : at + draw(st.integers(1, 8))]
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "cut":
            del data[at:]
        elif action == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 16))]
    return bytes(data)


def _json_text(value: Any) -> bytes:
    return json.dumps(value).encode()


JSON_BYTES = mutated(JSON_VALUES.map(_json_text)) | st.binary(max_size=64)


@BOUNDED
@given(JSON_BYTES)
def test_the_strict_reader_answers_a_value_or_a_refusal(data: bytes) -> None:
    try:
        parse_json(data, "the document")
    except ContractError as refused:
        assert "\n" not in str(refused)


@BOUNDED
@given(JSON_VALUES)
def test_the_strict_reader_reads_back_what_it_accepts_unchanged(value: Any) -> None:
    text = _json_text(value)
    try:
        parsed = parse_json(text, "the document")
    except ContractError as refused:
        assert "outside 64 bits" in refused.message or "nests deeper" in refused.message
        return
    assert parsed == json.loads(text)


REPLY_SHAPES = st.fixed_dictionaries(
    {"project": st.text(max_size=10), "queue_before_count": st.integers(-5, 2**66), "restore_seconds": st.floats()}
) | st.fixed_dictionaries({"ok": st.sampled_from([True, 1, 1.0, "true", None])})


@BOUNDED
@given(
    mutated(REPLY_SHAPES.map(lambda value: json.dumps(value, allow_nan=True).encode())) | JSON_BYTES,
    st.sampled_from(
        [(Verb.RESTORE, RestoreResponse), (Verb.SNAPSHOT, SnapshotResponse), (Verb.DESTROY, DestroyResponse)]
    ),
    st.sampled_from([0, 0, 0, 1, None]),
)
def test_a_provisioner_reply_is_a_response_or_a_refusal(
    stdout: bytes, verb_and_type: tuple[Verb, type[Any]], exit_code: int | None
) -> None:
    verb, response_type = verb_and_type
    try:
        response = interpret_reply(verb, stdout, exit_code, response_type)
    except ProvisionRefused as refused:
        assert "\n" not in str(refused)
        return
    assert isinstance(response, response_type) and exit_code == 0
    if isinstance(response, DestroyResponse):
        assert response.ok is True and json.loads(stdout)["ok"] is True


_RECORD = attempt(1, arm(True), arm(False, delivered=True))
_DOCUMENTS = [
    canonical_bytes(_RECORD),
    canonical_bytes(decide(record_digest(_RECORD), _RECORD, ReasonCode.PREREGISTERED_COMPLETE)),
    canonical_bytes(
        PublicationManifest(files=[PublishedFile(path=PortablePath("records/a.json"), digest=Digest.of(b"a"))])
    ),
]


@BOUNDED
@given(mutated(st.sampled_from(_DOCUMENTS)), st.sampled_from([PublicationManifest, PairedAttempt, AdmissionDecision]))
def test_a_bundle_document_is_a_model_or_a_refusal(data: bytes, model: type[Any]) -> None:
    try:
        parse_document("records/x.json", data, model)
    except BenchError as refused:
        assert "\n" not in str(refused)


def _tar(members: list[tuple[str, bytes, bytes]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.REGTYPE:
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
            else:
                info.linkname = data.decode("utf-8", "replace")
                archive.addfile(info)
    return out.getvalue()


_TAR_NAMES = st.text(alphabet="ab./\\-\x00é", min_size=1, max_size=10)
_TAR_KINDS = st.sampled_from([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE])
TAR_STREAMS = mutated(
    st.lists(st.tuples(_TAR_NAMES, _TAR_KINDS, st.binary(max_size=20)), max_size=5).map(_tar)
) | st.binary(max_size=600)


@BOUNDED
@given(TAR_STREAMS, st.sampled_from(["", "workspace"]))
def test_a_tar_stream_becomes_a_tree_or_a_refusal(data: bytes, strip: str) -> None:
    store = Store.in_memory()
    try:
        tree_from_tar(store, io.BytesIO(data), strip=strip)
    except BenchError as refused:
        assert "\n" not in str(refused)


_GIT_NAMES = st.binary(min_size=1, max_size=6).filter(
    lambda name: b"\x00" not in name and b" " not in name
) | st.sampled_from([b".git", b"..", b".", b"a/b", b"CLAUDE.md", b"x"])
_MODES = st.sampled_from([0o100644, 0o100755, 0o120000, 0o040000, 0o160000, 0o100664, 0o644])


def _raw_tree(entries: list[tuple[int, bytes, bytes]]) -> bytes:
    return b"".join(f"{mode:o}".encode() + b" " + name + b"\x00" + sha for mode, name, sha in entries)


@st.composite
def git_repositories(draw: st.DrawFn) -> tuple[list[tuple[int, bytes, bytes]], list[bytes], int, bytes]:
    """Tree entries over a few blobs (modes, names and ids chosen freely), and how to damage one loose object."""
    blobs = draw(st.lists(st.binary(max_size=40), min_size=1, max_size=3))
    ids = [bytes.fromhex(Blob.from_string(blob).id.decode()) for blob in blobs]
    entries = draw(st.lists(st.tuples(_MODES, _GIT_NAMES, st.sampled_from([*ids, b"\x01" * 20])), max_size=5))
    damage = draw(st.sampled_from(["none", "compressed", "content"]))
    edit = draw(st.binary(min_size=1, max_size=4))
    return entries, blobs, draw(st.integers(0, 10_000)), (damage.encode() + b":" + edit)


@FEW
@given(git_repositories())
def test_git_objects_on_disk_become_a_tree_or_a_refusal(case: tuple[Any, list[bytes], int, bytes]) -> None:
    entries, blobs, at, damage = case
    kind, _, edit = damage.partition(b":")
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "repo"
        with Repo.init(str(path), mkdir=True) as repo:
            for blob in blobs:
                repo.object_store.add_object(Blob.from_string(blob))
            tree = Tree.from_raw_string(Tree.type_num, _raw_tree(entries))
            repo.object_store.add_object(tree)
            commit = commit_tree(repo, tree.id)
        if kind != b"none":
            _damage(sorted(path.glob(".git/objects/??/*"))[at % len(blobs)], kind, edit, at)
        _materialize(str(path), commit)


def _damage(loose: Path, kind: bytes, edit: bytes, at: int) -> None:
    data = loose.read_bytes()
    if kind == b"content":
        inflated = bytearray(zlib.decompress(data))
        inflated[at % len(inflated)] ^= edit[0] or 1
        data = zlib.compress(bytes(inflated))
    else:
        data = data[: at % len(data)] + edit + data[at % len(data) + 1 :]
    loose.chmod(0o644)
    loose.write_bytes(data)


def _materialize(source: str, commit: str) -> None:
    store = Store.in_memory()
    try:
        with open_source(source) as opened:
            materialize(store, opened, commit)
    except BenchError as refused:
        assert "\n" not in str(refused)


@FEW
@given(st.data())
def test_a_damaged_bundle_becomes_a_tree_or_a_refusal(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        with Repo.init(str(root / "repo"), mkdir=True) as repo:
            blobs = [Blob.from_string(f"file {i}\n".encode() * (i + 1)) for i in range(4)]
            tree = Tree()
            for number, blob in enumerate(blobs):
                repo.object_store.add_object(blob)
                tree.add(f"f{number}.txt".encode(), 0o100644, blob.id)
            repo.object_store.add_object(tree)
            commit = commit_tree(repo, tree.id)
        bundle = root / "project.bundle"
        subprocess.run(
            ["git", "-C", str(root / "repo"), "bundle", "create", str(bundle), "main"], check=True, capture_output=True
        )
        bundle.write_bytes(data.draw(mutated(st.just(bundle.read_bytes()))))
        _materialize(str(bundle), commit)


def _nesting(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    return 0


# Strings full of what the depth count must not take for structure: brackets, quotes and backslashes, escaped.
_TRICKY_TEXT = st.text(alphabet='[]{}"\\\\/ab\u00e9', max_size=10)
_TRICKY_VALUES = st.recursive(
    st.none() | st.integers(-5, 5) | _TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TRICKY_TEXT, inner, max_size=3),
    max_leaves=12,
)


@BOUNDED
@given(
    _TRICKY_VALUES, st.lists(st.sampled_from(["list", "object"]), min_size=MAX_DEPTH + 1), st.booleans(), st.booleans()
)
def test_the_strict_reader_refuses_exactly_what_nests_deeper_than_its_limit(
    inner: Any, wrappers: list[str], over: bool, ascii_only: bool
) -> None:
    # Nested to the limit exactly, or one past it: a bracket in a string counted as structure tips the first
    # over, one missed tips the second under.
    value = inner
    for wrapper in wrappers[: MAX_DEPTH + over - _nesting(inner)]:
        value = [value] if wrapper == "list" else {"[{": value}
    assert _nesting(value) == MAX_DEPTH + over
    text = json.dumps(value, ensure_ascii=ascii_only).encode()
    if over:
        with pytest.raises(ContractError, match="nests deeper"):
            parse_json(text, "the document")
    else:
        assert parse_json(text, "the document") == value
