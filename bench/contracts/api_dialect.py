"""The wire dialects a harness may speak to the model: the contract between `bench.harness` and the gateway.

A harness declares one; the gateway serves each through its own dialect module. Adding a dialect is adding a
member here and a module under the gateway's dialects.
"""

from enum import StrEnum


class ApiDialect(StrEnum):
    ANTHROPIC_MESSAGES = "anthropic-messages"
    OPENAI_RESPONSES = "openai-responses"
