"""Positive bias: does the judge rate higher than humans? (Donati, Savino & Torroni's central finding.)

Per criterion, on items scored by both: the mean of judge - human with a (clustered)
bootstrap CI and a t-test; the Wilcoxon signed-rank test; the sign test on non-zero
differences (exact binomial, Clopper-Pearson CI); the shares over-rated / under-rated / equal.
:func:`score_distributions` gives the paired score histograms for plotting.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats._inputs import By, Resolved, judge_names, per_group, resolve
from judgelab.stats.agreement import agreement_statistic
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Interval, Seed, bootstrap
from judgelab.stats.errors import error_statistic
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["ZeroMethod", "positive_bias", "score_distributions"]

ZeroMethod = Literal["wilcox", "pratt", "zsplit"]


def _criterion_rows(
    diff: np.ndarray, cluster: np.ndarray | None, cluster_name: str | None, context: dict[str, Any],
    boot_kwargs: dict[str, Any], zero_method: ZeroMethod,
) -> list[dict[str, Any]]:
    n = len(diff)
    n_over, n_under = int((diff > 0).sum()), int((diff < 0).sum())
    n_equal = n - n_over - n_under
    counts = {"n_over": n_over, "n_under": n_under, "n_equal": n_equal}
    ctx = {**context, **counts}
    rows = []

    def boot(statistic: Any) -> Any:
        return bootstrap(statistic, n, cluster=cluster, cluster_name=cluster_name, return_distribution=False,
                         **boot_kwargs)

    # on a discrete scale the mean difference resamples the table of difference values
    mean_boot = boot(error_statistic("mean_signed_difference", diff, np.zeros(n)))
    t_p, t_note = np.nan, ""
    if n >= 2 and not np.all(diff == diff[0]):
        t_p = float(stats.ttest_1samp(diff, 0.0).pvalue)
    elif n >= 2:
        t_note = "differences are constant: t-test undefined"
    rows.append(result_row("mean_difference", mean_boot.estimate, n=n, p_value=t_p,
                           method=f"mean of judge - human; p: one-sample t-test; CI: {mean_boot.method}",
                           note=join_notes(t_note, mean_boot.note), **mean_boot.fields(), **ctx))
    w_p, w_note = np.nan, ""
    if n_over + n_under == 0:
        w_note = "all differences are zero: no test"
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns about exact/normal switching with ties and zeros
            w_p = float(stats.wilcoxon(diff, zero_method=zero_method).pvalue)
    rows.append(result_row("wilcoxon_signed_rank", float(np.median(diff)) if n else np.nan, n=n, p_value=w_p,
                           method=f"estimate: median difference; p: scipy.stats.wilcoxon (zero_method="
                           f"{zero_method!r}, two-sided)", note=w_note, **ctx))
    nonzero = n_over + n_under
    if nonzero:
        test = stats.binomtest(n_over, nonzero, 0.5)
        ci = test.proportion_ci(confidence_level=boot_kwargs["ci_level"], method="exact")
        rows.append(result_row("sign_test", n_over / nonzero, n=nonzero, ci_low=ci.low, ci_high=ci.high,
                               p_value=test.pvalue, method="share over-rated among non-zero differences; p: exact "
                               f"binomial test vs 0.5; CI: Clopper-Pearson {boot_kwargs['ci_level']:.0%}", **ctx))
    else:
        rows.append(result_row("sign_test", np.nan, n=0, method="exact binomial sign test",
                               note="all differences are zero: no test", **ctx))
    for name, mask in (("share_over_rated", diff > 0), ("share_under_rated", diff < 0), ("share_equal", diff == 0)):
        b = boot(agreement_statistic(mask, np.ones(n, dtype=bool)))  # share of rows in mask: a two-cell table
        rows.append(result_row(name, b.estimate, n=n, method=f"share of items; CI: {b.method}", note=b.note,
                               **b.fields(), **ctx))
    return rows


def positive_bias(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    criterion: Any = None,
    cluster: Any = None,
    by: By = None,
    zero_method: ZeroMethod = "wilcox",
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Judge ``x`` minus human ``y``, per ``criterion`` (a column/array; None = one group), as tidy rows.

    Rows per criterion: mean_difference, wilcoxon_signed_rank, sign_test, share_over_rated,
    share_under_rated, share_equal. Tests assume independent items (with ``cluster`` only the
    bootstrap CIs account for clustering). ``by``: one block of rows per group of other columns
    (``by="condition"``); a judgments table with several criteria needs ``criterion="criterion"`` (or a
    filter), and several conditions or repeats need ``by=`` or a filter.
    """
    if by is not None:
        return per_group(lambda part: positive_bias(
            x, y, data=part, criterion=criterion, cluster=cluster, zero_method=zero_method, interval=interval,
            n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by,
            rows_of=judge_names(data, {"x": x, "y": y}))
    labels = {} if criterion is None else {"criterion": criterion}
    res = resolve(data, {"x": x, "y": y}, cluster=cluster, labels=labels, statistic="positive bias")
    diff = res.values["x"] - res.values["y"]
    groups = res.labels.get("criterion", np.full(len(diff), "all", dtype=object))
    boot_kwargs = dict(interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed)
    rows: list[dict[str, Any]] = []
    for key in _ordered_unique(groups):
        mask = groups == key
        cl = None if res.cluster is None else res.cluster[mask]
        rows += _criterion_rows(diff[mask], cl, res.cluster_name, {"criterion": key, **res.context()}, boot_kwargs,
                                zero_method)
    return tidy_frame(rows)


def _ordered_unique(values: np.ndarray) -> list[Any]:
    return list(pd.unique(pd.Series(values, dtype=object)))


def score_distributions(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    criterion: Any = None,
    x_name: str | None = None,
    y_name: str | None = None,
    by: By = None,
) -> pd.DataFrame:
    """Long frame (criterion, rater, score, count, share) of the judge and human scores on shared items.

    Only items scored by both enter, so the two histograms describe the same items; every score
    seen by either rater appears for both (count 0 where absent). ``criterion`` and ``by`` as in
    :func:`positive_bias`.
    """
    if by is not None:
        return per_group(lambda part: score_distributions(x, y, data=part, criterion=criterion, x_name=x_name,
                                                          y_name=y_name), data, by,
                         rows_of=judge_names(data, {"x": x, "y": y}))
    labels = {} if criterion is None else {"criterion": criterion}
    res: Resolved = resolve(data, {"x": x, "y": y}, labels=labels, statistic="score distributions")
    names = (x_name or (x if isinstance(x, str) else "judge"), y_name or (y if isinstance(y, str) else "human"))
    groups = res.labels.get("criterion", np.full(res.n, "all", dtype=object))
    parts = []
    for key in _ordered_unique(groups):
        mask = groups == key
        levels = np.union1d(res.values["x"][mask], res.values["y"][mask])
        for rater, values in zip(names, (res.values["x"][mask], res.values["y"][mask]), strict=True):
            counts = pd.Series(values).value_counts().reindex(levels, fill_value=0)
            parts.append(pd.DataFrame({"criterion": key, "rater": rater, "score": levels,
                                       "count": counts.to_numpy(), "share": counts.to_numpy() / max(len(values), 1),
                                       "n": len(values)}))
    if not parts:
        return pd.DataFrame(columns=["criterion", "rater", "score", "count", "share", "n"])
    return pd.concat(parts, ignore_index=True)
