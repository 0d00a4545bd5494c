"""The store contract: what every backend behind :class:`Store` must do, run once per backend.

A backend's test module subclasses :class:`StoreContract`, says how to open a store on it and how to corrupt one
of its objects (what a flipped bit on its medium looks like), and inherits every test here.
"""

from __future__ import annotations

import abc
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from bench.builder import StageContext, execute
from bench.builder.execution import ActionOutcome, action_key, cached_result, cached_results
from bench.builder.lineage import lineage
from bench.contracts import Digest
from bench.errors import ContractError, ObjectCorrupt, ObjectMissing
from bench.stages.directory_tree import directory_fingerprint, directory_tree
from bench.stages.tree_summary import tree_summary
from bench.store import PACK_LIMIT, EntryKind, Store, TreeEntry, TreeObject, tree_from_directory, walk_tree
from bench.store.actions import (
    ActionKey,
    ActionResult,
    producers,
    record,
    recorded_from,
    results_for,
    results_for_many,
)
from bench.store.fsck import FsckStatus, fsck
from bench.store.gc import gc
from bench.store.repair import DirectorySource, StoreSource, repair

__all__ = ["StoreContract"]

T = TypeVar("T")


def in_another_thread(work: Callable[[], T]) -> T:
    """What ``work`` returns when run by another thread: what the store shows to everyone but its writer."""
    answer: list[T] = []
    thread = threading.Thread(target=lambda: answer.append(work()))
    thread.start()
    thread.join()
    return answer[0]


def action_result(store: Store, seed: str, outputs: dict[str, Digest], started: float = 0.0) -> ActionResult:
    """A result of a made-up action keyed by ``seed``, its key document stored."""
    key = ActionKey(stage="contract", stage_version=1, code=store.put_bytes(b"code"), params={"seed": seed}, inputs={})
    return ActionResult(
        key=store.put_document(key), outputs=outputs, started=started, ended=started, duration_seconds=0, host="h"
    )


