"""Strict contracts: the base model, digests, portable paths and the canonical encoding."""

from .api_dialect import ApiDialect
from .canonical import canonical_bytes, canonical_json
from .digests import BlobDigest, Digest, DigestValue, GitObjectId, ImageId, Ref, Sha256, TreeDigest, accepts
from .model import ContractModel, Document
from .paths import PortablePath

__all__ = [
    "ApiDialect",
    "BlobDigest",
    "ContractModel",
    "Digest",
    "DigestValue",
    "Document",
    "GitObjectId",
    "ImageId",
    "PortablePath",
    "Ref",
    "Sha256",
    "TreeDigest",
    "accepts",
    "canonical_bytes",
    "canonical_json",
]
