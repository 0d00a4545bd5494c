"""The composition of the pipeline: every stage, every public contract, the plan builders and the services.

This is the one place that names the stage modules (lineage and re-derivation look stages up here, `dodo.py`
builds its tasks from here) and the one place that lists what `stele-bench schema` exports. It sits at the top
of the house, above every module it names, so nothing below names a module above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..agent import arm_record as agent_records
from ..agent import rederive_injected as agent_rederive
from ..agent import replay_tools as agent_replay
from ..agent import retrieval_score as agent_retrieval
from ..analysis import admission as analysis_admission
from ..analysis import attempt_record as analysis_records
from ..analysis import prereg as analysis_prereg
from ..analysis import summary as analysis_summary
from ..builder import Catalogue
from ..builder.context import ServiceFactory, StageContext
from ..contracts.registry import ContractRegistry
from ..fence import caps as fence_caps
from ..fence import config as fence_config
from ..fence import fence_record as fence_records
from ..gateway import policy as gateway_policy
from ..grading import restored as grading_restored
from ..images import archive as sandbox_images
from ..images.archive import StoreImages
from ..packaging import PUBLIC_CONTRACTS as PACKAGING_CONTRACTS
from ..pipeline import plan as pipeline_plan
from ..pipeline.plans import PlanBuilderFunction
from ..pipeline.runtime import Runtime
from ..provision import code as provision_code
from ..provision import fixture as provision_fixture
from ..provision import messages as provision_messages
from ..provision import receipt as provision_receipt
from ..publish import manifest as publish_manifest
from ..sandbox.backends import SandboxBackend, default_backend
from ..stages import grade as run_grade
from ..stages import tree_summary as stages_tree_summary
from ..stages.admit import admit
from ..stages.analyze import analyze
from ..stages.audit import audit
from ..stages.bundle import bundle
from ..stages.calibrate import calibrate
from ..stages.certify import certify
from ..stages.corpus import corpus
from ..stages.directory_tree import directory_tree
from ..stages.distractor_pool import distractor_pool
from ..stages.grade import grade
from ..stages.paired_attempt import paired_attempt
from ..stages.paired_record import paired_record
from ..stages.prebuild import prebuild
from ..stages.publish import publish
from ..stages.redact import redact
from ..stages.report import report
from ..stages.tree_summary import tree_summary
from ..stages.verify import verify
from ..stages.view import view
from ..stages.workspace_identity import workspace_identity
from ..store import Store
from ..store import actions as store_actions
from ..store import trees as store_trees
from ..store import versions as store_versions
from ..suite import suite as suite_suite
from .directory_plan import directory_summaries
from .packaging_plan import packaging_plan
from .suite_plan import suite_plan

__all__ = ["CONTRACTS", "PLAN_BUILDERS", "STAGES", "runtime", "sandbox_backend", "services", "sweep_leftovers"]

STAGES = Catalogue(
    [
        directory_tree,
        tree_summary,
        corpus,
        redact,
        distractor_pool,
        certify,
        workspace_identity,
        prebuild,
        calibrate,
        paired_attempt,
        verify,
        audit,
        grade,
        paired_record,
        admit,
        bundle,
        publish,
        analyze,
        report,
        view,
    ]
)

CONTRACTS = ContractRegistry(
    [
        *store_trees.PUBLIC_CONTRACTS,
        *store_actions.PUBLIC_CONTRACTS,
        *store_versions.PUBLIC_CONTRACTS,
        *pipeline_plan.PUBLIC_CONTRACTS,
        *stages_tree_summary.PUBLIC_CONTRACTS,
        *fence_config.PUBLIC_CONTRACTS,
        *fence_caps.PUBLIC_CONTRACTS,
        *fence_records.PUBLIC_CONTRACTS,
        *analysis_records.PUBLIC_CONTRACTS,
        *analysis_admission.PUBLIC_CONTRACTS,
        *analysis_prereg.PUBLIC_CONTRACTS,
        *analysis_summary.PUBLIC_CONTRACTS,
        *publish_manifest.PUBLIC_CONTRACTS,
        *provision_messages.PUBLIC_CONTRACTS,
        *provision_code.PUBLIC_CONTRACTS,
        *provision_fixture.PUBLIC_CONTRACTS,
        *provision_receipt.PUBLIC_CONTRACTS,
        *suite_suite.PUBLIC_CONTRACTS,
        *gateway_policy.PUBLIC_CONTRACTS,
        *PACKAGING_CONTRACTS,
        *agent_records.PUBLIC_CONTRACTS,
        *agent_rederive.PUBLIC_CONTRACTS,
        *agent_replay.PUBLIC_CONTRACTS,
        *grading_restored.PUBLIC_CONTRACTS,
        *agent_retrieval.PUBLIC_CONTRACTS,
        *run_grade.PUBLIC_CONTRACTS,
        *sandbox_images.PUBLIC_CONTRACTS,
    ]
)

PLAN_BUILDERS: Mapping[str, PlanBuilderFunction] = {
    "directory-summaries": directory_summaries,
    "packaging": packaging_plan,
    "suite": suite_plan,
}


def sandbox_backend(store: Store) -> SandboxBackend:
    """Containers on this node's Docker engine; an image it lacks is loaded from its archive in the store."""
    return default_backend(store, images=StoreImages(store))


def services() -> Mapping[type[Any], ServiceFactory]:
    """The runtime's services: containers on the local Docker engine."""
    return {SandboxBackend: sandbox_backend}


def sweep_leftovers(context: StageContext) -> None:
    """Remove what a killed runner left on this node's engine (its lease is dead); a live run's stays."""
    context.service(SandboxBackend).sweep()


def runtime(store: Path | str) -> Runtime:
    return Runtime(store=str(store), catalogue=STAGES, services=services, recover=sweep_leftovers)
