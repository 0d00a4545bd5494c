"""The money fence: four checks that keep a paid pair from draining the shared balance.

Modules, one job each: :mod:`.config` (what the fence reads), :mod:`.caps` (the per-arm caps the gateway enforces),
:mod:`.provider` (the quota API, where transport errors are translated), :mod:`.checks` (the four decisions),
:mod:`.fence_record` (the store documents), :mod:`.fence` (the driver the paired runner calls), :mod:`.account`
(the latch a stop sets on its account, and the operator's decision that lifts it).
"""

from .account import AccountStopped, open_account, resume_account, stopped_accounts
from .caps import ArmCap, PairCaps
from .config import FenceConfig, FenceTerms, load_config
from .errors import FenceStopped, KeyRejected, ProviderError, ProviderResponseInvalid, ProviderUnreachable
from .fence import Fence, read_record
from .fence_record import CheckName, CheckVerdict, FenceCheck, FenceOutcome, FenceRecord, FenceResume
from .provider import Credits, KeyInfo, ProviderClient

__all__ = [
    "AccountStopped",
    "ArmCap",
    "CheckName",
    "CheckVerdict",
    "Credits",
    "Fence",
    "FenceCheck",
    "FenceConfig",
    "FenceOutcome",
    "FenceRecord",
    "FenceResume",
    "FenceStopped",
    "FenceTerms",
    "KeyInfo",
    "KeyRejected",
    "PairCaps",
    "ProviderClient",
    "ProviderError",
    "ProviderResponseInvalid",
    "ProviderUnreachable",
    "load_config",
    "open_account",
    "read_record",
    "resume_account",
    "stopped_accounts",
]
