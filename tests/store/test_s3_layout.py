"""The S3 store's key names and entry bodies are what buckets already hold: pinned here byte for byte, so a
refactoring that renames a key (and orphans every store written before) fails without a server."""

from __future__ import annotations

import json

import pytest

from bench.contracts import Digest
from bench.errors import BenchError, ContractError, StoreError
from bench.store.backends.base import RecordedResult
from bench.store.backends.s3_layout import S3Layout, decode_entry, encode_entry, object_info, object_metadata

KEY = Digest.of(b"key")
RESULT = Digest.of(b"result")
OUTPUT = Digest.of(b"output")


def _named(digest: Digest) -> str:
    return f"{digest.hex}-{digest.size}"


@pytest.mark.parametrize("prefix, root", [("", ""), ("team/store", "team/store/")])
def test_every_key_is_spelled_as_buckets_hold_it(prefix: str, root: str) -> None:
    layout = S3Layout.under(prefix)
    assert layout.object_key(KEY) == f"{root}objects/{KEY.hex[:2]}/{_named(KEY)}"
    assert layout.ref_key("suites/demo") == f"{root}refs/suites/demo"
    assert layout.action_key(KEY) == f"{root}actions/{_named(KEY)}"
    assert layout.claim_key(KEY) == f"{root}claims/{_named(KEY)}"
    assert layout.epoch == f"{root}epoch"
    assert layout.index_keys(KEY, RESULT, [OUTPUT], 12.5) == [
        f"{root}produced/{_named(OUTPUT)}/{_named(RESULT)}",
        f"{root}log/0000000000012.500000/{_named(KEY)}/{_named(RESULT)}",
    ]
    log_key = layout.index_keys(KEY, RESULT, [], 12.5)[0]
    assert layout.logged_at(log_key) == 12.5
    assert (layout.logged(log_key).key, layout.logged(log_key).result) == (KEY, RESULT)
    assert layout.log_start(3.0) == f"{root}log/0000000000003.000000"


@pytest.mark.parametrize("name", ["", "a//b", "../escape", "a/./b"])
def test_a_ref_name_that_cannot_be_a_key_is_refused(name: str) -> None:
    with pytest.raises(StoreError, match="cannot be a key of an S3 store"):
        S3Layout.under("").ref_key(name)


def test_an_actions_entry_round_trips_and_keeps_its_spelling() -> None:
    entry = RecordedResult(KEY, RESULT, (OUTPUT,), 12.5)
    body = encode_entry(entry)
    assert json.loads(body) == {"result": str(RESULT), "recorded": 12.5, "outputs": [str(OUTPUT)]}
    assert body == json.dumps({"result": str(RESULT), "recorded": 12.5, "outputs": [str(OUTPUT)]}).encode()
    assert decode_entry(body, KEY, "here") == entry


@pytest.mark.parametrize(
    "body, refusal",
    [
        (b'{"result": 1, "recorded": 1.0, "outputs": []}', StoreError),
        (b'{"result": "x"}', StoreError),
        (b'{"result": "x", "recorded": 1.0, "outputs": []}', StoreError),  # not a digest
        (b"[]", ContractError),
    ],
)
def test_a_malformed_actions_entry_is_refused_naming_where(body: bytes, refusal: type[BenchError]) -> None:
    with pytest.raises(refusal, match="s3://bucket/actions/k"):
        decode_entry(body, KEY, "action entry s3://bucket/actions/k")


def test_object_metadata_round_trips_and_a_truncated_object_is_not_the_one_named() -> None:
    metadata = object_metadata(True, 7.25)
    assert metadata == {"document": "1", "created": "7.25"}
    info = object_info(KEY, KEY.size, metadata)
    assert info is not None and (info.is_document, info.created) == (True, 7.25)
    assert object_info(KEY, KEY.size - 1, metadata) is None
