"""A bundle's lineage is exactly its run: the actions the pipeline hands it by key, never "the earliest action that
output a digest" (issue 31).

Before, a bundle took each object's earliest producer from the whole store, so an action another run recorded that
happened to make the same bytes (another suite's attempt) entered the bundle, and a host path in an old run's
receipt refused every later publication of anything that shared an output with it.
"""

from __future__ import annotations

import pytest

from bench.builder import NoInputs, Ports, StageContext, StageKind, execute, stage
from bench.contracts import BlobDigest, ContractModel
from bench.errors import StageError
from bench.publish import PublicationLineage, check_leaks
from bench.publish.lineage_files import lineage_files
from bench.publish.manifest import LINEAGE_PATH
from bench.store import Store


class NoteParams(ContractModel):
    where: str  # where the note was written: another run's receipt kept a host path here
    text: str


class NoteOutputs(Ports):
    note: BlobDigest


@stage("note", version=1, kind=StageKind.DETERMINISTIC)
def note(context: StageContext, inputs: NoInputs, params: NoteParams) -> NoteOutputs:
    return NoteOutputs(note=context.store.put_bytes(params.text.encode()))


def test_an_earlier_action_of_another_run_with_the_same_output_never_enters_the_lineage() -> None:
    store = Store.in_memory()
    other = execute(StageContext(store), note, {}, NoteParams(where="/home/alice/old-run", text="same"))
    mine = execute(StageContext(store), note, {}, NoteParams(where="suite", text="same"))
    assert other.outputs == mine.outputs and other.key != mine.key  # two actions, one output: other recorded first
    files = lineage_files(store, [mine.key], mine.outputs.values())
    lineage = PublicationLineage.model_validate_json(files[LINEAGE_PATH])
    assert [(action.stage, action.key, action.result) for action in lineage.actions] == [
        ("note", mine.key, mine.result)
    ]
    assert not any(path.endswith(f"{other.key.hex}.json") for path in files)
    assert [finding for path, data in files.items() for finding in check_leaks(path, data)] == []


def test_an_action_of_the_run_with_no_result_left_is_refused() -> None:
    store = Store.in_memory()
    mine = execute(StageContext(store), note, {}, NoteParams(where="suite", text="gone"))
    store.backend.delete([mine.result])  # its result forgotten (fsck --repair, gc): the run must make it again
    with pytest.raises(StageError, match="run the suite again"):
        lineage_files(store, [mine.key], mine.outputs.values())
