"""judgelab.stats: statistics with honest uncertainty for LLM-judge studies.

Every public function takes arrays, or ``data=`` (a long DataFrame, or the judgments table)
plus column (or judge) names, and returns a tidy DataFrame with at least
``metric, estimate, ci_low, ci_high, p_value, n, method`` (``method`` names the exact interval).
"""

from judgelab.stats.bootstrap import (
    BootstrapResult,
    bootstrap,
    bootstrap_ci,
    kendall_statistic,
    mean_statistic,
    pearson_statistic,
    spearman_statistic,
    vectorized_statistic,
)
from judgelab.stats.pairing import is_judgments_table, pair_judges
from judgelab.stats.pairwise import pairwise_accuracy

__all__ = [
    "BootstrapResult",
    "bootstrap",
    "bootstrap_ci",
    "is_judgments_table",
    "kendall_statistic",
    "mean_statistic",
    "pair_judges",
    "pairwise_accuracy",
    "pearson_statistic",
    "spearman_statistic",
    "vectorized_statistic",
]
