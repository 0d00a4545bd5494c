"""The model gateway: the model's API between an arm's agent and its model, recording every exchange.

It speaks one API dialect per configuration (:mod:`.dialects`: Anthropic Messages, OpenAI Responses); the policy
engine, the meter and the recorder work on the neutral conversation (:mod:`.neutral`). Policy mode answers offline
from a digest-pinned policy; forward mode relays to the provider (Anthropic's API, OpenRouter's Anthropic-compatible
endpoint, or a Responses API), metered in exact decimals and capped per arm by the pair's
:class:`~bench.fence.PairCaps`. Modules, one job each: :mod:`.config` (the contract), :mod:`.server` (the routes
and the record of each exchange), :mod:`.handler` (HTTP), :mod:`.body` (request framing), :mod:`.neutral` (the
conversation a request shows the model), :mod:`.dialects` (each wire format), :mod:`.stream` (server-sent
events), :mod:`.forward` (the relay), :mod:`.metering` (usage, prices, caps), :mod:`.conversation` (digests chaining
a conversation's requests), :mod:`.exchange` (the records), :mod:`.policy` (the offline stand-in for a model).
"""

from .config import ArmKey, ForwardTerms, GatewayConfig, Mode, PolicyPin, UpstreamAuth
from .conversation import MessageChain, message_digest
from .errors import GatewayError, PolicyDigestMismatch
from .exchange import DirectoryRecorder, ExchangeRecord, Recorder, Refusal, read_exchanges
from .metering import ArmSpend, ArmStop, ChargeBasis, Price, TokenUsage
from .neutral import Conversation, HarnessHooks, NeutralReply, Part, RequestKind, RequestView
from .policy import Policy, Rule, TextReply, ToolUseReply, When, load_policy
from .server import Gateway
from .stream import StreamEvent

__all__ = [
    "ArmKey",
    "ArmSpend",
    "ArmStop",
    "ChargeBasis",
    "Conversation",
    "DirectoryRecorder",
    "ExchangeRecord",
    "ForwardTerms",
    "Gateway",
    "GatewayConfig",
    "GatewayError",
    "HarnessHooks",
    "MessageChain",
    "Mode",
    "NeutralReply",
    "Part",
    "Policy",
    "PolicyDigestMismatch",
    "PolicyPin",
    "Price",
    "Recorder",
    "Refusal",
    "RequestKind",
    "RequestView",
    "Rule",
    "StreamEvent",
    "TextReply",
    "TokenUsage",
    "ToolUseReply",
    "UpstreamAuth",
    "When",
    "load_policy",
    "message_digest",
    "read_exchanges",
]
