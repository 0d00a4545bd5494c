"""Strict contracts: the base model, digests, portable paths and the canonical encoding."""

from .canonical import canonical_bytes, canonical_json
from .digests import Digest, Sha256
from .model import ContractModel, Document
from .paths import PortablePath

__all__ = [
    "ContractModel",
    "Digest",
    "Document",
    "PortablePath",
    "Sha256",
    "canonical_bytes",
    "canonical_json",
]
