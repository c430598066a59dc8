"""Flip and sycophancy statistics: how often a verdict changes, and whether accuracy changed.

- :func:`flip_rate`: share of items whose verdict differs between two conditions (e.g. original
  vs swapped, before vs after a user challenge), exact Clopper-Pearson CI, optional exact
  binomial test against a null rate;
- :func:`mcnemar_test`: before/after correctness on the same items (statsmodels McNemar).
Both assume independent items.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.contingency_tables import mcnemar

from judgelab.stats._inputs import By, StatsInputError, judge_names, per_group, resolve
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["flip_rate", "mcnemar_test"]


def flip_rate(
    before: Any,
    after: Any,
    *,
    data: pd.DataFrame | None = None,
    value: str = "winner",
    null_rate: float | None = None,
    alternative: Literal["two-sided", "greater", "less"] = "two-sided",
    by: By = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Share of items where ``before`` and ``after`` verdicts differ (labels of any type).

    On a judgments table, ``before``/``after`` name judges and ``value`` the compared column;
    for two conditions of one judge, pair them first (:func:`judgelab.stats.pair_conditions`).
    ``by``: one row per group (``by="criterion"``).
    """
    if by is not None:
        return per_group(lambda part: flip_rate(before, after, data=part, value=value, null_rate=null_rate,
                                                alternative=alternative, ci_level=ci_level), data, by,
                         rows_of=judge_names(data, {"before": before, "after": after}))
    res = resolve(data, {"before": before, "after": after}, numeric=False, table_value=value,
                  statistic="the flip rate")
    flips = np.array([b != a for b, a in zip(res.values["before"], res.values["after"], strict=True)], dtype=bool)
    n, k = len(flips), int(flips.sum())
    test = stats.binomtest(k, n, null_rate if null_rate is not None else 0.5, alternative=alternative)
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=ci_level, method="exact")
    p_value = test.pvalue if null_rate is not None else np.nan
    p_text = f"; p: exact binomial test vs {null_rate} ({alternative})" if null_rate is not None else ""
    row = result_row("flip_rate", k / n, n=n, ci_low=ci.low, ci_high=ci.high, p_value=p_value,
                     method=f"share of items whose verdict changed; CI: exact Clopper-Pearson {ci_level:.0%}{p_text}",
                     n_flips=k, ci_level=ci_level, **res.context())
    return tidy_frame([row])


def mcnemar_test(
    before_correct: Any,
    after_correct: Any,
    *,
    data: pd.DataFrame | None = None,
    exact: bool | None = None,
    correction: bool = True,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """McNemar test of before/after correctness (booleans or 0/1) on the same items.

    Estimate: accuracy after - accuracy before, with a Wald CI for paired proportions. ``exact``
    None chooses the exact binomial version when fewer than 25 items changed.

    No discordant item (nothing changed): there is no evidence of a change, so ``p_value`` is 1 -- the exact
    test's value, which statsmodels gives too -- and the chi-square statistic, 0/0, is NaN (statsmodels
    returns inf and p = 0 with the continuity correction); the Wald interval would have zero width, so it is
    NaN. The note says so.
    """
    res = resolve(data, {"before": before_correct, "after": after_correct})
    b_arr, a_arr = res.values["before"], res.values["after"]
    for name, arr in (("before_correct", b_arr), ("after_correct", a_arr)):
        if not np.isin(arr, (0.0, 1.0)).all():
            raise StatsInputError(f"{name} must hold booleans or 0/1 values")
    n = len(b_arr)
    table = np.array([[np.sum((b_arr == 1) & (a_arr == 1)), np.sum((b_arr == 1) & (a_arr == 0))],
                      [np.sum((b_arr == 0) & (a_arr == 1)), np.sum((b_arr == 0) & (a_arr == 0))]])
    to_wrong, to_right = int(table[0, 1]), int(table[1, 0])
    use_exact = (to_wrong + to_right) < 25 if exact is None else exact
    context = {"n_correct_to_wrong": to_wrong, "n_wrong_to_correct": to_right, "ci_level": ci_level, **res.context()}
    estimate = (to_right - to_wrong) / n
    test_text = "exact binomial McNemar" if use_exact else f"McNemar chi-square{' (continuity corrected)' * correction}"
    method = f"accuracy after - before; p: {test_text} (statsmodels); CI: Wald for paired proportions {ci_level:.0%}"
    if to_wrong + to_right == 0:
        row = result_row("accuracy_change", estimate, n=n, p_value=1.0, method=method,
                         statistic=0.0 if use_exact else np.nan,
                         note=f"no discordant item: each of the {n} items is equally correct before and after, so "
                         "p = 1 (no evidence of a change)" + ("" if use_exact else "; the chi-square statistic is "
                                                               "undefined (0/0): NaN") +
                         "; the Wald interval would have zero width: NaN", **context)
        return tidy_frame([row])
    result = mcnemar(table, exact=use_exact, correction=correction)
    se = np.sqrt(max(0.0, to_wrong + to_right - (to_right - to_wrong) ** 2 / n)) / n
    z = special.ndtri(1 - (1 - ci_level) / 2)
    row = result_row("accuracy_change", estimate, n=n, ci_low=estimate - z * se, ci_high=estimate + z * se,
                     p_value=float(result.pvalue), method=method, statistic=float(result.statistic), **context)
    return tidy_frame([row])
