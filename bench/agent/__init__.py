"""The agent adapter: the Claude Code CLI in both arm containers of a pair, against a gateway of its own.

Layout: ``network.py`` the model-only network and its relay to the in-process gateway; ``recorder.py`` the
gateway's record in the store; ``claude.py`` the CLI's command line and files; ``memory.py`` the treatment arm's
memory through the provisioner adapter; ``arm.py`` one arm; ``pair.py`` both; ``stage.py`` and ``grading.py`` the
store stages ``paired-attempt`` and ``grade``.
"""

from .arm import ArmRun, run_arm
from .network import RELAY_PORT, ModelNetwork, base_url, model_network
from .pair import arm_spec, run_pair
from .recorder import ExchangeLog, StoreRecorder, read_exchange_log
from .records import ArmRecord, Condition, PairRecord, PromptKind, StepRecord

__all__ = [
    "RELAY_PORT",
    "ArmRecord",
    "ArmRun",
    "Condition",
    "ExchangeLog",
    "ModelNetwork",
    "PairRecord",
    "PromptKind",
    "StepRecord",
    "StoreRecorder",
    "arm_spec",
    "base_url",
    "model_network",
    "read_exchange_log",
    "run_arm",
    "run_pair",
]
