from __future__ import annotations

import string
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.contracts import Digest, PortablePath, Sha256, canonical_json

component = st.text(alphabet=string.ascii_letters + string.digits + "-_.", min_size=1, max_size=8).filter(
    lambda name: name not in (".", "..")
)
good_paths = st.lists(component, min_size=1, max_size=5).map("/".join)


@given(good_paths)
def test_good_paths_are_accepted_unchanged(path: str) -> None:
    assert PortablePath(path) == path
    assert PortablePath(path).parts == tuple(path.split("/"))


def _bad_forms(path: str) -> list[tuple[str, str]]:
    return [
        ("/" + path, "absolute"),
        ("C:" + path, "drive letter"),
        ("c:/" + path, "drive letter"),
        (path.replace("/", "\\") + "\\x", "backslash"),
        ("./" + path, "'.' component"),
        (path + "/.", "'.' component"),
        ("../" + path, "'..' component"),
        (path + "/../x", "'..' component"),
        (path + "//x", "empty component"),
        (path + "/", "empty component"),
        ("", "empty component"),
        (path + "\x00", "NUL"),
    ]


@given(good_paths)
def test_every_bad_form_is_refused_with_its_reason(path: str) -> None:
    for bad, reason in _bad_forms(path):
        with pytest.raises(ValueError, match=reason):
            PortablePath(bad)


def test_non_nfc_spelling_is_refused() -> None:
    decomposed = unicodedata.normalize("NFD", "caf\u00e9.txt")
    with pytest.raises(ValueError, match="NFC"):
        PortablePath(decomposed)
    assert PortablePath("caf\u00e9.txt") == "caf\u00e9.txt"


names = st.text(alphabet=string.ascii_letters + string.digits + "-_.~ \\:\x00\u00e9\u0301/", min_size=0, max_size=6)


@given(st.sampled_from(["", "a/", "src/pkg/", "caf\u00e9/"]), names)
def test_joining_a_name_to_a_portable_parent_accepts_and_refuses_exactly_what_the_whole_path_would(
    parent: str, name: str
) -> None:
    try:
        whole: PortablePath | str = PortablePath(parent + name)
    except ValueError as exc:
        whole = str(exc)
    try:
        joined: PortablePath | str = PortablePath.joined(parent, name)
    except ValueError as exc:
        joined = str(exc)
    assert joined == whole and type(joined) is type(whole)


def test_the_schema_pattern_agrees_with_the_checks() -> None:
    for bad, _ in _bad_forms("a/b"):
        if "\\" in bad or not bad:
            continue
        assert not PortablePath.pattern.fullmatch(bad), bad
    assert PortablePath.pattern.fullmatch("a/b.c/..d")


@given(st.binary(max_size=2048))
def test_digest_names_bytes_with_their_size(data: bytes) -> None:
    digest = Digest.of(data)
    assert digest.size == len(data)
    assert len(digest.hex) == 64
    assert Digest(str(digest)) == digest


@pytest.mark.parametrize(
    "bad",
    ["blake3:" + "0" * 63 + ":1", "blake3:" + "A" * 64 + ":1", "blake3:" + "0" * 64 + ":01", "sha256:" + "0" * 64, ""],
)
def test_malformed_digests_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="store digest"):
        Digest(bad)


def test_sha256_is_bare_lowercase_hex() -> None:
    assert Sha256.of(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    with pytest.raises(ValueError):
        Sha256("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855")


def test_canonical_json_is_sorted_compact_utf8_and_refuses_nan() -> None:
    assert canonical_json({"b": 1, "a": ["\u00e9", 2.5]}) == '{"a":["\u00e9",2.5],"b":1}'.encode()
    with pytest.raises(ValueError, match="NaN"):
        canonical_json({"x": float("nan")})
    with pytest.raises(ValueError):
        canonical_json({"x": float("inf")})