class StoreContract(abc.ABC):
    """Every test of the store that holds whatever keeps its bytes."""

    @abc.abstractmethod
    def open_store(self, tmp_path: Path) -> Store:
        """A new, empty store on the backend under test."""

    @abc.abstractmethod
    def corrupt(self, store: Store, digest: Digest) -> None:
        """Flip one stored byte of ``digest``, behind the store's back."""

    @abc.abstractmethod
    def lose(self, store: Store, digest: Digest) -> None:
        """Remove the stored bytes of ``digest`` behind the store's back (a deleted file; an index may still list
        it)."""

    @pytest.fixture
    def store(self, tmp_path: Path) -> Store:
        return self.open_store(tmp_path)

    # -- objects -----------------------------------------------------------------------------------

    def test_bytes_round_trip_whatever_their_size(self, store: Store) -> None:
        for data in (b"small object", os.urandom(PACK_LIMIT + 1), b""):
            digest = store.put_bytes(data)
            assert digest == Digest.of(data)
            assert store.has(digest) and not store.is_document(digest)
            assert store.get_bytes(digest) == data
        assert not store.has(Digest.of(b"never stored"))

    def test_an_object_is_written_once_and_listed_in_name_order(self, store: Store) -> None:
        first = store.put_bytes(b"same bytes")
        assert store.put_bytes(b"same bytes", document=True) == first
        assert not store.is_document(first), "a second put changes nothing, not even the document flag"
        others = [store.put_bytes(f"object {index}".encode()) for index in range(20)]
        assert list(store.digests()) == sorted({first, *others})

    def test_a_missing_object_is_an_error_naming_it(self, store: Store) -> None:
        absent = Digest.of(b"never stored")
        with pytest.raises(ObjectMissing, match=absent.hex):
            store.get_bytes(absent)
        with pytest.raises(ObjectMissing, match=absent.hex):
            store.is_document(absent)

    def test_a_corrupt_object_is_refused_on_read_and_named_by_fsck(self, store: Store) -> None:
        keep = store.put_bytes(b"intact")
        small = store.put_bytes(b"will be tampered with")
        large = store.put_bytes(os.urandom(PACK_LIMIT * 2))
        for digest in (small, large):
            self.corrupt(store, digest)
            with pytest.raises(ObjectCorrupt, match=digest.hex):
                store.get_bytes(digest)
        assert store.get_bytes(keep) == b"intact"
        report = fsck(store)
        assert sorted(report.corrupt) == sorted([small, large])
        assert report.status is FsckStatus.CORRUPT

    def test_get_many_reads_in_the_order_given_and_verifies_each(self, store: Store) -> None:
        digests = [store.put_bytes(f"object {index}".encode()) for index in range(1200)]
        digests.append(store.put_bytes(os.urandom(PACK_LIMIT)))
        wanted = list(reversed(digests))
        assert [digest for digest, _ in store.get_many(wanted)] == wanted
        assert all(Digest.of(data) == digest for digest, data in store.get_many(wanted))
        self.corrupt(store, digests[700])
        with pytest.raises(ObjectCorrupt, match=digests[700].hex):
            list(store.get_many(digests))
        with pytest.raises(ObjectMissing):
            list(store.get_many([Digest.of(b"never stored")]))

    def test_get_unordered_yields_each_object_once_verified_in_any_order(self, store: Store) -> None:
        single = [store.put_bytes(f"object {index}".encode()) for index in range(300)]
        bulk = store.put_many([os.urandom(3000 + index) for index in range(700)])
        wanted = [*bulk[::2], store.put_bytes(os.urandom(PACK_LIMIT)), *single, *bulk[1::2]]
        found = list(store.get_unordered(wanted))
        assert sorted(digest for digest, _ in found) == sorted(wanted)
        assert all(Digest.of(data) == digest for digest, data in found)
        self.corrupt(store, single[100])
        with pytest.raises(ObjectCorrupt, match=single[100].hex):
            list(store.get_unordered(wanted))
        with pytest.raises(ObjectMissing):
            list(store.get_unordered([*bulk, Digest.of(b"never stored")]))

    def test_has_many_answers_has_for_each_digest_in_batches(self, store: Store) -> None:
        stored = [store.put_bytes(f"object {index}".encode()) for index in range(1200)]
        absent = [Digest.of(f"never stored {index}".encode()) for index in range(3)]
        wrong_size = Digest.from_parts(stored[5].hex, stored[5].size + 1)  # its hex stored, under another size
        asked = [absent[0], *stored, absent[1], wrong_size, absent[2]]
        assert store.has_many(asked) == set(stored)
        assert store.has_many(asked) == {digest for digest in asked if store.has(digest)}
        assert store.has_many([]) == set()

    def test_a_bulk_write_stores_each_object_once_and_shows_it_only_when_it_ends(self, store: Store) -> None:
        before = store.put_bytes(b"already stored")
        datas = [b"already stored", os.urandom(PACK_LIMIT + 1), b"", *(os.urandom(5000) for _ in range(600))]
        datas.append(datas[3])  # the same bytes twice in one write
        with store.batch():
            digests = store.put_many(datas)
            assert not in_another_thread(lambda: store.has(digests[3]))
            assert store.get_bytes(digests[3]) == datas[3], "a batch reads its own writes"
        assert digests == [Digest.of(data) for data in datas] and digests[0] == before
        assert [data for _, data in store.get_many(digests)] == datas
        assert sorted(store.digests()) == sorted(set(digests))
        assert store.put_many([b"a document", b"x"], document=True) and store.is_document(Digest.of(b"a document"))

    def test_documents_round_trip_through_their_contract(self, store: Store) -> None:
        blob = store.put_bytes(b"content")
        tree = TreeObject(entries=(TreeEntry(name="f", kind=EntryKind.FILE, digest=blob, size=7),))
        digest = store.put_document(tree)
        assert store.is_document(digest)
        assert store.get_document(digest, TreeObject) == tree
        with pytest.raises(ContractError, match=f"object {digest} is not a valid ActionKey"):
            store.get_document(digest, ActionKey)

    def test_several_threads_writing_the_same_objects_agree(self, store: Store) -> None:
        def write() -> list[Digest]:
            return [store.put_bytes(str(index).encode() * 100) for index in range(100)]

        results: list[list[Digest]] = []
        threads = [threading.Thread(target=lambda: results.append(write())) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(results) == 4 and all(result == results[0] for result in results)
        assert sorted(store.digests()) == sorted(results[0])

    # -- batches -----------------------------------------------------------------------------------

    def test_a_batch_that_raises_leaves_nothing_visible(self, store: Store) -> None:
        output = store.put_bytes(b"an output from before")
        with pytest.raises(RuntimeError, match="stop"), store.batch():
            small, large = store.put_bytes(b"small"), store.put_bytes(os.urandom(PACK_LIMIT))
            store.set_ref("pending", small)
            result = record(store, action_result(store, "pending", {"out": output}))
            assert store.has(small) and store.has(large) and store.get_ref("pending") == small, "own writes show"
            raise RuntimeError("stop")
        assert not store.has(small) and not store.has(large) and not store.has(result)
        assert store.refs() == {} and producers(store, output) == []
        assert list(store.digests()) == [output]

    def test_a_batch_shows_its_writes_to_others_only_when_it_ends(self, store: Store) -> None:
        with store.batch():
            digest = store.put_bytes(b"written in a batch")
            store.set_ref("batched", digest)
            assert not in_another_thread(lambda: store.has(digest))
            assert in_another_thread(lambda: store.get_ref("batched")) is None
        assert in_another_thread(lambda: store.has(digest))
        assert in_another_thread(lambda: store.get_ref("batched")) == digest

    def test_an_inner_batch_that_raises_undoes_only_its_own_writes(self, store: Store) -> None:
        with store.batch():
            outer = store.put_bytes(b"outer")
            with pytest.raises(RuntimeError), store.batch():
                inner = store.put_bytes(b"inner")
                raise RuntimeError
            assert store.has(outer) and not store.has(inner)
        assert store.has(outer) and not store.has(inner)

    # -- refs --------------------------------------------------------------------------------------

    def test_refs_point_only_at_stored_objects(self, store: Store) -> None:
        first, second = store.put_bytes(b"first"), store.put_bytes(b"second")
        store.set_ref("b", first)
        store.set_ref("a", first)
        store.set_ref("b", second)
        assert store.get_ref("b") == second and store.get_ref("absent") is None
        assert list(store.refs().items()) == [("a", first), ("b", second)]
        absent = Digest.of(b"never stored")
        with pytest.raises(ObjectMissing, match=absent.hex):
            store.set_ref("a", absent)
        assert store.get_ref("a") == first
        assert store.delete_ref("a") and not store.delete_ref("a")
        assert store.refs() == {"b": second}

    def test_compare_and_set_moves_a_ref_only_from_what_the_caller_saw(self, store: Store) -> None:
        first, second, third = (store.put_bytes(text) for text in (b"1", b"2", b"3"))
        assert store.compare_and_set_ref("head", None, first)
        assert not store.compare_and_set_ref("head", None, second), "None expects no ref at all"
        assert store.compare_and_set_ref("head", first, second)
        assert not store.compare_and_set_ref("head", first, third), "a stale expectation"
        assert store.get_ref("head") == second
        with pytest.raises(ObjectMissing):
            store.compare_and_set_ref("head", second, Digest.of(b"never stored"))
        assert store.get_ref("head") == second

    def test_compare_and_set_loses_no_update_between_threads(self, store: Store) -> None:
        store.set_ref("counter", store.put_bytes(b"0"))

        def increment(times: int) -> None:
            done = 0
            while done < times:
                seen = store.get_ref("counter")
                assert seen is not None
                following = store.put_bytes(str(int(store.get_bytes(seen)) + 1).encode())
                done += store.compare_and_set_ref("counter", seen, following)

        threads = [threading.Thread(target=increment, args=(25,)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        counter = store.get_ref("counter")
        assert counter is not None and store.get_bytes(counter) == b"100"

    # -- action results ----------------------------------------------------------------------------

    def test_a_key_has_one_result_the_first_recorded(self, store: Store) -> None:
        one, other = store.put_bytes(b"one output"), store.put_bytes(b"another output")
        first = action_result(store, "key", {"out": one})
        second = first.model_copy(update={"outputs": {"out": other}, "started": 1.0})
        first_digest = record(store, first)
        assert record(store, second) == first_digest, "a second result is refused: the first stands"
        assert record(store, first) == first_digest, "recording the result again changes nothing"
        assert results_for(store, first.key) == [first_digest]
        assert producers(store, one) == [first_digest] and producers(store, other) == []
        assert [result.key for result in recorded_from(store, 0.0)] == [first.key]
        third = record(store, action_result(store, "another key", {"out": one, "copy": one}))
        assert results_for(store, first.key) == [first_digest]
        assert sorted(producers(store, one)) == sorted([first_digest, third])
        assert results_for(store, Digest.of(b"no such key")) == [] and producers(store, first.key) == []

    def test_a_result_is_replaced_only_by_naming_it(self, store: Store) -> None:
        one, other, third = (store.put_bytes(f"output {index}".encode()) for index in range(3))
        first = action_result(store, "replaced", {"out": one})
        first_digest = record(store, first)
        second = first.model_copy(update={"outputs": {"out": other}, "started": 1.0})
        second_digest = record(store, second, replacing=first_digest)
        assert results_for(store, first.key) == [second_digest] and producers(store, one) == []
        assert producers(store, other) == [second_digest]
        stale = first.model_copy(update={"outputs": {"out": third}, "started": 2.0})
        assert record(store, stale, replacing=first_digest) == second_digest, "it names a result replaced since"
        assert [result.outputs for result in recorded_from(store, 0.0)] == [{"out": other}]

    def test_workers_recording_one_key_at_once_leave_one_result_every_reader_sees(self, store: Store) -> None:
        outputs = [store.put_bytes(f"worker {index}".encode()) for index in range(8)]
        results = [action_result(store, "raced", {"out": output}, started=float(i)) for i, output in enumerate(outputs)]
        answers: list[Digest] = []
        threads = [threading.Thread(target=lambda r=result: answers.append(record(store, r))) for result in results]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        (winner,) = set(answers)
        assert results_for(store, results[0].key) == [winner]
        assert [result.key for result in recorded_from(store, 0.0)] == [results[0].key]
        assert sum(len(producers(store, output)) for output in outputs) == 1

    def test_results_of_many_keys_are_each_keys_result(self, store: Store) -> None:
        outputs = [store.put_bytes(f"output {index}".encode()) for index in range(3)]
        keys: list[Digest] = []
        for index in range(1100):  # more keys than one query asks
            first = action_result(store, f"key {index}", {"out": outputs[0]})
            record(store, first)
            if index % 500 == 0:  # a second result of a few keys, refused
                record(store, first.model_copy(update={"outputs": {"out": outputs[index % 3]}, "started": 1.0}))
            keys.append(first.key)
        never = Digest.of(b"no such key")
        found = results_for_many(store, [never, *keys, keys[0]])
        assert found == {key: results_for(store, key) for key in keys}
        assert {len(results) for results in found.values()} == {1}

    def test_cached_results_of_many_keys_answer_as_each_key_asked_alone(self, store: Store) -> None:
        kept, collected = store.put_bytes(b"kept output"), store.put_bytes(b"collected output")
        complete = action_result(store, "complete", {"out": kept})
        lost = action_result(store, "lost its output", {"out": collected})
        for result in (complete, lost):
            record(store, result)
        store.backend.delete([collected])
        never = Digest.of(b"never recorded")
        keys = [complete.key, lost.key, never]
        answers = cached_results(store, keys)
        assert answers == {key: answer for key in keys if (answer := cached_result(store, key)) is not None}
        assert {key: answer[1] for key, answer in answers.items()} == {complete.key: complete}

    def test_an_action_whose_outputs_are_gone_runs_again_and_replaces_its_result(self, store: Store) -> None:
        entry = TreeEntry(name="a", kind=EntryKind.FILE, digest=store.put_bytes(b"a"), size=1)
        source = store.put_document(TreeObject(entries=(entry,)))
        first = execute(StageContext(store), tree_summary, {"tree": source}, {})
        store.backend.delete(list(first.outputs.values()))
        assert cached_result(store, first.key) is None
        again = execute(StageContext(store), tree_summary, {"tree": source}, {})
        assert again.executed and again.key == first.key and again.result != first.result
        assert results_for(store, first.key) == [again.result], "the new result replaced the one whose outputs went"

    # -- claims ------------------------------------------------------------------------------------

    def test_a_claim_moves_only_from_what_the_caller_saw(self, store: Store) -> None:
        backend, key = store.backend, Digest.of(b"a key")
        assert backend.claimant(key) is None
        assert backend.swap_claim(key, None, b"first") and backend.claimant(key) == b"first"
        assert not backend.swap_claim(key, None, b"second"), "claimed already"
        assert not backend.swap_claim(key, b"stale", b"second") and backend.claimant(key) == b"first"
        assert backend.swap_claim(key, b"first", b"renewed") and backend.claimant(key) == b"renewed"
        assert not backend.swap_claim(key, b"first", None), "a release names the claim it holds"
        assert backend.swap_claim(key, b"renewed", None) and backend.claimant(key) is None
        assert backend.claimant(Digest.of(b"another key")) is None

    def test_one_of_many_threads_claiming_a_key_wins(self, store: Store) -> None:
        key = Digest.of(b"contended")
        won: list[int] = []

        def claim(index: int) -> None:
            if store.backend.swap_claim(key, None, str(index).encode()):
                won.append(index)

        threads = [threading.Thread(target=claim, args=(index,)) for index in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1 and store.backend.claimant(key) == str(won[0]).encode()

    def test_workers_executing_one_key_at_once_compute_it_once(self, store: Store, tmp_path: Path) -> None:
        source = tmp_path / "src"
        source.mkdir()
        (source / "a.txt").write_text("computed once")
        params = {"directory": str(source), "fingerprint": directory_fingerprint(source)}
        outcomes: list[ActionOutcome] = []
        threads = [
            threading.Thread(target=lambda: outcomes.append(execute(StageContext(store), directory_tree, {}, params)))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert [outcome.executed for outcome in outcomes].count(True) == 1
        assert len({(outcome.result, tuple(outcome.outputs.items())) for outcome in outcomes}) == 1
        assert results_for(store, outcomes[0].key) == [outcomes[0].result]
        assert store.backend.claimant(outcomes[0].key) is None, "the claim is released"

    def test_recorded_since_is_the_action_log_oldest_first(self, store: Store) -> None:
        output = store.put_bytes(b"output")
        record(store, action_result(store, "before", {"out": output}))
        since = time.time()
        later = [action_result(store, f"after {index}", {"out": output}) for index in range(3)]
        for result in later:
            record(store, result)
        assert recorded_from(store, since) == later
        assert recorded_from(store, time.time()) == []

    # -- gc and fsck -------------------------------------------------------------------------------

    def test_gc_keeps_everything_reachable_from_refs_with_its_lineage(self, store: Store, tmp_path: Path) -> None:
        source = tmp_path / "src"
        source.mkdir()
        (source / "a.txt").write_text("kept")
        (source / "big.bin").write_bytes(os.urandom(PACK_LIMIT))
        params = {"directory": str(source), "fingerprint": directory_fingerprint(source)}
        tree = execute(StageContext(store), directory_tree, {}, params).outputs["tree"]
        summary = execute(StageContext(store), tree_summary, {"tree": tree}, {}).outputs["summary"]
        store.set_ref("suite/demo", summary)
        garbage = store.put_bytes(b"nobody points here")
        garbage_big = store.put_bytes(os.urandom(PACK_LIMIT))
        before = sum(1 for _ in store.digests())

        report = gc(store, grace_seconds=0)

        assert not store.has(garbage) and not store.has(garbage_big)
        assert report.deleted == 2 and report.kept == before - 2
        assert report.freed_bytes == garbage.size + garbage_big.size
        assert store.has(summary) and store.has(tree)
        assert all(store.has(entry.digest) for _, entry in walk_tree(store, tree))
        chain = lineage(store, summary)
        assert chain.stage == "tree-summary" and chain.inputs["tree"].stage == "directory-tree"
        assert fsck(store).status is FsckStatus.CLEAN

    def test_gc_spares_young_objects_and_never_a_ref(self, store: Store, tmp_path: Path) -> None:
        young = store.put_bytes(b"written a moment ago")
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "f").write_text("x")
        tree = tree_from_directory(store, tmp_path / "d")
        store.set_ref("keep", tree)
        gc(store)  # default grace: an hour
        assert store.has(young)
        gc(store, grace_seconds=0)
        assert not store.has(young)
        assert store.has(tree)

    def test_gc_forgets_the_action_results_it_deletes(self, store: Store) -> None:
        output = store.put_bytes(b"an unreferenced output")
        result = action_result(store, "unreferenced", {"out": output})
        record(store, result)
        assert gc(store, grace_seconds=0).kept == 0
        assert results_for(store, result.key) == [] and producers(store, output) == []
        assert recorded_from(store, 0.0) == []

    def test_fsck_names_each_missing_object_with_who_refers_to_it(self, store: Store) -> None:
        assert fsck(store).status is FsckStatus.CLEAN
        absent = Digest.of(b"never stored")
        tree = store.put_document(
            TreeObject(entries=(TreeEntry(name="f", kind=EntryKind.FILE, digest=absent, size=12),))
        )
        store.backend.set_ref("dangling", Digest.of(b"also never stored"))  # behind the facade, which refuses it
        report = fsck(store)
        assert report.status is FsckStatus.MISSING and report.objects == 1
        assert report.missing == {absent: [str(tree)], Digest.of(b"also never stored"): ["ref dangling"]}
        blob = store.put_bytes(b"soon corrupt")
        self.corrupt(store, blob)
        assert fsck(store).status is FsckStatus.CORRUPT_AND_MISSING

    # -- repair ------------------------------------------------------------------------------------

    def _tree_and_summary(self, store: Store, source: Path) -> tuple[Digest, Digest, Digest, Digest]:
        """A directory of a small and a large file stored by directory-tree, summarised: (tree, summary, small,
        large)."""
        source.mkdir()
        (source / "small.txt").write_text("a small file, kept inline or packed")
        (source / "large.bin").write_bytes(os.urandom(PACK_LIMIT * 2))
        params = {"directory": str(source), "fingerprint": directory_fingerprint(source)}
        tree = execute(StageContext(store), directory_tree, {}, params).outputs["tree"]
        summary = execute(StageContext(store), tree_summary, {"tree": tree}, {}).outputs["summary"]
        entries = {entry.name: entry.digest for _, entry in walk_tree(store, tree)}
        return tree, summary, entries["small.txt"], entries["large.bin"]

    def test_repair_puts_good_bytes_back_from_a_directory(self, store: Store, tmp_path: Path) -> None:
        _, _, small, large = self._tree_and_summary(store, tmp_path / "src")
        self.corrupt(store, small)
        self.lose(store, large)
        assert fsck(store).status is FsckStatus.CORRUPT_AND_MISSING
        store.put_bytes((tmp_path / "src" / "small.txt").read_bytes())  # a plain put of good bytes changes nothing
        assert fsck(store).corrupt == [small]
        report = repair(store, DirectorySource(tmp_path / "src"))
        assert report.healed == sorted([small, large]) and report.complete
        assert report.dropped == [] and report.forgotten == []
        assert fsck(store).status is FsckStatus.CLEAN
        assert store.get_bytes(small) == (tmp_path / "src" / "small.txt").read_bytes()

    def test_repair_puts_good_bytes_back_from_another_store(self, store: Store, tmp_path: Path) -> None:
        _, _, small, _ = self._tree_and_summary(store, tmp_path / "src")
        other = Store.in_memory()
        tree_from_directory(other, tmp_path / "src")
        self.corrupt(store, small)
        assert repair(store, StoreSource(other)).healed == [small]
        assert fsck(store).status is FsckStatus.CLEAN

    def test_repair_without_a_good_copy_makes_the_producing_action_run_again(
        self, store: Store, tmp_path: Path
    ) -> None:
        tree, summary, small, large = self._tree_and_summary(store, tmp_path / "src")
        self.corrupt(store, small)
        self.lose(store, large)
        before = cached_result(store, action_key(store, tree_summary, {"tree": tree}, tree_summary.parse_params({})))
        report = repair(store)
        assert small in report.dropped and report.healed == [] and report.complete
        assert [item.stage for item in report.forgotten] == ["directory-tree"]  # not tree-summary: it only read it
        assert not store.has(small)
        params = {"directory": str(tmp_path / "src"), "fingerprint": directory_fingerprint(tmp_path / "src")}
        again = execute(StageContext(store), directory_tree, {}, params)
        assert again.executed and again.outputs["tree"] == tree  # ran again and stored the bytes
        summarised = execute(StageContext(store), tree_summary, {"tree": tree}, {})
        assert not summarised.executed and summarised.outputs["summary"] == summary  # its result stood
        assert before is not None and summarised.result == before[0]
        assert fsck(store).status is FsckStatus.CLEAN

    def test_repair_of_a_healthy_store_does_nothing(self, store: Store, tmp_path: Path) -> None:
        self._tree_and_summary(store, tmp_path / "src")
        listed = list(store.digests())
        report = repair(store)
        assert (report.healed, report.dropped, report.forgotten, report.unrepaired) == ([], [], [], [])
        assert list(store.digests()) == listed
