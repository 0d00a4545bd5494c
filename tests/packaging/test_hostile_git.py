"""Hostile git input through the corpus command: refusals naming the input, never a traceback (issue 17, 3, 4, 7).

Real repositories, real git (to confirm what `git fsck` says about a crafted tree) and the real command line.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from dulwich.objects import Blob, Tree
from dulwich.repo import Repo

from bench.cli import main
from bench.contracts import Digest
from bench.store import Store
from bench.store.actions import ActionKey
from tests.packaging.gitrepos import RepoFactory, commit_tree, packed


def _corpus_json(capsys: pytest.CaptureFixture[str], store: Path, *argv: str) -> tuple[int, dict[str, object]]:
    code = main(["--store", str(store), "corpus", *argv, "--json"])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 1, captured.out + captured.err  # one JSON object, success or refusal
    assert "Traceback" not in captured.err
    return code, json.loads(lines[0])


def _duplicate_entry_repo(path: Path) -> tuple[Path, str, bytes]:
    """A repository whose root tree lists ``settings.py`` twice: a decoy blob first, the real one second."""
    decoy, real = Blob.from_string(b"DEBUG = False\n"), Blob.from_string(b"DEBUG = True\n")
    raw = b"".join(b"100644 settings.py\x00" + bytes.fromhex(blob.id.decode()) for blob in (decoy, real))
    tree = Tree.from_raw_string(Tree.type_num, raw)
    with Repo.init(str(path), mkdir=True) as repo:
        for obj in (decoy, real, tree):
            repo.object_store.add_object(obj)
        commit = commit_tree(repo, tree.id)
    return path, commit, real.data


def test_a_tree_with_two_entries_of_one_name_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, commit, kept = _duplicate_entry_repo(tmp_path / "dup")
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--full"], capture_output=True, text=True)
    assert "duplicateEntries" in fsck.stdout + fsck.stderr  # git itself calls this tree broken
    store = tmp_path / "store"
    code, refusal = _corpus_json(capsys, store, str(repo), commit)
    assert (code, refusal["error"]["code"], refusal["error"]["path"]) == (9, "corpus", "settings.py")
    assert "appears twice" in refusal["error"]["message"]
    assert not Store(store).has(Digest.of(kept))  # nothing of the tree was stored


def _flip_middle_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.chmod(0o644)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["flip", "garbage", "swap"])
def test_a_damaged_loose_object_is_refused_naming_the_object(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    repo, commit = make_repo({"a.txt": b"alpha\n" * 50, "b.txt": b"beta\n" * 50})
    alpha, beta = (Blob.from_string(data).id.decode() for data in (b"alpha\n" * 50, b"beta\n" * 50))
    loose = repo / ".git" / "objects" / alpha[:2] / alpha[2:]
    if damage == "flip":
        _flip_middle_byte(loose)
    elif damage == "garbage":
        loose.chmod(0o644)
        loose.write_bytes(b"not zlib at all")
    else:  # another object's bytes under this name: inflates fine, hashes wrong
        loose.chmod(0o644)
        loose.write_bytes((repo / ".git" / "objects" / beta[:2] / beta[2:]).read_bytes())
    code, refusal = _corpus_json(capsys, tmp_path / "store", str(repo), commit)
    assert (code, refusal["error"]["code"]) == (9, "git-source-corrupt")
    assert alpha in refusal["error"]["message"] and str(repo) in refusal["error"]["message"]


def _swap_offsets(index: Path, one: str, other: str) -> None:
    """Point ``one``'s entry of a version 2 pack index at ``other``'s bytes and back: each name then finds the
    other object's bytes, which inflate and resolve fine."""
    data = bytearray(index.read_bytes())
    count = int.from_bytes(data[8 + 255 * 4 : 8 + 256 * 4], "big")
    names = [bytes(data[8 + 1024 + 20 * i : 8 + 1024 + 20 * (i + 1)]).hex() for i in range(count)]
    offsets = 8 + 1024 + 24 * count
    first, second = (offsets + 4 * names.index(sha) for sha in (one, other))
    data[first : first + 4], data[second : second + 4] = data[second : second + 4], data[first : first + 4]
    index.chmod(0o644)
    index.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["flip", "swap"])
