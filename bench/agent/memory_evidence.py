"""After a treatment arm: what the agent wrote into the memory's state, and its memory-tool results re-derived.

The runner copied every mounted location before the arms ran (:func:`~.state_copy.copy_state`). After them it copies
them again: the files that differ are the agent's writing, named on the pair and never credited to the system
(a read-only location that changed is a finding), the arm's memory-tool calls are replayed over the first copy
(:mod:`.replay_tools`), and what grading reads of that copy is kept as a document
(:class:`~bench.grading.restored.RestoredState`), so a published bundle re-derives the grade from it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..contracts import Digest
from ..grading.restored import restored_state
from ..store import EntryKind, walk_tree
from ..suite.memory_system import MemorySystem
from .arm import ArmRun
from .arm_record import ArmRecord
from .recorder import read_exchange_log
from .replay_tools import replay_tools
from .state_copy import StateCopy, copy_state, state_files, state_writes
from .treatment_memory import LiveMemory

__all__ = ["StateEvidence", "state_evidence"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StateEvidence:
    before: tuple[StateCopy, ...]
    after: tuple[StateCopy, ...]
    restored: Digest  # the RestoredState grading reads of ``before``
    replay: Digest | None  # the ToolReplay, when the arm called the memory's tools
    writes: tuple[str, ...]  # "<target>: <files>" the arm changed
    findings: tuple[str, ...]  # read-only locations that changed anyway

    def on_arm(self) -> dict[str, object]:
        """What the treatment's arm record keeps of it."""
        return {"state_before": self.before, "state_after": self.after, "restored": self.restored}


def state_evidence(
    run: ArmRun, system: MemorySystem, memory: LiveMemory, record: ArmRecord, before: tuple[StateCopy, ...], image: str
) -> StateEvidence:
    """Copy ``system``'s state again after its arm ``record`` and replay its memory-tool calls over ``before``."""
    store = run.store
    after = copy_state(store, system, memory.session.restored)
    changed = state_writes(store, before, after)
    writable = {copy.target for copy in before if copy.writable}
    writes = tuple(f"{target}: {', '.join(paths)}" for target, paths in changed.items())
    findings = tuple(
        f"{target} is mounted read-only, yet changed during the arm: {', '.join(paths)}"
        for target, paths in changed.items()
        if target not in writable
    )
    exchanges = list(read_exchange_log(store, record.exchanges))
    replayed = replay_tools(run.backend, system, image, record.exchanges, exchanges, record.runner(), before)
    if replayed is not None:
        _log.info("%s: memory-tool results replayed (%d call(s), %d finding(s))", system.name,
                  len(replayed.calls), len(replayed.findings))  # fmt: skip
    replay = None if replayed is None else store.put_document(replayed)
    start = [store.get_bytes(e.digest) for _, e in walk_tree(store, record.start) if e.kind is not EntryKind.DIRECTORY]
    restored = store.put_document(restored_state(state_files(store, before), start))
    return StateEvidence(before, after, restored, replay, writes, findings)
