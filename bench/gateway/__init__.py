"""The model gateway: the Anthropic Messages API between an arm's agent and its model, recording every exchange.

Policy mode answers offline from a digest-pinned policy; forward mode relays to the provider, metered and
capped per arm. See :mod:`.server` for the routes and :mod:`.records` for what is kept.
"""

from .config import GatewayConfig, Mode, PolicyPin
from .errors import GatewayError, PolicyDigestMismatch
from .exchange import DirectoryRecorder, ExchangeRecord, Recorder, read_exchanges
from .metering import ArmKey, Price, TokenUsage
from .policy import Policy, Rule, TextReply, ToolUseReply, When, load_policy
from .server import Gateway
from .wire import Part, RequestView

__all__ = [
    "ArmKey",
    "DirectoryRecorder",
    "ExchangeRecord",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "Mode",
    "Part",
    "Policy",
    "PolicyDigestMismatch",
    "PolicyPin",
    "Price",
    "Recorder",
    "RequestView",
    "Rule",
    "TextReply",
    "TokenUsage",
    "ToolUseReply",
    "When",
    "load_policy",
    "read_exchanges",
]
