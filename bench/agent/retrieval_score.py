"""What a deterministic memory retrieves for the challenge's own prompt, asked while its state is still restored.

A memory system whose restore declares deterministic retrieval answers ``retrieve`` with the context its hooks would
inject and, optionally, the evidence documents that context holds (``RetrieveResponse.sources``). After the arms
ran, and before the memory is destroyed, the runner asks it once for the prompt hook's input on the challenge's
prompt (as the harness hands it, in the workspace) and records the documents it names, best first, beside the
challenge's oracle documents and the fixture's scoring depths. The analysis scores recall@k and precision@k from
this record (:mod:`bench.analysis.retrieval`); the documents are read from the state restore built, pool included,
so noise that outranks the oracle shows here even when the arm itself never asked.

A refused ``retrieve`` is recorded with the refusal and no documents: not measured, never a zero.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import Field

from ..contracts import ContractModel, Document, PortablePath
from ..provision import ProvisionRefused
from ..provision.messages import HookEvent, HookEventName, RetrieveResponse
from ..provision.protocol_call import CallRecord
from ..sandbox.layout import WORKSPACE
from .arm_record import ConditionName

__all__ = ["PUBLIC_CONTRACTS", "Answer", "RetrievalScore", "score_retrieval"]

# The provisioner's retrieve for one restored project, as a blocking call: one batch of events, the call log.
Answer = Callable[[tuple[HookEvent, ...], list[CallRecord]], RetrieveResponse]


class RetrievalScore(Document):
    kind: Literal["retrieval-score"] = "retrieval-score"
    schema_version: Literal[1] = 1
    system: ConditionName
    query: HookEvent  # the prompt hook's input for the challenge's prompt
    oracle: tuple[PortablePath, ...]  # the challenge's oracle documents (the suite names them)
    depths: tuple[int, ...]  # the fixture's scoring depths
    retrieved: tuple[PortablePath, ...] | None  # what retrieve named, best first; None: nothing named
    note: Annotated[str, Field(max_length=2000)] = ""
    calls: tuple[CallRecord, ...]


def score_retrieval(
    system: str, prompt: str, oracle: tuple[str, ...], depths: tuple[int, ...], answer: Answer
) -> RetrievalScore:
    """Ask ``answer`` (the live memory's retrieve) about ``prompt`` and record what it named."""
    query = HookEvent(hook_event_name=HookEventName.USER_PROMPT_SUBMIT, cwd=WORKSPACE, prompt=prompt)
    calls: list[CallRecord] = []
    retrieved: tuple[PortablePath, ...] | None = None
    note = ""
    try:
        response = answer((query,), calls)
    except ProvisionRefused as refused:
        note = f"retrieve was refused ({refused.reason_code.value}): {refused}"[:2000]
    else:
        if response.sources is None:
            note = "retrieve names no documents, only contexts"
        else:
            retrieved = response.sources[0]
    return RetrievalScore(
        system=system,
        query=query,
        oracle=tuple(PortablePath(path) for path in oracle),
        depths=depths,
        retrieved=retrieved,
        note=note,
        calls=tuple(calls),
    )


PUBLIC_CONTRACTS: tuple[type[ContractModel], ...] = (RetrievalScore,)
