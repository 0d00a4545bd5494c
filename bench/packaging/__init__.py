"""Packaging: a corpus built from git objects, redacted once, then certified read-only.

git repository @ commit --corpus--> tree + materialization receipt
tree --redact--> redacted tree + redaction receipt     (the only step that removes anything)
redacted tree, evidence, graph arms, challenge --certify--> certification report
"""

from .certify import (
    UNCHECKED_CORPUS_VARIABLE,
    CertificationReport,
    CertifyInputs,
    CertifyOutputs,
    CertifyParams,
    CheckedSurface,
    Finding,
    MissingSurface,
    Verdict,
    certify_surfaces,
)
from .corpus import (
    CorpusError,
    CorpusOutputs,
    CorpusParams,
    LfsPointer,
    MaterializationReceipt,
    corpus_params,
    materialize,
)
from .gitsource import CommitNotFound, GitSource, open_source, resolve_commit
from .markers import HARNESS_TERMS, FindingKind, TextScanner
from .patterns import AUTO_LOADED_CONTEXT_PATTERNS, HARNESS_CONTEXT, HarnessContext, auto_loaded_match
from .redact import RedactInputs, RedactionReceipt, RedactOutputs, RedactParams, RemovedEntry, redact_tree

# For `stele-bench schema`: the documents packaging stores.
PUBLIC_CONTRACTS = (MaterializationReceipt, RedactionReceipt, CertificationReport)

__all__ = [
    "AUTO_LOADED_CONTEXT_PATTERNS",
    "HARNESS_CONTEXT",
    "HARNESS_TERMS",
    "PUBLIC_CONTRACTS",
    "UNCHECKED_CORPUS_VARIABLE",
    "CertificationReport",
    "CertifyInputs",
    "CertifyOutputs",
    "CertifyParams",
    "CheckedSurface",
    "CommitNotFound",
    "CorpusError",
    "CorpusOutputs",
    "CorpusParams",
    "Finding",
    "FindingKind",
    "GitSource",
    "HarnessContext",
    "LfsPointer",
    "MaterializationReceipt",
    "MissingSurface",
    "RedactInputs",
    "RedactOutputs",
    "RedactParams",
    "RedactionReceipt",
    "RemovedEntry",
    "TextScanner",
    "Verdict",
    "auto_loaded_match",
    "certify_surfaces",
    "corpus_params",
    "materialize",
    "open_source",
    "redact_tree",
    "resolve_commit",
]
