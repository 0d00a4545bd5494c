"""The agent adapter: the Claude Code CLI in both arm containers of a pair, against a gateway of its own.

Layout: ``arm_record.py`` what a pair leaves (arm and pair records, the conditions); ``recorder.py`` the gateway's
record in the store; ``claude.py`` the CLI's command line, environment and files; ``memory.py`` the treatment arm's
memory through the provisioner adapter; ``arm.py`` one arm (its model network, relay and session come from the
sandbox backend); ``pair.py`` both; ``paired_attempt.py`` the store stage ``paired-attempt``.
"""

from .arm import ArmRun, run_arm
from .arm_record import ArmRecord, Condition, PairRecord, PromptKind, StepRecord
from .claude import base_url
from .pair import arm_spec, run_pair
from .recorder import ExchangeLog, StoreRecorder, read_exchange_log

__all__ = [
    "ArmRecord",
    "ArmRun",
    "Condition",
    "ExchangeLog",
    "PairRecord",
    "PromptKind",
    "StepRecord",
    "StoreRecorder",
    "arm_spec",
    "base_url",
    "read_exchange_log",
    "run_arm",
    "run_pair",
]
