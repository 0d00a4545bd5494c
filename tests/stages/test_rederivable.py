"""Which recorded actions the one re-derivation can re-run, by what its source holds: a store (whole trees, and the
outside world through locator params) or a published bundle (documents, blobs and tree listings only)."""

from __future__ import annotations

import pytest

from bench.builder.lineage import rederivable
from bench.contracts import Digest
from bench.run.catalogue import STAGES
from bench.store.actions import ActionKey


def _key(stage: str, inputs: tuple[str, ...]) -> ActionKey:
    digest = Digest.of(b"an input")
    return ActionKey(stage=stage, stage_version=1, code=digest, params={}, inputs=dict.fromkeys(inputs, digest))


@pytest.mark.parametrize(
    ("stage", "inputs", "from_store", "from_bundle"),
    [
        ("corpus", (), True, False),  # reads only the outside world, which a bundle does not carry
        ("certify", ("source", "challenge"), True, False),  # reads a tree's files, which a bundle does not carry
        ("redact", ("tree",), True, True),  # reads a tree only as its listing, which a bundle carries
        ("grade", ("arm", "verifier", "audit"), True, True),  # documents only
        ("prebuild", ("redacted",), False, False),  # observed: recorded, never re-run
    ],
)
def test_what_the_source_holds_decides_what_is_rederived(
    stage: str, inputs: tuple[str, ...], from_store: bool, from_bundle: bool
) -> None:
    key = _key(stage, inputs)
    assert rederivable(STAGES.get(stage), key) is from_store
    assert rederivable(STAGES.get(stage), key, listings_only=True) is from_bundle
