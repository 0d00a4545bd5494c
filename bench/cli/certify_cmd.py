"""`stele-bench certify`: the read-only gate over every surface an agent can see, run through the engine."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..builder.execution import execute
from ..contracts import TreeDigest
from ..packaging import UNCHECKED_CORPUS_VARIABLE, CertificationReport, CertifyInputs, CertifyParams, Verdict
from ..packaging.surfaces import challenge_inputs, fixture_inputs
from ..provision.fixture import load_fixture
from ..stages.certify import certify
from ..suite import load_challenge
from .digest_arguments import digest_argument, resolve_digest
from .locate import store_runtime
from .output import Output
from .packaging_cmd import outcome_fields

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "certify",
    )
    parser.add_argument(
        "--source",
        type=digest_argument,
        help="the redacted source tree: a digest, a unique prefix or a ref "
        f"(required unless {UNCHECKED_CORPUS_VARIABLE}=1)",
    )
    parser.add_argument("--fixture", type=Path, required=True, help="the fixture root (evidence corpus, graph arms)")
    parser.add_argument("--challenge", type=Path, required=True, help="the challenge directory")
    parser.set_defaults(handler=_certify)


def _certify(args: argparse.Namespace, out: Output) -> int:
    context = store_runtime(args, create=True).context()
    store = context.store
    loaded = load_fixture(args.fixture)
    fixture = fixture_inputs(store, args.fixture, loaded)
    owned = challenge_inputs(store, args.challenge, load_challenge(args.challenge))
    inputs = CertifyInputs(
        source=None if args.source is None else TreeDigest(resolve_digest(store, args.source)),
        evidence=fixture.evidence,
        graph=fixture.graph,
        challenge=owned.challenge,
        runner={**fixture.runner, **owned.runner},
    )
    params = CertifyParams(
        memory_phrases=loaded.memory_phrases,
        unchecked_corpus_allowed=os.environ.get(UNCHECKED_CORPUS_VARIABLE) == "1",
    )
    outcome = execute(context, certify, inputs, params)
    report = store.get_document(outcome.outputs["report"], CertificationReport)
    data = outcome_fields(outcome) | {"report": report.model_dump(mode="json")}
    lines = [f"{'ran' if outcome.executed else 'cached'}: {report.verdict.value} ({len(report.findings)} findings)"]
    lines += [f"unchecked: {note}" for note in report.unchecked]
    lines += [
        f"{f.kind.value}: {f.surface} {f.path}{'' if f.line is None else f':{f.line}'}: {f.marker}"
        for f in report.findings
    ]
    lines.append(f"report {outcome.outputs['report']}")
    out.result(data, "\n".join(lines))
    return 1 if report.verdict is Verdict.REJECTED else 0
