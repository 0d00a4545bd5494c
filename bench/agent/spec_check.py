"""What ``verify`` re-derives of a paired attempt, an observed action: each pair's spec-diff, from its arms' specs.

The arms ran once and are attested, but the receipt that says the control and a treatment differed only in the
memory attachment is a pure function of the two container specs their arm records keep. So a bundle's reader
recomputes it (:func:`~bench.sandbox.spec.spec_diff`) and compares it with the one recorded, and the pair record
must name that receipt: a forged spec-diff, or one that hides a difference outside the attachment, is found without
trusting the publisher.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..contracts import Digest, canonical_bytes
from ..errors import BenchError
from ..sandbox.spec import spec_diff
from ..store import Store
from ..suite.memory_system import CONTROL
from .arm_record import ArmRecord, PairRecord

__all__ = ["check_spec_diffs"]

PAIRS, SPEC_DIFFS = "pairs/", "spec_diffs/"


def check_spec_diffs(store: Store, outputs: Mapping[str, Digest]) -> list[str]:
    """Each way a paired attempt's recorded spec-diffs disagree with its arms' container specs."""
    found = []
    for port, digest in sorted(outputs.items()):
        if not port.startswith(PAIRS):
            continue
        system = port.removeprefix(PAIRS)
        recorded = outputs.get(SPEC_DIFFS + system)
        try:
            pair = store.get_document(digest, PairRecord)
            arms = {arm.condition: arm for arm in store.get_documents(list(pair.arms), ArmRecord)}
        except BenchError as exc:
            found.append(f"pair {system}: its records cannot be read ({exc})")
            continue
        if set(arms) != {CONTROL, system}:
            found.append(f"pair {system}: its arms are {sorted(arms)}, not {CONTROL} and {system}")
            continue
        receipt = spec_diff(arms[CONTROL].spec, arms[system].spec, (CONTROL, system))
        derived = Digest.of(canonical_bytes(receipt))
        if recorded != derived or pair.spec_diff != derived:
            found.append(f"spec-diff of {system}: recorded {recorded}, re-derived from the arms' specs {derived}")
        if not receipt.only_attachment:
            stray = [d.field for d in receipt.differences if d.field.split(".")[0] != "attachment"]
            found.append(f"pair {system}: the arms' specs differ outside the memory attachment ({', '.join(stray)})")
    return found
