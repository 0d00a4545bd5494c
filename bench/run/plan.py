"""A suite manifest as a run plan: every stage invocation from the pinned commit to the published bundle.

    corpus -> redact -> per challenge: certify, prebuild -> calibrate
      -> per attempt: paired-attempt (both arms) -> per arm: verify, audit -> grade
      -> paired-record -> admit
    -> bundle -> publish

Building the plan observes the suite's files: it checks every pin and the preregistrations (a moved frozen input
refuses the whole run before anything starts), and stores the runner-owned sources the stages read (fixture,
challenge documents, verifiers, policies, preregistrations), so every stage input is a digest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agent.records import Condition
from ..analysis.records import Build, ComparabilityKey
from ..contracts import Digest
from ..errors import SandboxError
from ..packaging.corpus import corpus_params
from ..packaging.surfaces import challenge_inputs, fixture_inputs
from ..pipeline.plan import Invocation, Plan, Upstream
from ..sandbox.images.registry import ImageName, find_image
from ..sandbox.layout import WORKSPACE
from ..stages.code import store_code_manifest
from ..store import Store, tree_from_directory
from ..suite.suite import LoadedChallenge, Suite, open_suite
from .bundle import ADMISSION_INPUT, RECORD_INPUT
from .prereg import current_preregistration

__all__ = ["SuiteRun", "suite_plan"]

ARMS = (Condition.CONTROL, Condition.TREATMENT)
CONTROL_CONDITION = "no-memory"


@dataclass(frozen=True)
class SuiteRun:
    """What one plan needs besides the suite: where it runs and how many attempts it makes."""

    store: Store
    suite: Suite
    preregistrations: Path
    attempts: int
    build_sequence: int
    image_id: str


def _link(invocation: str, output: str) -> Upstream:
    return Upstream(invocation=invocation, output=output)


def _agent_image() -> str:
    record = find_image(ImageName.AGENT)
    if record is None:
        raise SandboxError("no agent image is built; run `stele-bench image build agent` (the demo does it for you)")
    return record.image_id


def suite_plan(base: Path, store: Store, suite: str, attempts: int | None = None, build_sequence: int = 1) -> Plan:
    """The plan of the suite at ``base/suite``; paths in params stay relative to ``base`` (no host paths)."""
    opened = open_suite(base / suite)
    run = SuiteRun(
        store=store,
        suite=opened,
        preregistrations=base / "manifests" / opened.manifest.suite_id,
        attempts=attempts or opened.manifest.attempts,
        build_sequence=build_sequence,
        image_id=_agent_image(),
    )
    relative_root = Path(suite)
    fixture_root = relative_root / opened.manifest.fixture.path
    with store.batch():
        fixture_tree = tree_from_directory(store, base / fixture_root)
        surfaces = fixture_inputs(store, base / fixture_root, opened.fixture)
    params = corpus_params(str(relative_root / opened.manifest.project.bundle), opened.manifest.project.commit)
    invocations = [
        Invocation(name="corpus", stage="corpus", params=params.model_dump(mode="json")),
        Invocation(
            name="redact",
            stage="redact",
            params={"extra_paths": list(opened.fixture.redact_paths)},
            inputs={"tree": _link("corpus", "tree")},
        ),
    ]
    bundle = Invocation(name="bundle", stage="bundle", params={})
    for loaded in opened.challenges:
        planned = _challenge(run, loaded, relative_root / loaded.entry.directory, fixture_tree, surfaces)
        invocations.extend(planned.invocations)
        bundle = bundle.model_copy(
            update={"inputs": {**bundle.inputs, **planned.published}, "sources": {**bundle.sources, **planned.files}}
        )
    published = Invocation(
        name="publish",
        stage="publish",
        params={"confidence": "0.95"},
        inputs={"bundle": _link("bundle", "bundle")},
        refs={"published": f"published/{opened.manifest.suite_id}"},
    )
    return Plan(invocations=(*invocations, bundle, published))


@dataclass(frozen=True)
class _Planned:
    invocations: list[Invocation]
    published: dict[str, Upstream]  # bundle path (or ``record:<name>``) -> the output published there
    files: dict[str, Digest]  # bundle path -> a source file published as it is


def _challenge(
    run: SuiteRun, loaded: LoadedChallenge, directory: Path, fixture_tree: Digest, surfaces: dict[str, Digest]
) -> _Planned:
    """Certify, prebuild and calibrate once, then every attempt's pair, arms, record and admission."""
    store, manifest = run.store, loaded.manifest
    name = manifest.challenge_id
    prereg = current_preregistration(run.suite, loaded, run.preregistrations, run.attempts)
    prereg_path = f"{name}/v{prereg.version}.json"
    owned = challenge_inputs(store, loaded.directory, manifest)
    policy = store.put_bytes(run.suite.policy(name, WORKSPACE))
    pins = {"challenge_dir": str(directory), "verifier_sha256": manifest.verifier.asset.sha256}
    image = {"image_id": run.image_id}
    chain = [
        Invocation(
            name=f"certify-{name}",
            stage="certify",
            params={},
            inputs={"source": _link("redact", "tree")},
            sources={**surfaces, **owned},
        ),
        Invocation(
            name=f"prebuild-{name}",
            stage="prebuild",
            params={**image, "environment": manifest.environment.model_dump(mode="json")},
            inputs={"redacted": _link("redact", "tree")},
        ),
        Invocation(
            name=f"calibrate-{name}",
            stage="calibrate",
            params={**pins, **image, "oracle_sha256": manifest.oracle.asset.sha256 if manifest.oracle else None},
            inputs={"start": _link(f"prebuild-{name}", "start")},
        ),
    ]
    published = {
        f"receipts/{name}/certification.json": _link(f"certify-{name}", "report"),
        f"receipts/{name}/calibration.json": _link(f"calibrate-{name}", "calibration"),
    }
    key = ComparabilityKey(
        challenge=name,
        fixture=fixture_tree,
        model=run.suite.manifest.model,
        control_condition=CONTROL_CONDITION,
        treatment_condition=f"reference-memory:{run.suite.manifest.fixture.graph_arm}",
        manifest=prereg.digest,
        verifier=owned["runner/verifier"],
        source_commit=run.suite.manifest.project.commit,
    )
    build = Build(label=f"reference-memory@{_memory_build(store)}", sequence=run.build_sequence)
    for attempt in range(1, run.attempts + 1):
        _attempt(run, loaded, attempt, pins, policy, fixture_tree, chain, published)
        chain.append(
            Invocation(
                name=f"record-{name}-{attempt}",
                stage="paired-record",
                params={"key": key.model_dump(mode="json"), "build": build.model_dump(mode="json")},
                inputs={
                    "pair": _link(f"pair-{name}-{attempt}", "pair"),
                    **{arm.value: _link(f"grade-{name}-{attempt}-{arm.value}", "grade") for arm in ARMS},
                },
            )
        )
        chain.append(
            Invocation(
                name=f"admit-{name}-{attempt}",
                stage="admit",
                params={},
                inputs={
                    "record": _link(f"record-{name}-{attempt}", "record"),
                    "pair": _link(f"pair-{name}-{attempt}", "pair"),
                    "certification": _link(f"certify-{name}", "report"),
                    "calibration": _link(f"calibrate-{name}", "calibration"),
                },
            )
        )
        published[f"{RECORD_INPUT}{name}-{attempt}"] = _link(f"record-{name}-{attempt}", "record")
        published[f"{ADMISSION_INPUT}{name}-{attempt}"] = _link(f"admit-{name}-{attempt}", "admission")
    prereg_file = run.preregistrations / prereg_path
    return _Planned(chain, published, {f"manifests/{prereg_path}": store.put_bytes(prereg_file.read_bytes())})


