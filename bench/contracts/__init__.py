"""Strict contracts: the base model, digests, portable paths, environment-variable names and the canonical encoding."""

from .api_dialect import ApiDialect
from .canonical import canonical_bytes, canonical_json
from .digests import BlobDigest, Digest, DigestValue, GitObjectId, ImageId, Ref, Sha256, TreeDigest, accepts
from .environment import EnvName, environment_value
from .model import ContractModel, Document
from .paths import PortablePath

__all__ = [
    "ApiDialect",
    "BlobDigest",
    "ContractModel",
    "Digest",
    "DigestValue",
    "Document",
    "EnvName",
    "GitObjectId",
    "ImageId",
    "PortablePath",
    "Ref",
    "Sha256",
    "TreeDigest",
    "accepts",
    "canonical_bytes",
    "canonical_json",
    "environment_value",
]
