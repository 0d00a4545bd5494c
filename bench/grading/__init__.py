"""Grading: the normalised transcript, and delivered / used / outcome reported separately, plus effort."""

from ..harness.transcript import Channel, Step, StepSource, ToolCall, ToolResult, Transcript
from .chain import Conversation, RunnerRecord, harness_conversation
from .delivery import ChannelDelivery, DeliveryGrade, grade_delivery
from .effort import EffortEnd, ExplorationEffort, measure_effort
from .findings import TamperFinding, TamperKind
from .gateway_view import ReceivedContext, hook_contexts, received_texts
from .layers import Grade, OutcomeGrade, grade
from .memory_declaration import InstalledHook, MemoryDeclaration
from .tamper import tamper_findings
from .used import UseEvidence, UseGrade, grade_use

__all__ = [
    "Channel",
    "ChannelDelivery",
    "Conversation",
    "DeliveryGrade",
    "EffortEnd",
    "ExplorationEffort",
    "Grade",
    "InstalledHook",
    "MemoryDeclaration",
    "OutcomeGrade",
    "ReceivedContext",
    "RunnerRecord",
    "Step",
    "StepSource",
    "TamperFinding",
    "TamperKind",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "UseEvidence",
    "UseGrade",
    "grade",
    "grade_delivery",
    "grade_use",
    "harness_conversation",
    "hook_contexts",
    "measure_effort",
    "received_texts",
    "tamper_findings",
]