def _attempt(
    run: SuiteRun,
    loaded: LoadedChallenge,
    attempt: int,
    pins: dict[str, Any],
    policy: Digest,
    fixture_tree: Digest,
    chain: list[Invocation],
    published: dict[str, Upstream],
) -> None:
    """One attempt: the pair, then each arm's verifier run, audit and grade."""
    manifest = loaded.manifest
    name = manifest.challenge_id
    pair = f"pair-{name}-{attempt}"
    chain.append(
        Invocation(
            name=pair,
            stage="paired-attempt",
            params={
                "challenge_id": name,
                "attempt": attempt,
                "model": run.suite.manifest.model,
                "image_id": run.image_id,
                "graph_arm": run.suite.manifest.fixture.graph_arm,
            },
            inputs={
                "start": _link(f"prebuild-{name}", "start"),
                "certification": _link(f"certify-{name}", "report"),
                "calibration": _link(f"calibrate-{name}", "calibration"),
            },
            sources={"challenge": run.store.put_document(manifest), "fixture": fixture_tree, "policy": policy},
        )
    )
    published[f"receipts/{name}/{attempt}/snapshot.json"] = _link(pair, "snapshot")
    memory = run.suite.memory(name).model_dump(mode="json")
    for arm in ARMS:
        label = f"{name}-{attempt}-{arm.value}"
        chain.append(
            Invocation(
                name=f"verify-{label}",
                stage="verify",
                params={**pins, "image_id": run.image_id, "attempt": attempt},
                inputs={"final": _link(pair, f"{arm.value}_final")},
            )
        )
        chain.append(
            Invocation(
                name=f"audit-{label}",
                stage="audit",
                params={"allowed_output_paths": list(manifest.allowed_output_paths)},
                inputs={"start": _link(f"prebuild-{name}", "start"), "final": _link(pair, f"{arm.value}_final")},
            )
        )
        chain.append(
            Invocation(
                name=f"grade-{label}",
                stage="grade",
                params={"memory": memory},
                inputs={
                    "arm": _link(pair, arm.value),
                    "verifier": _link(f"verify-{label}", "verifier"),
                    "audit": _link(f"audit-{label}", "audit"),
                },
            )
        )
        for output in ("verifier", "audit", "grade"):
            stage_name = {"verifier": "verify", "audit": "audit", "grade": "grade"}[output]
            published[f"receipts/{name}/{attempt}/{arm.value}-{output}.json"] = _link(f"{stage_name}-{label}", output)


def _memory_build(store: Store) -> str:
    """The build under test: the reference memory system's own code, named by its code digest."""
    return store_code_manifest(store, "bench.memory.provisioner").hex[:12]
