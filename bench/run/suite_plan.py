"""A suite manifest as a run plan: every stage invocation from the pinned commit to the published bundle.

    corpus -> redact -> [distractor-pool per pool size] -> per challenge: certify, prebuild -> calibrate
      -> per pool size, per attempt: paired-attempt (the shared control, one treatment per memory system)
         -> per arm: verify, audit -> grade; -> view (the attempt's transcript page)
         -> per memory system: paired-record (control and that system's treatment) -> admit
    -> analyze -> report -> bundle (with the lineage of everything in it) -> publish

Any suite directory makes a plan: every path the suite names is relative to it, and paths in params are relative
to ``base`` (where the pipeline runs), so the same code plans the bundled example or a suite elsewhere.

Every invocation is made through its stage's declaration (:class:`~bench.pipeline.builder.PlanBuilder`), so a
link to an output a stage does not declare, or of another type, is refused here, before doit runs anything.

Building the plan observes the suite's files: it checks every pin and the preregistrations (a moved frozen input
refuses the whole run before anything starts), finds every memory system's provisioner and reads its code (an input
of every paired attempt: bench.provision.code), builds (or reuses) every declared image layer and pins its ID, and
stores the runner-owned sources the stages read (fixture, challenge documents, verifiers, policies,
preregistrations), so every stage input is a digest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..builder import NoParams
from ..contracts import ImageId
from ..errors import UsageError
from ..harness import Harness
from ..images.build import build_agent, build_layer
from ..packaging.corpus import corpus_params
from ..packaging.redact import RedactParams
from ..packaging.surfaces import fixture_inputs
from ..pipeline.builder import Link, PlanBuilder
from ..pipeline.plan import Plan
from ..provision.code import resolve_provisioner, store_code
from ..publish.bundle_layout import ATTEMPT_PAGES, REPORT_PATH, SUMMARY_PATH
from ..stages.analyze import AnalyzeParams, analyze
from ..stages.bundle import bundle
from ..stages.corpus import corpus
from ..stages.publish import publish
from ..stages.redact import redact
from ..stages.report import ReportParams, report
from ..stages.workspace_identity import IdentityParams, workspace_identity
from ..store import Store, tree_from_directory
from ..suite.suite import Suite, open_suite
from .challenge_plan import plan_challenge
from .plan_harness import suite_harness
from .pools import pool_invocations
from .suite_run import Published, SuiteRun

__all__ = ["suite_plan"]


def _agent_image(harness: Harness) -> ImageId:
    """``harness``'s agent image, built unless built (the first build of a harness's image takes minutes)."""
    return ImageId(build_agent(harness.name).record.image_id)


def _selected(suite: Suite, memory: Sequence[str]) -> tuple[str, ...]:
    """The systems ``memory`` names, each one the suite declares; refused naming those it does declare."""
    declared = [system.name for system in suite.manifest.memory_systems]
    unknown = [name for name in memory if name not in declared]
    if unknown:
        raise UsageError(
            f"--memory {', '.join(unknown)}: suite {suite.manifest.suite_id!r} declares no such memory system "
            f"(it declares: {', '.join(declared)})",
            field="memory",
            expected=declared,
            actual=unknown,
        )
    return tuple(dict.fromkeys(memory))


def _layers(suite: Suite, selected: tuple[str, ...], harness: Harness) -> dict[str, ImageId]:
    """Find every provisioner, and build (or reuse) every declared image layer on ``harness``'s agent image, before
    anything runs."""
    layers: dict[str, ImageId] = {}
    for system in suite.manifest.memory_systems:
        if selected and system.name not in selected:
            continue
        resolve_provisioner(system, suite.root)
        if system.attachment.image is not None:
            built = build_layer(system.attachment.image, harness=harness.name)
            layers[system.name] = ImageId(built.record.image_id)
    return layers


def _publication(plan: PlanBuilder, run: SuiteRun, published: Published) -> None:
    """The suite-wide end of the plan: analyze every admitted pair, report, bundle with lineage, publish."""
    records, admissions = published.records, published.admissions
    summary = plan.add(
        "analyze",
        analyze,
        AnalyzeParams(confidence="0.95"),
        records=records,
        admissions=admissions,
        preregistrations=published.preregistrations,
    )
    rendered = plan.add(
        "report",
        report,
        ReportParams(suite=run.suite.manifest.suite_id, harness=run.harness.label),
        records=records,
        admissions=admissions,
        summary=summary["summary"],
        pages=published.pages,
    )
    published.files.update({f"{ATTEMPT_PAGES}/{label}.html": page for label, page in published.pages.items()})
    published.files[SUMMARY_PATH] = summary["summary"]
    published.files[REPORT_PATH] = rendered["report"]
    bundled = plan.add("bundle", bundle, NoParams(), records=records, admissions=admissions, files=published.files)
    plan.add(
        "publish",
        publish,
        NoParams(),
        bundle=bundled["bundle"],
        refs={"published": f"published/{run.suite.manifest.suite_id}"},
    )


def suite_plan(
    base: Path,
    store: Store,
    suite: str,
    attempts: int | None = None,
    build_sequence: int = 1,
    memory: Sequence[str] = (),
    harness: str | None = None,
) -> Plan:
    """The plan of ``base/suite`` (params' paths relative to ``base``): ``memory`` (all) under ``harness`` (its own)."""
    opened = open_suite(base / suite)
    selected = _selected(opened, memory)
    runs_under = suite_harness(opened, selected, harness)
    root = Path(suite)
    with store.batch():
        fixture_tree = tree_from_directory(store, base / root / opened.manifest.fixture.path)
        surfaces = fixture_inputs(store, base / root / opened.manifest.fixture.path, opened.fixture)
    pools = pool_invocations(plan := PlanBuilder(), store, opened, base / root / opened.manifest.fixture.path)
    run = SuiteRun(
        store=store,
        suite=opened,
        root=root,
        preregistrations=base / "manifests" / opened.manifest.suite_id,
        attempts=attempts or opened.manifest.attempts,
        build_sequence=build_sequence,
        image_id=_agent_image(runs_under),
        fixture=fixture_tree,
        layers=_layers(opened, selected, runs_under),
        provisioners={
            system.name: store_code(store, system, opened.root)
            for system in opened.manifest.memory_systems
            if not selected or system.name in selected
        },
        selected=selected,
        pools=pools,
        harness_name=runs_under.name,
    )
    project = opened.manifest.project
    corpus_run = plan.add(
        "corpus", corpus, corpus_params(str(root / project.bundle), project.commit, project.repository)
    )
    redacted = plan.add(
        "redact", redact, RedactParams(extra_paths=opened.fixture.redact_paths), tree=corpus_run["tree"]
    )
    workspace = _workspace(plan, opened, redacted["tree"])
    published = Published()
    for loaded in opened.challenges:
        plan_challenge(plan, run, loaded, redacted, workspace, surfaces, published)
    _publication(plan, run, published)
    return plan.build(store)


def _workspace(plan: PlanBuilder, opened: Suite, redacted: Link) -> Link:
    """What prebuild starts from: the redacted tree, with the declared repository identity's ``.git`` if any."""
    identity = opened.manifest.project.identity
    if identity is None:
        return redacted
    params = IdentityParams(remote_url=identity.remote_url, default_branch=identity.default_branch)
    return plan.add("workspace-identity", workspace_identity, params, tree=redacted)["tree"]
