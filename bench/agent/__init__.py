"""The agent adapter: the harness's CLI in every arm container of an attempt, each against a gateway of its own.

Layout: ``arm_record.py`` what an attempt leaves (arm and pair records); ``recorder.py`` the gateway's record in the
store; ``harness_files.py`` the harness's files and endpoint (the harness itself: :mod:`bench.harness`);
``memory.py`` a declared system's memory through the provisioner adapter; ``attachment.py`` what its treatment
container gets; ``arm.py`` one arm (its model network, relay and session come from the sandbox backend);
``attempt.py`` the shared control and every treatment; ``paired_attempt.py`` the store stage ``paired-attempt``.
"""

from .arm import ArmRun, run_arm
from .arm_record import ArmRecord, ConditionName, PairRecord, PromptKind, StepRecord
from .attempt import AttemptSetup, arm_order, arm_spec, run_attempt
from .harness_files import base_url
from .recorder import ExchangeLog, StoreRecorder, read_exchange_log

__all__ = [
    "ArmRecord",
    "ArmRun",
    "AttemptSetup",
    "ConditionName",
    "ExchangeLog",
    "PairRecord",
    "PromptKind",
    "StepRecord",
    "StoreRecorder",
    "arm_order",
    "arm_spec",
    "base_url",
    "read_exchange_log",
    "run_arm",
    "run_attempt",
]
