"""Intraclass correlations (Shrout & Fleiss 1979; McGraw & Wong 1996) with F-test p-values and F-based CIs.

ICC1 / ICC1k: one-way random effects (each item rated by different raters), absolute agreement.
ICC2 / ICC2k: two-way random effects, absolute agreement (raters are a sample of raters).
ICC3 / ICC3k: two-way mixed effects, consistency (these raters only).
The "k" forms are the reliability of the mean of the k raters. Items missing any rating are
dropped (listwise) and counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats._inputs import ratings_matrix
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["icc"]

_DESCRIPTIONS = {
    "ICC1": "single rater, one-way random, absolute agreement",
    "ICC2": "single rater, two-way random, absolute agreement",
    "ICC3": "single rater, two-way mixed, consistency",
    "ICC1k": "mean of k raters, one-way random, absolute agreement",
    "ICC2k": "mean of k raters, two-way random, absolute agreement",
    "ICC3k": "mean of k raters, two-way mixed, consistency",
}


def icc(
    ratings: Any = None,
    *,
    data: pd.DataFrame | None = None, item: str = "item_id", rater: str = "judge", value: str = "score",
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """All six ICC forms, one row each; ``ratings`` items x raters or long ``data`` (item/rater/value)."""
    matrix, _, n_unscored = ratings_matrix(ratings, data, item=item, rater=rater, value=value, numeric=True)
    complete = ~np.isnan(matrix).any(axis=1)  # listwise: an item missing any rating is dropped
    x, n_dropped = matrix[complete], int((~complete).sum())
    n, k = x.shape
    context: dict[str, Any] = {"n_raters": k, "n_items_incomplete_dropped": n_dropped, "ci_level": ci_level}
    if n_unscored is not None:
        context["n_unscored_excluded"] = n_unscored
    if n < 2 or k < 2:
        note = f"ICC undefined: needs >= 2 complete items and >= 2 raters (got {n} x {k})"
        return tidy_frame([result_row(name, np.nan, n=n, method=f"{name}: {desc}", note=note, **context)
                           for name, desc in _DESCRIPTIONS.items()])
    grand = x.mean()
    ss_items = k * np.sum((x.mean(axis=1) - grand) ** 2)
    ss_raters = n * np.sum((x.mean(axis=0) - grand) ** 2)
    ss_total = np.sum((x - grand) ** 2)
    ms_items = ss_items / (n - 1)
    ms_raters = ss_raters / (k - 1)
    ms_error = (ss_total - ss_items - ss_raters) / ((n - 1) * (k - 1))
    ms_within = (ss_total - ss_items) / (n * (k - 1))
    q = 1 - (1 - ci_level) / 2
    rows = []
    with np.errstate(invalid="ignore", divide="ignore"):
        # one-way
        f1, df1, df1w = ms_items / ms_within, n - 1, n * (k - 1)
        lo1, hi1 = f1 / stats.f.ppf(q, df1, df1w), f1 * stats.f.ppf(q, df1w, df1)
        p1 = stats.f.sf(f1, df1, df1w)
        icc1 = (ms_items - ms_within) / (ms_items + (k - 1) * ms_within)
        icc1k = (ms_items - ms_within) / ms_items
        # two-way: items F-test against the residual
        f3, df3 = ms_items / ms_error, (n - 1) * (k - 1)
        lo3, hi3 = f3 / stats.f.ppf(q, n - 1, df3), f3 * stats.f.ppf(q, df3, n - 1)
        p3 = stats.f.sf(f3, n - 1, df3)
        icc3 = (ms_items - ms_error) / (ms_items + (k - 1) * ms_error)
        icc3k = (ms_items - ms_error) / ms_items
        icc2 = (ms_items - ms_error) / (ms_items + (k - 1) * ms_error + k * (ms_raters - ms_error) / n)
        icc2k = (ms_items - ms_error) / (ms_items + (ms_raters - ms_error) / n)
        # ICC2 CI: Satterthwaite degrees of freedom (McGraw & Wong 1996, case 2A)
        a = k * icc2 / (n * (1 - icc2))
        b = 1 + k * icc2 * (n - 1) / (n * (1 - icc2))
        v = (a * ms_raters + b * ms_error) ** 2 / ((a * ms_raters) ** 2 / (k - 1) + (b * ms_error) ** 2 / df3)
        f_low, f_high = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
        lo2 = n * (ms_items - f_low * ms_error) / (f_low * (k * ms_raters + (k * n - k - n) * ms_error) + n * ms_items)
        hi2 = n * (f_high * ms_items - ms_error) / (k * ms_raters + (k * n - k - n) * ms_error + n * f_high * ms_items)
        forms = {
            "ICC1": (icc1, (lo1 - 1) / (lo1 + k - 1), (hi1 - 1) / (hi1 + k - 1), f1, df1, df1w, p1),
            "ICC2": (icc2, lo2, hi2, f3, n - 1, df3, p3),
            "ICC3": (icc3, (lo3 - 1) / (lo3 + k - 1), (hi3 - 1) / (hi3 + k - 1), f3, n - 1, df3, p3),
            "ICC1k": (icc1k, 1 - 1 / lo1, 1 - 1 / hi1, f1, df1, df1w, p1),
            "ICC2k": (icc2k, lo2 * k / (1 + lo2 * (k - 1)), hi2 * k / (1 + hi2 * (k - 1)), f3, n - 1, df3, p3),
            "ICC3k": (icc3k, 1 - 1 / lo3, 1 - 1 / hi3, f3, n - 1, df3, p3),
        }
    constant = not np.isfinite(f1) or ms_within == 0 or ms_error == 0
    for name, (est, low, high, f_value, dfn, dfd, p_value) in forms.items():
        note = "no within-item variation: ICC undefined" if constant else ""
        rows.append(result_row(
            name, np.nan if constant else est, n=n, ci_low=np.nan if constant else low,
            ci_high=np.nan if constant else high, p_value=np.nan if constant else p_value,
            method=f"{name}: {_DESCRIPTIONS[name]}; p: F-test of item effect; CI: F-distribution "
            f"{ci_level:.0%} (McGraw & Wong 1996)", note=note, f_value=f_value, df1=dfn, df2=dfd, **context))
    return tidy_frame(rows)
