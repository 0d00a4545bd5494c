"""The ``certify`` stage: the certification report stored; a rejection is a recorded result.

The checks are :mod:`bench.packaging.certify`.
"""

from __future__ import annotations

from ..builder import StageContext, StageKind, stage
from ..packaging.certify import CertifyInputs, CertifyOutputs, CertifyParams, certify_surfaces

__all__ = ["certify"]


@stage("certify", version=4, kind=StageKind.DETERMINISTIC)
def certify(context: StageContext, inputs: CertifyInputs, params: CertifyParams) -> CertifyOutputs:
    """Store the certification report; a rejection is a recorded result, not an exception."""
    return CertifyOutputs(report=context.store.put_document(certify_surfaces(context.store, inputs, params)))
