"""judgelab.stats: statistics with honest uncertainty for LLM-judge studies.

Every public function takes arrays, or ``data=`` (a long DataFrame, or the judgments table)
plus column (or judge) names, and returns a tidy DataFrame with at least
``metric, estimate, ci_low, ci_high, p_value, n, method`` (``method`` names the exact interval).
On a judgments table only rows with status "ok" are used and the excluded count is reported, and the
question must be fully determined by the arguments: a table with several criteria, conditions,
repeats or rubrics needs ``by=`` (one row per group: ``correlation("gpt", "human", data=t,
by="criterion")``) or a filter; a statistic of several raters takes ``raters=`` and never mixes gold
labels in by default; otherwise the call raises :class:`AmbiguousQuestionError` naming the fix.
Every interval's level is ``ci_level=``; a parameter naming the reference rater (human or gold
labels) is ``gold=``; every ``n_resamples`` defaults to :data:`DEFAULT_RESAMPLES`. The conventions
are written out in ``docs/conventions.md``.
"""

import inspect

from judgelab.errors import user_errors
from judgelab.stats.agreement import cohen_kappa, fleiss_kappa, percent_agreement
from judgelab.stats.bias import positive_bias, score_distributions
from judgelab.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    BootstrapResult,
    bootstrap,
    bootstrap_ci,
    kendall_statistic,
    mean_statistic,
    pearson_statistic,
    spearman_statistic,
    vectorized_statistic,
)
from judgelab.stats.classification import classification_report, confusion_matrix
from judgelab.stats.compare import adjust_pvalues, compare_judges, dependent_correlation_test
from judgelab.stats.compare_rubrics import compare_rubrics
from judgelab.stats.corrected.alt_test import alt_test
from judgelab.stats.corrected.conformal import conformal_interval
from judgelab.stats.corrected.label_budget import label_budget, projected_width
from judgelab.stats.corrected.ltt import ltt_cascade, ltt_threshold
from judgelab.stats.corrected.means import corrected_difference, corrected_mean
from judgelab.stats.corrected.ppi import CorrectionError
from judgelab.stats.correlation import correlation, kendall, pearson, spearman
from judgelab.stats.errors import error_metrics, mae, mean_signed_difference, rmse
from judgelab.stats.flips import flip_rate, mcnemar_test
from judgelab.stats.icc import icc
from judgelab.stats.krippendorff import krippendorff_alpha
from judgelab.stats.length import length_controlled_win_rate, length_score_correlation
from judgelab.stats.meta_eval import (
    group_level_correlation,
    meta_evaluation,
    per_group_correlations,
    system_level_correlation,
    system_pair_accuracy,
)
from judgelab.stats.model_agreement import (
    AGREEMENT_THRESHOLDS,
    THREE_LEVEL_THRESHOLDS,
    agreement_label,
    agreement_matrix,
    agreement_matrix_wide,
)
from judgelab.stats.pairing import (
    AmbiguousQuestionError,
    DuplicateRatingsError,
    EmptyInputError,
    StatsInputError,
    is_judgments_table,
    pair_conditions,
    pair_judges,
)
from judgelab.stats.pairwise import pairwise_accuracy, pairwise_agreement, pairwise_policy_sensitivity
from judgelab.stats.pairwise_compare import compare_pairwise_judges
from judgelab.stats.power import n_for_correlation, n_for_correlation_difference, n_for_flip_rate, n_for_kappa
from judgelab.stats.ranking import elo_ratings, rank_systems, win_rate_matrix
from judgelab.stats.ranking_corrected import rank_systems_corrected
from judgelab.stats.ranking_judges import ranking_agreement
from judgelab.stats.ranking_scores import rank_by_score
from judgelab.stats.score_battles import battles_from_scores
from judgelab.stats.selection import select_for_labelling
from judgelab.stats.sensitivity import unscored_sensitivity

__all__ = [
    "AGREEMENT_THRESHOLDS",
    "battles_from_scores",
    "DEFAULT_RESAMPLES",
    "AmbiguousQuestionError",
    "BootstrapResult",
    "CorrectionError",
    "DuplicateRatingsError",
    "EmptyInputError",
    "StatsInputError",
    "THREE_LEVEL_THRESHOLDS",
    "adjust_pvalues",
    "agreement_label",
    "agreement_matrix",
    "agreement_matrix_wide",
    "alt_test",
    "bootstrap",
    "bootstrap_ci",
    "classification_report",
    "cohen_kappa",
    "compare_judges",
    "compare_pairwise_judges",
    "compare_rubrics",
    "conformal_interval",
    "confusion_matrix",
    "corrected_difference",
    "corrected_mean",
    "correlation",
    "dependent_correlation_test",
    "elo_ratings",
    "error_metrics",
    "fleiss_kappa",
    "flip_rate",
    "group_level_correlation",
    "icc",
    "is_judgments_table",
    "kendall",
    "kendall_statistic",
    "krippendorff_alpha",
    "label_budget",
    "length_controlled_win_rate",
    "length_score_correlation",
    "ltt_cascade",
    "ltt_threshold",
    "mae",
    "mcnemar_test",
    "mean_signed_difference",
    "mean_statistic",
    "meta_evaluation",
    "n_for_correlation",
    "n_for_correlation_difference",
    "n_for_flip_rate",
    "n_for_kappa",
    "pair_conditions",
    "pair_judges",
    "pairwise_accuracy",
    "pairwise_agreement",
    "pairwise_policy_sensitivity",
    "pearson",
    "pearson_statistic",
    "percent_agreement",
    "per_group_correlations",
    "positive_bias",
    "projected_width",
    "rank_by_score",
    "rank_systems",
    "rank_systems_corrected",
    "ranking_agreement",
    "rmse",
    "score_distributions",
    "select_for_labelling",
    "spearman",
    "spearman_statistic",
    "system_level_correlation",
    "system_pair_accuracy",
    "unscored_sensitivity",
    "vectorized_statistic",
    "win_rate_matrix",
]


# Public functions guard their arguments (judgelab.errors.user_errors): a caller's mistake ends in a JudgelabError
# naming the argument. Modules inside judgelab import the plain functions from their own modules.
for _name in __all__:
    if inspect.isfunction(globals()[_name]):
        globals()[_name] = user_errors(globals()[_name])
del _name
