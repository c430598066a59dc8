"""Could the unscored rows change the conclusion? Each estimate recomputed with them set to the extremes.

Statistics use only scored rows (status "ok"); a parse failure is excluded, never a score. But
exclusion is a choice: if the judge fails to read exactly on the hard items, the excluded rows
are not missing at random, and the estimate on the scored rows is biased. :func:`unscored_sensitivity`
shows how far that could go. It computes the statistic three times on a judgments table:

- ``estimate`` (with its interval, p-value, n, method): unscored rows excluded, as everywhere;
- ``estimate_if_unscored_min``: every unscored row of the compared judges set to the scale's minimum
  (the lowest score, or the first of the ordered ``labels``); for ``pairwise_accuracy`` every
  unscored verdict set to the wrong answer (all-wrong);
- ``estimate_if_unscored_max``: set to the maximum (the last label; pairwise: the gold answer, all-right).

For a mean score and for pairwise accuracy these two are sharp bounds: no assignment of the
unscored rows gives a value outside them. A correlation, an error metric or kappa is not monotone
in the imputed values, so for those the two are the two extreme imputations, not bounds.
``bounds_within_ci`` is True when both lie inside the estimate's interval: the unscored rows could
not move the estimate further than its sampling uncertainty already does (for the two extreme
imputations). ``n_unscored`` counts the unscored rows of the compared judges and
``n_if_unscored_imputed`` the units the imputed estimates use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.judgments import OK, is_scored
from judgelab.stats._inputs import StatsInputError, per_group
from judgelab.stats.agreement import cohen_kappa, percent_agreement
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Seed, bootstrap_ci
from judgelab.stats.correlation import correlation
from judgelab.stats.errors import ERROR_FUNCTIONS, error_metrics
from judgelab.stats.pairing import is_judgments_table
from judgelab.stats.pairwise import pairwise_accuracy
from judgelab.stats.tidy import join_notes

__all__ = ["SENSITIVITY_STATISTICS", "unscored_sensitivity"]

_CORRELATIONS = ("spearman", "kendall", "pearson")
_LABELS = ("percent_agreement", "cohen_kappa")
SENSITIVITY_STATISTICS: tuple[str, ...] = (*_CORRELATIONS, *ERROR_FUNCTIONS, *_LABELS, "mean", "pairwise_accuracy")
_EXTRA = ("n_unscored", "imputed_min", "imputed_max", "estimate_if_unscored_min", "estimate_if_unscored_max",
          "n_if_unscored_imputed", "bounds_within_ci")


def unscored_sensitivity(
    table: pd.DataFrame,
    x: str | None = None,
    y: str | None = None,
    *,
    statistic: str = "spearman",
    value: str = "score",
    scale: tuple[Any, Any] | None = None,
    labels: Sequence[Any] | None = None,
    gold: str | Mapping[str, str] | pd.Series = "gold",
    by: str | Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
    **kwargs: Any,
) -> pd.DataFrame:
    """``statistic`` of judge ``x`` (against ``y``) with unscored rows excluded, set to the minimum, set to the maximum.

    ``table``: a judgments table. ``statistic``: one of :data:`SENSITIVITY_STATISTICS` --
    "spearman", "kendall", "pearson", "mae", "rmse", "mean_signed_difference" (scores of judges
    ``x`` and ``y``), "percent_agreement", "cohen_kappa" (``value`` of ``x`` and ``y``: scores, or
    labels such as verdicts), "mean" (the mean score of ``x``), "pairwise_accuracy" (every judge's
    winners against ``gold``; ``x``, if given, keeps one judge). ``scale``: (minimum, maximum) of
    the scores; by default the smallest and largest scored value of ``x`` and ``y`` in the table
    (said in ``method``). ``labels``: the ordered categories of a label statistic (its first and last
    are the extremes; also passed to ``cohen_kappa``). ``by``: one block of rows per group (e.g.
    ``by="criterion"``). Other keyword arguments go to the statistic (``cluster=``, ``weights=``,
    ``policy=`` ...). Returns the statistic's result frame with the columns ``n_unscored``,
    ``imputed_min``, ``imputed_max``, ``estimate_if_unscored_min``, ``estimate_if_unscored_max``,
    ``n_if_unscored_imputed`` and ``bounds_within_ci`` before ``note``.
    """
    if statistic not in SENSITIVITY_STATISTICS:
        raise StatsInputError(f"unknown statistic {statistic!r}; use one of {list(SENSITIVITY_STATISTICS)}")
    if not isinstance(table, pd.DataFrame) or not is_judgments_table(table):
        raise StatsInputError("unscored_sensitivity needs a judgments table (columns item_id, judge, criterion, "
                              "status): it imputes the rows whose status is not 'ok'")
    boot = dict(n_resamples=n_resamples, ci_level=ci_level, seed=seed)
    if statistic == "pairwise_accuracy":
        return _pairwise(table, x, gold, by, boot, kwargs)
    judges = _judges(statistic, x, y)
    if statistic in _LABELS and labels is not None:
        extremes = (labels[0], labels[-1])
        how = f"the first and last of labels ({labels[0]!r}, {labels[-1]!r})"
    elif scale is not None:
        extremes, how = (scale[0], scale[1]), f"the given scale ({scale[0]!r}, {scale[1]!r})"
    else:
        extremes, how = _observed_extremes(table, judges, value)
    if statistic in _LABELS and labels is not None and statistic == "cohen_kappa":
        kwargs = {**kwargs, "labels": labels}
    compute = _statistic(statistic, x, y, value, kwargs)

    def one(part: pd.DataFrame) -> pd.DataFrame:
        return _with_bounds(part, judges, value, extremes, how, compute, boot)

    return per_group(one, table, by, rows_of=judges) if by is not None else one(table)


def _judges(statistic: str, x: str | None, y: str | None) -> list[str]:
    needed = [x] if statistic == "mean" else [x, y]
    if any(not isinstance(j, str) for j in needed):
        names = "x (a judge)" if statistic == "mean" else "x and y (two judges)"
        raise StatsInputError(f"statistic {statistic!r} needs {names} of the table")
    return [j for j in needed if j is not None]


def _observed_extremes(table: pd.DataFrame, judges: list[str], value: str) -> tuple[tuple[Any, Any], str]:
    rows = table[table["judge"].isin(judges) & is_scored(table)]
    values = rows[value].dropna()
    if values.empty:
        raise StatsInputError(f"judges {judges} have no scored {value!r} values to take the scale from; pass scale=")
    try:
        low, high = _plain(values.min()), _plain(values.max())
    except TypeError as exc:
        raise StatsInputError(f"the {value!r} values cannot be ordered ({exc}); pass labels= (ordered)") from exc
    return (low, high), f"the smallest and largest scored {value!r} of these judges in the table ({low!r}, {high!r})"


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _statistic(statistic: str, x: Any, y: Any, value: str,
               kwargs: dict[str, Any]) -> Callable[[pd.DataFrame, dict[str, Any]], pd.DataFrame]:
    if statistic not in _LABELS and value != "score":
        raise StatsInputError(f"statistic {statistic!r} compares scores; value={value!r} applies to "
                              "percent_agreement and cohen_kappa")
    if statistic in _CORRELATIONS:
        return lambda t, b: correlation(x, y, data=t, method=statistic, **b, **kwargs)  # type: ignore[arg-type]
    if statistic in ERROR_FUNCTIONS:
        return lambda t, b: error_metrics(x, y, data=t, metrics=(statistic,), **b, **kwargs)
    if statistic == "percent_agreement":
        return lambda t, b: percent_agreement(x, y, data=t, value=value, **b, **kwargs)
    if statistic == "cohen_kappa":
        return lambda t, b: cohen_kappa(x, y, data=t, value=value, **b, **kwargs)
    return lambda t, b: bootstrap_ci(x, data=t, statistic="mean", **b, **kwargs)


def _imputed(table: pd.DataFrame, rows: pd.Series, column: str, values: Any) -> pd.DataFrame:
    """``table`` with the selected unscored rows turned into scored rows holding ``values``."""
    out = table.copy()
    if column == "score":
        out[column] = out[column].astype("Float64")
    else:
        out[column] = out[column].astype(object)
    out.loc[rows, column] = values
    out.loc[rows, "status"] = OK
    return out


def _with_bounds(table: pd.DataFrame, judges: list[str], value: str, extremes: tuple[Any, Any], how: str,
                 compute: Callable[[pd.DataFrame, dict[str, Any]], pd.DataFrame], boot: dict[str, Any]) -> pd.DataFrame:
    unscored = table["judge"].isin(judges) & ~is_scored(table)
    base = compute(table, boot)
    quick = {**boot, "n_resamples": 1}  # the imputed versions need only their point estimates
    low = compute(_imputed(table, unscored, value, extremes[0]), quick)
    high = compute(_imputed(table, unscored, value, extremes[1]), quick)
    text = (f"unscored rows of {', '.join(map(repr, judges))} excluded; bounds: set to the minimum / maximum, "
            f"{how}")
    return _attach(base, low, high, int(unscored.sum()), extremes, text)


def _attach(base: pd.DataFrame, low: pd.DataFrame, high: pd.DataFrame, n_unscored: int | list[int],
            imputed: tuple[Any, Any], text: str) -> pd.DataFrame:
    out = base.copy()
    note = out.pop("note")
    out["n_unscored"] = n_unscored
    out["imputed_min"], out["imputed_max"] = imputed
    out["estimate_if_unscored_min"] = low["estimate"].to_numpy()
    out["estimate_if_unscored_max"] = high["estimate"].to_numpy()
    out["n_if_unscored_imputed"] = high["n"].to_numpy()
    both = out[["estimate_if_unscored_min", "estimate_if_unscored_max"]]
    out["bounds_within_ci"] = both.ge(out["ci_low"], axis=0).all(axis=1) & both.le(out["ci_high"], axis=0).all(axis=1)
    out["method"] = out["method"] + "; " + text
    out["note"] = [join_notes(n, _bounds_note(r)) for n, (_, r) in zip(note, out.iterrows(), strict=True)]
    return out


def _bounds_note(row: pd.Series) -> str:
    if row["n_unscored"] == 0:
        return ""
    lo, hi = row["estimate_if_unscored_min"], row["estimate_if_unscored_max"]
    outside = "" if row["bounds_within_ci"] else " (outside the interval: the unscored rows could change the conclusion)"
    return f"{row['n_unscored']} unscored row(s): {lo:.4g} if all at the minimum, {hi:.4g} at the maximum{outside}"


def _pairwise(table: pd.DataFrame, judge: str | None, gold: str | Mapping[str, str] | pd.Series,
              by: str | Sequence[str] | None, boot: dict[str, Any], kwargs: dict[str, Any]) -> pd.DataFrame:
    """pairwise_accuracy, and again with every unscored verdict wrong, and right."""
    if by is not None:
        kwargs = {**kwargs, "by": [by] if isinstance(by, str) else list(by)}
    group_by = list(kwargs.get("by", ("run_id", "judge")))
    gold_name = gold if isinstance(gold, str) else None
    rows = table if judge is None else table[table["judge"].isin([judge, *([gold_name] if gold_name else [])])]
    if judge is not None and not (rows["judge"] == judge).any():
        raise StatsInputError(f"judge {judge!r} has no rows in the table")
    answers = _gold_answers(rows, gold)
    verdict_rows = (rows["judge"] != gold_name) if gold_name else pd.Series(True, index=rows.index)
    unscored = verdict_rows & ~is_scored(rows)
    right = rows["item_id"].map(answers)
    if right[unscored].isna().any():
        lacking = list(rows.loc[unscored & right.isna(), "item_id"][:3])
        raise StatsInputError(f"unscored verdicts of items without a gold answer (first: {lacking})")
    wrong = right.map({"A": "B", "B": "A", "TIE": "A"})
    base = pairwise_accuracy(rows, gold=gold, **boot, **kwargs)
    quick = {**boot, "n_resamples": 1}
    low = pairwise_accuracy(_imputed(rows, unscored, "winner", wrong[unscored]), gold=gold, **quick, **kwargs)
    high = pairwise_accuracy(_imputed(rows, unscored, "winner", right[unscored]), gold=gold, **quick, **kwargs)
    counts = rows[unscored].groupby(group_by, dropna=False).size()
    n_unscored = [int(counts.get(tuple(r) if len(group_by) > 1 else r[0], 0))
                  for r in base[group_by].itertuples(index=False)]
    text = "unscored verdicts as the policy says; bounds: every unscored verdict wrong / right"
    return _attach(base, low, high, n_unscored, ("wrong", "right"), text)


def _gold_answers(rows: pd.DataFrame, gold: str | Mapping[str, str] | pd.Series) -> pd.Series:
    if not isinstance(gold, str):
        return pd.Series(dict(gold) if not isinstance(gold, pd.Series) else gold, dtype=object)
    gold_rows = rows[(rows["judge"] == gold) & is_scored(rows)]
    if gold_rows.empty:
        raise StatsInputError(f"no scored gold rows with judge == {gold!r} in the table")
    return gold_rows.drop_duplicates("item_id").set_index("item_id")["winner"].astype(object)
