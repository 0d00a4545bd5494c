"""Exact paired statistics, comparability keys, preregistration and admission.

Standard library only (plus the project's contracts): integer combinatorics and fractions, no sampling and no
normal approximation, so a summary can be re-derived byte for byte from its recorded attempts.
"""

from .admission import Admission, AdmissionDecision, ReasonCode, admitted, decide
from .attempt_record import ArmEnding, ArmResult, Build, ComparabilityKey, Completion, Outcome, PairedAttempt
from .exact import clopper_pearson, conditional_odds_ratio_interval, mcnemar_exact, sign_test, two_sided_binomial_half
from .prereg import (
    AnalysisPlan,
    Budget,
    FrozenInputs,
    Moved,
    Preregistration,
    PreregistrationMoved,
    check_unmoved,
    correct,
    load_preregistrations,
    supersede,
)
from .signed_rank import SignedRankResult, signed_rank_test
from .summary import (
    EXPLORATORY_BELOW,
    ArmSummary,
    Cell,
    ContinuousStatus,
    ContinuousSummary,
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
    "Cell",
    "ComparabilityKey",
    "Completion",
    "ContinuousStatus",
    "ContinuousSummary",
    "FrozenInputs",
    "Interval",
    "Moved",
    "Outcome",
    "PairedAttempt",
    "PairedBinary",
    "Preregistration",
    "PreregistrationMoved",
    "ReasonCode",
    "SignedRankResult",
    "StatisticsSummary",
    "admitted",
    "check_unmoved",
    "clopper_pearson",
    "conditional_odds_ratio_interval",
    "continuous",
    "correct",
    "decide",
    "load_preregistrations",
    "mcnemar_exact",
    "sign_test",
    "signed_rank_test",
    "summarize",
    "supersede",
    "two_sided_binomial_half",
]