def test_a_damaged_pack_is_refused_naming_the_object_and_its_path(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    # The corpus reads packed blobs raw, in pack order (GitSource.raw_many): the same refusal as a loose object.
    alpha_data, beta_data = b"alpha\n" * 50, b"the other file\n" * 40
    repo, commit = make_repo({"src/a.txt": alpha_data, "b.txt": beta_data})
    alpha, beta = (Blob.from_string(data).id.decode() for data in (alpha_data, beta_data))
    pack, index = packed(repo)
    if damage == "flip":
        with Repo(str(repo)) as handle:
            offset = next(p for p in handle.object_store.packs).index.object_offset(alpha.encode())
        data = bytearray(pack.read_bytes())
        data[offset + 6] ^= 0xFF  # inside the object's deflated bytes
        pack.chmod(0o644)
        pack.write_bytes(bytes(data))
    else:
        _swap_offsets(index, alpha, beta)
    code, refusal = _corpus_json(capsys, tmp_path / "store", str(repo), commit)
    assert (code, refusal["error"]["code"]) == (9, "git-source-corrupt"), refusal
    message = str(refusal["error"]["message"])
    assert f"object {alpha} (src/a.txt) cannot be read" in message and str(repo) in message
    if damage == "swap":
        assert "ChecksumMismatch" in message
    assert not Store(tmp_path / "store").has(Digest.of(beta_data))  # nothing of the tree was stored


def _bundle(repo: Path, target: Path) -> bytes:
    subprocess.run(["git", "-C", str(repo), "bundle", "create", str(target), "main"], check=True, capture_output=True)
    return target.read_bytes()


def test_a_truncated_or_altered_bundle_is_refused_at_every_cut(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, commit = make_repo({f"f{i}.txt": f"file {i}\n".encode() * 20 for i in range(5)})
    whole = _bundle(repo, tmp_path / "whole.bundle")
    header = whole.index(b"PACK")
    damaged = tmp_path / "damaged.bundle"
    cuts = sorted({header // 2, header + 6, header + 40, len(whole) // 2, len(whole) - 21, len(whole) - 1})
    variants = [whole[:cut] for cut in cuts]
    variants += [whole[:i] + bytes([whole[i] ^ 0x01]) + whole[i + 1 :] for i in (header + 30, len(whole) - 3)]
    for variant in variants:
        damaged.write_bytes(variant)
        code, refusal = _corpus_json(capsys, tmp_path / "store", str(damaged), commit)
        assert (code, refusal["error"]["code"]) in {(9, "source"), (9, "git-source-corrupt")}, refusal
        assert str(damaged) in refusal["error"]["message"]


def test_the_same_commit_from_two_checkouts_and_any_spelling_is_one_cache_hit(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, commit = make_repo({"src/app.py": b"print('app')\n"})
    other = tmp_path / "elsewhere" / repo.name
    other.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(repo), str(other)], check=True)
    store = tmp_path / "store"
    monkeypatch.chdir(repo.parent)
    spellings = [str(repo), f"{repo}/", f"./{repo.name}", f"{repo}/.git", str(other)]
    outcomes = [_corpus_json(capsys, store, spelling, commit)[1] for spelling in spellings]
    assert [outcome["ran"] for outcome in outcomes] == [True, False, False, False, False]
    assert len({outcome["action"] for outcome in outcomes}) == 1
    for outcome in outcomes:
        assert outcome["receipt"]["repository"] == repo.name  # type: ignore[index]
    key = Store(store).get_document(Digest(str(outcomes[0]["action"])), ActionKey)
    for document in (json.dumps(outcomes[0]["receipt"]), key.model_dump_json()):
        assert str(tmp_path) not in document  # no host path in the key or the receipt


def test_a_bundle_is_named_by_its_digest_wherever_it_lies(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, commit = make_repo({"a.txt": b"a\n"})
    first = tmp_path / "one" / "project.bundle"
    first.parent.mkdir()
    data = _bundle(repo, first)
    second = tmp_path / "two" / "copy.bundle"
    second.parent.mkdir()
    shutil.copy(first, second)
    store = tmp_path / "store"
    ran = [_corpus_json(capsys, store, str(path), commit)[1] for path in (first, second)]
    assert [outcome["ran"] for outcome in ran] == [True, False]
    assert ran[0]["receipt"]["repository"] == str(Digest.of(data))  # type: ignore[index]
    named = _corpus_json(capsys, store, str(second), commit, "--name", "acme-app")[1]
    assert named["receipt"]["repository"] == "acme-app"  # type: ignore[index]


def test_rederiving_a_corpus_needs_and_takes_its_location(
    make_repo: RepoFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo, commit = make_repo({"a.txt": b"a\n"})
    store = tmp_path / "store"
    tree = _corpus_json(capsys, store, str(repo), commit)[1]["outputs"]["tree"]  # type: ignore[index]
    # A source refused (exit 9): a corpus's key leaves its location out, so rederive needs it.
    assert main(["--store", str(store), "--json", "rederive", tree]) == 9
    refusal = json.loads(capsys.readouterr().out)["error"]
    assert refusal["field"] == "source" and "--locate source=PATH" in refusal["hint"]
    assert main(["--store", str(store), "rederive", tree, "--locate", f"source={repo}"]) == 0
    assert capsys.readouterr().out.strip() == "same"
