"""Exact paired statistics, comparability keys, preregistration and admission.

Standard library only (plus the project's contracts): integer combinatorics and fractions, no sampling and no
normal approximation, so a summary can be re-derived byte for byte from its recorded attempts.
"""

from .admission import Admission, AdmissionDecision, ExclusionCount, ReasonCode, admitted, decide, exclusion_counts
from .attempt_record import ArmEnding, ArmResult, Build, ComparabilityKey, Completion, Outcome, PairedAttempt
from .cell import ArmSummary, Cell, ContinuousSummary
from .comparisons import Comparison, ComparisonKind, PooledEffect, Stratum
from .exact import clopper_pearson, conditional_odds_ratio_interval, mcnemar_exact, sign_test, two_sided_binomial_half
from .paired import DesignPower, PowerStatement
from .prereg import (
    AnalysisPlan,
    Budget,
    CalibrationPlan,
    FrozenInputs,
    Moved,
    Preregistration,
    PreregistrationMoved,
    StatedPower,
    check_unmoved,
    correct,
    load_preregistrations,
    stated_power,
    supersede,
)
from .signed_rank import SignedRankResult, signed_rank_test
from .summary import (
    EXPLORATORY_BELOW,
    ContinuousStatus,
    Interval,
    PairedBinary,
    StatisticsSummary,
    continuous,
    summarize,
)

__all__ = [
    "EXPLORATORY_BELOW",
    "Admission",
    "AdmissionDecision",
    "AnalysisPlan",
    "ArmEnding",
    "ArmResult",
    "ArmSummary",
    "Budget",
    "Build",
    "CalibrationPlan",
    "Cell",
    "ComparabilityKey",
    "Comparison",
    "ComparisonKind",
    "Completion",
    "ContinuousStatus",
    "ContinuousSummary",
    "DesignPower",
    "ExclusionCount",
    "FrozenInputs",
    "Interval",
    "Moved",
    "Outcome",
    "PairedAttempt",
    "PairedBinary",
    "PooledEffect",
    "PowerStatement",
    "Preregistration",
    "PreregistrationMoved",
    "ReasonCode",
    "SignedRankResult",
    "StatedPower",
    "StatisticsSummary",
    "Stratum",
    "admitted",
    "check_unmoved",
    "clopper_pearson",
    "conditional_odds_ratio_interval",
    "continuous",
    "correct",
    "decide",
    "exclusion_counts",
    "load_preregistrations",
    "mcnemar_exact",
    "sign_test",
    "signed_rank_test",
    "stated_power",
    "summarize",
    "supersede",
    "two_sided_binomial_half",
]
