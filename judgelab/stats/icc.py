"""Intraclass correlations (Shrout & Fleiss 1979; McGraw & Wong 1996) with F-test p-values and F-based CIs.

ICC1 / ICC1k: one-way random effects (each item rated by different raters), absolute agreement.
ICC2 / ICC2k: two-way random effects, absolute agreement (raters are a sample of raters).
ICC3 / ICC3k: two-way mixed effects, consistency (these raters only).
The "k" forms are the reliability of the mean of the k raters. Items missing any rating are
dropped (listwise) and counted.

Degenerate data follow pingouin: each form is computed wherever its denominator is not zero, so
raters that agree exactly (no within-item or residual variance) give ICC 1 and an F-test p-value
of 0 (F is infinite); a form whose denominator is zero is NaN with a note naming the mean squares
that are zero. The mean squares are computed from deviations (never as differences of totals),
and a mean square below 1e-26 times the mean squared rating is rounding noise, taken as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats._inputs import Aggregate, By, Layout, choose_raters, merge_note, per_group, ratings_matrix
from judgelab.stats.agreement import check_long, with_note
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

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
    raters: Sequence[Any] | None = None,
    layout: Layout | None = None,
    by: By = None,
    aggregate: Aggregate = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """All six ICC forms, one row each; ``ratings`` items x raters or long ``data`` (item/rater/value).

    Ratings must be numbers: a non-numeric rating is an error, never a missing value. ``raters``,
    ``layout``, ``by`` and ``aggregate`` as in :func:`judgelab.stats.fleiss_kappa` (the ``raters`` column
    names the raters used).
    """
    if by is not None:
        chosen, left_out = choose_raters(check_long(data), rater, raters, "the ICC")
        frame = per_group(lambda part: icc(data=part, item=item, rater=rater, value=value, raters=chosen,
                                           aggregate=aggregate, ci_level=ci_level), data, by, rows_of=chosen,
                          rater=rater)
        return with_note(frame, left_out)
    rm = ratings_matrix(ratings, data, item=item, rater=rater, value=value, numeric=True, layout=layout,
                        aggregate=aggregate, statistic="the ICC", raters=raters)
    matrix, n_merged = rm.matrix, rm.n_merged
    complete = ~np.isnan(matrix).any(axis=1)  # listwise: an item missing any rating is dropped
    x, n_dropped = matrix[complete], int((~complete).sum())
    n, k = x.shape
    context: dict[str, Any] = {"n_raters": k, "n_items_incomplete_dropped": n_dropped, "ci_level": ci_level,
                               **{c: v for c, v in rm.context(aggregate, named=data is not None).items()
                                  if c != "n_raters"}}
    dropped_note = f"{n_dropped} item(s) missing a rating dropped (listwise)" if n_dropped else ""
    base_note = join_notes(dropped_note, merge_note(aggregate, n_merged), rm.note)
    if n < 2 or k < 2:
        note = join_notes(f"ICC undefined: needs >= 2 complete items and >= 2 raters (got {n} x {k})", base_note)
        return tidy_frame([result_row(name, np.nan, n=n, method=f"{name}: {desc}", note=note, **context)
                           for name, desc in _DESCRIPTIONS.items()])
    ms = _mean_squares(x)
    q = 1 - (1 - ci_level) / 2
    rows = []
    for name, (est, low, high, f_value, dfn, dfd, p_value, zero) in _forms(ms, n, k, q).items():
        note = base_note
        if zero:
            note = join_notes(f"{name} undefined: {zero}", note)
            est = low = high = p_value = np.nan
        elif np.isinf(f_value):
            error = "within-item" if name.startswith("ICC1") else "residual"
            note = join_notes(f"F is infinite (zero {error} mean square): p-value 0 as its limit; no F-based "
                              "interval", note)
        elif np.isnan(f_value):
            note = join_notes("F is 0/0 (zero between-item and error mean squares): no test", note)
        rows.append(result_row(
            name, est, n=n, ci_low=low, ci_high=high, p_value=p_value,
            method=f"{name}: {_DESCRIPTIONS[name]}; p: F-test of item effect; CI: F-distribution "
            f"{ci_level:.0%} (McGraw & Wong 1996)", note=note, f_value=f_value, df1=dfn, df2=dfd, **context))
    return tidy_frame(rows)


def _mean_squares(x: np.ndarray) -> dict[str, np.float64]:
    """Items, raters, residual (two-way) and within-item (one-way) mean squares, from deviations."""
    n, k = x.shape
    grand = x.mean()
    item_means, rater_means = x.mean(axis=1), x.mean(axis=0)
    within = x - item_means[:, None]
    residual = within - rater_means[None, :] + grand
    ms = {
        "items": k * np.sum((item_means - grand) ** 2) / (n - 1),
        "raters": n * np.sum((rater_means - grand) ** 2) / (k - 1),
        "error": np.sum(residual**2) / ((n - 1) * (k - 1)),
        "within": np.sum(within**2) / (n * (k - 1)),
    }
    noise = 1e-26 * max(float(np.mean(x**2)), np.finfo(float).tiny)
    return {key: np.float64(0.0 if value <= noise else value) for key, value in ms.items()}


def _undefined(denominator: float, ms: dict[str, float]) -> str:
    """Why a form is undefined ('' when its denominator is not zero): the mean squares that are zero."""
    if denominator != 0:
        return ""
    labels = {"items": "between-item", "raters": "between-rater", "error": "residual", "within": "within-item"}
    zero = [labels[name] for name, value in ms.items() if value == 0]
    return f"its denominator is 0 ({', '.join(zero)} mean square{'s' if len(zero) > 1 else ''} zero)"


def _f_ratio(numerator: float, denominator: float) -> float:
    if denominator > 0:
        return numerator / denominator
    return np.inf if numerator > 0 else np.nan


def _forms(ms: dict[str, float], n: int, k: int, q: float) -> dict[str, tuple]:
    """Each form: (estimate, ci_low, ci_high, F, df1, df2, p, why undefined or '')."""
    msb, msj, mse, msw = ms["items"], ms["raters"], ms["error"], ms["within"]
    with np.errstate(invalid="ignore", divide="ignore"):
        # one-way
        f1, df1, df1w = _f_ratio(msb, msw), n - 1, n * (k - 1)
        lo1, hi1 = f1 / stats.f.ppf(q, df1, df1w), f1 * stats.f.ppf(q, df1w, df1)
        p1 = stats.f.sf(f1, df1, df1w)
        den = {"ICC1": msb + (k - 1) * msw, "ICC1k": msb, "ICC3": msb + (k - 1) * mse, "ICC3k": msb,
               "ICC2": msb + (k - 1) * mse + k * (msj - mse) / n, "ICC2k": msb + (msj - mse) / n}
        icc1 = (msb - msw) / den["ICC1"]
        icc1k = (msb - msw) / msb
        # two-way: items F-test against the residual
        f3, df3 = _f_ratio(msb, mse), (n - 1) * (k - 1)
        lo3, hi3 = f3 / stats.f.ppf(q, n - 1, df3), f3 * stats.f.ppf(q, df3, n - 1)
        p3 = stats.f.sf(f3, n - 1, df3)
        icc3 = (msb - mse) / den["ICC3"]
        icc3k = (msb - mse) / msb
        icc2 = (msb - mse) / den["ICC2"]
        icc2k = (msb - mse) / den["ICC2k"]
        # ICC2 CI: Satterthwaite degrees of freedom (McGraw & Wong 1996, case 2A)
        a = k * icc2 / (n * (1 - icc2))
        b = 1 + k * icc2 * (n - 1) / (n * (1 - icc2))
        v = (a * msj + b * mse) ** 2 / ((a * msj) ** 2 / (k - 1) + (b * mse) ** 2 / df3)
        f_low, f_high = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
        lo2 = n * (msb - f_low * mse) / (f_low * (k * msj + (k * n - k - n) * mse) + n * msb)
        hi2 = n * (f_high * msb - mse) / (k * msj + (k * n - k - n) * mse + n * f_high * msb)
        forms = {
            "ICC1": (icc1, (lo1 - 1) / (lo1 + k - 1), (hi1 - 1) / (hi1 + k - 1), f1, df1, df1w, p1),
            "ICC2": (icc2, lo2, hi2, f3, n - 1, df3, p3),
            "ICC3": (icc3, (lo3 - 1) / (lo3 + k - 1), (hi3 - 1) / (hi3 + k - 1), f3, n - 1, df3, p3),
            "ICC1k": (icc1k, 1 - 1 / lo1, 1 - 1 / hi1, f1, df1, df1w, p1),
            "ICC2k": (icc2k, lo2 * k / (1 + lo2 * (k - 1)), hi2 * k / (1 + hi2 * (k - 1)), f3, n - 1, df3, p3),
            "ICC3k": (icc3k, 1 - 1 / lo3, 1 - 1 / hi3, f3, n - 1, df3, p3),
        }
    return {name: (*(_finite_or_nan(v) for v in form[:3]), *form[3:], _undefined(den[name], ms))
            for name, form in forms.items()}


def _finite_or_nan(value: float) -> float:
    return float(value) if np.isfinite(value) else np.nan
