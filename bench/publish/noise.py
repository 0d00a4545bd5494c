"""The report's section on memory under noise: each system's effect per distractor pool size, what a pass cost,
and how well its retrieval found the challenge's oracle, beside delivery.

One function, :func:`noise_section`, from the statistics summary alone (deterministic, sorted, no dates), so it
slots into any layout of the report as one section. It opens with what separates the memory systems and what does
not: a pass rate that differs from the static baseline's by an exact test at the summary's level, or not; a cost
per pass and a recall that differ deterministically (the same inputs give the same counts, so no test applies to
them), said as measured or, in policy mode, as estimates.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from html import escape

from ..analysis import Cell, ComparisonKind, ContinuousStatus, StatisticsSummary
from ..analysis.cost import ArmCost, PassCostTest
from ..analysis.retrieval import RetrievalStatus, RetrievalSummary
from ..gateway import Mode
from .tables import table

__all__ = ["noise_section"]


def _pool(distractors: int) -> str:
    return "none" if distractors == 0 else f"{distractors} distractors"


def _per_pass(cost: ArmCost) -> str:
    bounded = f" ({cost.bounded} bounded arm(s) left out)" if cost.bounded else ""
    if cost.tokens_per_pass is None:
        return f"no pass in {cost.arms} arm(s){bounded}"
    usd = "" if cost.usd_per_pass is None else f", {cost.usd_per_pass} USD"
    return f"{cost.tokens_per_pass:,.0f} tokens{usd} over {cost.passes} pass(es) of {cost.arms}{bounded}"


def _pass_cost_text(test: PassCostTest) -> str:
    if test.status is ContinuousStatus.NOT_TESTED:
        return f"not tested: policy mode, estimated tokens ({test.pairs} pair(s) both passed)"
    shown = f"{test.positive} dearer, {test.negative} cheaper, {test.zero} equal over {test.pairs} pair(s) both passed"
    if test.status is ContinuousStatus.EXPLORATORY:
        return f"exploratory: {shown}; fewer than 5 non-zero differences, no test computed"
    return (
        f"median difference {test.median_difference:+,.0f} tokens; exact sign test p {test.sign_test_p:.4g} ({shown})"
    )


def _retrieval_text(retrieval: RetrievalSummary, k: int) -> str:
    if retrieval.status is RetrievalStatus.MEASURED:
        score = next((depth for depth in retrieval.depths if depth.k == k), None)
        return "not scored at this depth" if score is None else f"{score.recall:.2f} / {score.precision:.2f}"
    if retrieval.status is RetrievalStatus.NO_ORACLE:
        return "no oracle documents"
    return f"not measured: {escape(retrieval.note)}"


def _effects(summary: StatisticsSummary) -> str:
    rows = [
        [escape(e.build.label), _pool(e.distractors), str(e.challenges), str(e.pairs), str(e.control_passes),
         str(e.treatment_passes), f"{e.treatment_only} / {e.control_only}", f"{e.difference * 100:+.0f} points",
         f"{e.mcnemar_p:.4g}", "n/a" if e.stratified_p is None else f"{e.stratified_p:.4g}"]
        for e in summary.pool_effects
    ]  # fmt: skip
    header = ["memory system", "pool", "challenges", "pairs", "control passes", "memory passes",
              "passed only with: memory / control",
              "difference in pass rate", "exact McNemar p (summed)", "stratified exact p"]  # fmt: skip
    return table(header, rows, "Each memory system's effect against the size of its distractor pool")


def _costs(cells: Sequence[Cell]) -> str:
    rows = [
        [escape(c.key.challenge), escape(c.build.label), _pool(c.key.distractors), _per_pass(c.cost.control),
         _per_pass(c.cost.treatment), _pass_cost_text(c.cost.paired)]
        for c in cells
    ]  # fmt: skip
    header = ["challenge", "memory system", "pool", "control: per pass", "memory: per pass",
              "memory minus control, pairs both passed"]  # fmt: skip
    return table(header, rows, "What a pass cost: tokens (and dollars, forward mode) per passed arm")


def _retrievals(cells: Sequence[Cell]) -> str:
    depths = sorted({depth.k for c in cells for depth in c.retrieval.depths}) or [3]
    rows = [
        [escape(c.key.challenge), escape(c.build.label), _pool(c.key.distractors),
         f"{c.treatment.delivered} of {c.treatment.attempts}"] + [_retrieval_text(c.retrieval, k) for k in depths]
        for c in cells
    ]  # fmt: skip
    header = ["challenge", "memory system", "pool", "delivered", *(f"recall / precision @{k}" for k in depths)]
    return table(header, rows, "Retrieval of the challenge's oracle documents, beside delivery")


def _tokens_per_pass(cells: Sequence[Cell]) -> Fraction | None:
    passes = sum(c.cost.treatment.passes for c in cells)
    return Fraction(sum(c.cost.treatment.tokens for c in cells), passes) if passes else None


def _separation(summary: StatisticsSummary, distractors: int) -> str:
    """What separates the systems at one pool size, and what does not, in one paragraph."""
    against = [
        c for c in summary.comparisons if c.kind is ComparisonKind.VERSUS_BASELINE and c.distractors == distractors
    ]
    if against:
        found = [c for c in against if c.pooled.power.significant]
        tests = ", ".join(f"{escape(c.treatment.label)} p {c.pooled.p_value:.4g}" for c in against)
        verdict = (
            f"pass rates separate {', '.join(escape(c.treatment.label) for c in found)} from the static baseline "
            f"beyond chance ({tests})"
            if found
            else f"pass rates do not separate any memory system from the static baseline beyond chance ({tests})"
        )
    else:
        verdict = "no memory system was compared with a static baseline"
    cells = [c for c in summary.cells if c.key.distractors == distractors]
    estimated = any(c.key.gateway_mode is Mode.POLICY for c in cells)
    costs = []
    for label in sorted({c.build.label for c in cells}):
        per_pass = _tokens_per_pass([c for c in cells if c.build.label == label])
        costs.append(f"{escape(label)} {'no pass' if per_pass is None else f'{float(per_pass):,.0f}'}")
    measured = sorted({c.build.label for c in cells if c.retrieval.status is RetrievalStatus.MEASURED})
    kind = "estimated (policy mode)" if estimated else "reported"
    return (
        f"<p><strong>{_pool(distractors)}:</strong> {verdict}. Tokens per pass, {kind}, over every challenge: "
        f"{'; '.join(costs) or 'none'}: a deterministic difference, not a sampled one. Retrieval is measured for "
        f"{', '.join(escape(label) for label in measured) or 'no system'} (a system without deterministic "
        "retrieval is not measured, never scored zero).</p>"
    )


def noise_section(summary: StatisticsSummary) -> str:
    """The section's HTML: the separation paragraph per pool size, then the three tables."""
    if not summary.cells:
        return '<p class="note">No admitted pair: nothing under noise to show.</p>'
    note = (
        '<p class="note">A distractor pool seeds documents from other projects beside the evidence in every '
        "memory, a static baseline's notes included. Per pass: every token (and dollar) of the arms whose usage "
        "was reported, divided by their passes. The paired test is the exact sign test on the token differences "
        "of the pairs where both arms passed. Retrieval: recall and precision at k of the challenge's oracle "
        "documents in what the memory's deterministic retrieval names for the challenge's prompt.</p>"
    )
    sizes = sorted({cell.key.distractors for cell in summary.cells})
    verdicts = "".join(_separation(summary, size) for size in sizes)
    return note + verdicts + _effects(summary) + _costs(summary.cells) + _retrievals(summary.cells)
