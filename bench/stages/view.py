"""The ``view`` stage: the transcript page of one attempt (:mod:`bench.publish.viewer`), from its arms' grades.

Its inputs are the grades of every arm of the attempt, by condition (each names its normalised transcript and its
arm record, whose gateway log gives what reached the model), and the admission of each memory system's pair. All of
them are documents a bundle carries, so ``verify`` re-renders the page from the bundle.
"""

from __future__ import annotations

from ..agent.arm_record import ArmRecord
from ..agent.recorder import read_exchange_log
from ..analysis import AdmissionDecision
from ..builder import Ports, StageContext, StageKind, stage
from ..contracts import BlobDigest, ContractModel, Ref
from ..grading import MemoryDeclaration, Transcript
from ..grading.chain import harness_conversation
from ..grading.delivery import received_contexts
from ..publish.viewer import ArmView, attempt_page
from ..suite.memory_system import CONTROL
from .grade import ArmGrade, arm_result

__all__ = ["ViewInputs", "ViewOutputs", "ViewParams", "page_label", "view"]


class ViewParams(ContractModel):
    challenge: str
    attempt: int
    memory: MemoryDeclaration  # the phrases to mark, and every system's MCP servers (their results reached it)


class ViewInputs(Ports):
    grades: dict[str, Ref[ArmGrade]]  # condition -> that arm's grade
    admissions: dict[str, Ref[AdmissionDecision]] = {}  # memory system -> the admission of its pair


class ViewOutputs(Ports):
    page: BlobDigest  # static HTML


def page_label(challenge: str, attempt: int) -> str:
    """The name of an attempt's page (``report/attempts/<label>.html``), which the report links by."""
    return f"{challenge}-{attempt}"


@stage("view", version=3, kind=StageKind.DETERMINISTIC)
def view(context: StageContext, inputs: ViewInputs, params: ViewParams) -> ViewOutputs:
    store = context.store
    decided = {system: store.get_document(ref, AdmissionDecision) for system, ref in sorted(inputs.admissions.items())}
    arms = []
    for condition in sorted(inputs.grades, key=lambda name: (name != CONTROL, name)):
        graded = store.get_document(inputs.grades[condition], ArmGrade)
        record = store.get_document(graded.arm, ArmRecord)
        conversation = harness_conversation(read_exchange_log(store, record.exchanges), record.runner())
        received = received_contexts(conversation, params.memory)
        # The control is in every system's pair; a treatment only in its own.
        pairs = tuple((s, d) for s, d in decided.items() if condition in (CONTROL, s))
        transcript = store.get_document(graded.transcript, Transcript)
        arms.append(ArmView(condition, arm_result(store, graded), pairs, transcript, received))
    html = attempt_page(params.challenge, params.attempt, arms, params.memory.phrases)
    return ViewOutputs(page=store.put_bytes(html.encode("utf-8")))
