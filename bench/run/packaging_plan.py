"""A run plan for packaging one corpus: corpus then redact, as doit tasks through `dodo.py`.

The commit is resolved when the plan is built (a ref becomes the full id it names right now), so the plan's
invocations are deterministic and a rerun executes nothing. Certification needs the fixture's and challenge's
files in the store first (:mod:`bench.packaging.surfaces`), so it is run with `stele-bench certify`.
"""

from __future__ import annotations

from pathlib import Path

from ..packaging.corpus import corpus_params
from ..packaging.redact import RedactParams
from ..pipeline.builder import PlanBuilder
from ..pipeline.plan import Plan
from ..provision.fixture import load_fixture
from ..stages.corpus import corpus
from ..stages.redact import redact
from ..store import Store

__all__ = ["packaging_plan"]


def packaging_plan(base: Path, store: Store, repository: str, commit: str, fixture: str | None = None) -> Plan:
    """``repository`` (and ``fixture``, whose redact_paths are removed too) are relative to ``base``."""
    params = corpus_params(str(base / repository), commit)
    extra = sorted(load_fixture(base / fixture).redact_paths) if fixture else []
    label = params.commit[:12]
    plan = PlanBuilder()
    materialized = plan.add(f"corpus-{label}", corpus, params)
    plan.add(f"redact-{label}", redact, RedactParams(extra_paths=tuple(extra)), tree=materialized["tree"])
    return plan.build(store)
