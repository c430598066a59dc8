"""Meta-evaluation levels: how well judge scores track human scores, at the level a study cares about.

- pooled: one correlation over all rows (:func:`judgelab.stats.correlation`);
- group level ("summary level" of SummEval / G-Eval): correlate within each group (document),
  skip groups where either side is constant, average the correlations;
- system level: mean score per system, then correlate the system means;
- system-pair accuracy: the share of system pairs that judge and humans order the same way.

System-level CIs resample *items* (all systems' rows of an item together), the unit whose
sampling the conclusion should survive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.stats._inputs import (
    Aggregate,
    By,
    DuplicateRatingsError,
    Resolved,
    check_aggregate,
    judge_names,
    names_judges,
    resolve,
)
from judgelab.stats._inputs import per_group as by_group
from judgelab.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    BootstrapResult,
    Interval,
    Seed,
    bootstrap,
    mean_statistic,
    rowwise_pearson,
)
from judgelab.stats.correlation import (
    CorrelationMethod,
    correlate,
    correlation_row,
    metric_name,
    p_value_method,
)
from judgelab.stats.pairing import aggregate_duplicates, describe_duplicates
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["group_level_correlation", "meta_evaluation", "per_group_correlations", "system_level_correlation",
           "system_pair_accuracy"]


def per_group_correlations(
    x: Any,
    y: Any,
    group: Any,
    *,
    data: pd.DataFrame | None = None,
    method: CorrelationMethod = "spearman",
    variant: str = "b",
    by: By = None,
) -> pd.DataFrame:
    """One row per group: the within-group correlation and p-value, or NaN with the reason it was skipped.

    ``by``: one block of rows per group of other columns (``by="criterion"``).
    """
    if by is not None:
        return by_group(lambda part: per_group_correlations(x, y, group, data=part, method=method, variant=variant),
                         data, by, rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, labels={"group": group}, statistic="per-group correlations")
    return _per_group(res, method, variant)


def _per_group(res: Resolved, method: CorrelationMethod, variant: str) -> pd.DataFrame:
    frame = pd.DataFrame({"x": res.values["x"], "y": res.values["y"], "group": res.labels["group"]})
    rows = []
    for key, part in frame.groupby("group", sort=True):
        estimate, p_value, note = correlate(part["x"].to_numpy(), part["y"].to_numpy(), method, variant)
        rows.append(result_row(metric_name(method, variant), estimate, n=len(part), p_value=p_value,
                               method=f"within-group {method} correlation, p "
                               f"{p_value_method(method, part['x'].to_numpy(), part['y'].to_numpy())}",
                               note=note, group=key,
                               skipped=not np.isfinite(estimate)))
    return tidy_frame(rows)


def group_level_correlation(
    x: Any,
    y: Any,
    group: Any,
    *,
    data: pd.DataFrame | None = None,
    method: CorrelationMethod = "spearman",
    variant: str = "b",
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Correlate within each group, skip groups where either side is constant (or n < 2), average.

    The CI resamples groups (their correlations are the units being averaged); no p-value.
    ``by`` and ``aggregate``: as in :func:`judgelab.stats.correlation`.
    """
    if by is not None:
        return by_group(lambda part: group_level_correlation(
            x, y, group, data=part, method=method, variant=variant, aggregate=aggregate, interval=interval,
            n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by,
            rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, labels={"group": group}, aggregate=_on_judges(data, x, y, aggregate),
                  statistic="a group-level correlation")
    per_group = _per_group(res, method, variant)
    values = per_group.loc[~per_group["skipped"], "estimate"].to_numpy()
    boot = bootstrap(mean_statistic(values), len(values), n_resamples=n_resamples, ci_level=ci_level,
                     interval=interval, seed=seed, return_distribution=False)
    note = "" if len(values) else "no group had variation on both sides"
    row = result_row(
        f"group_mean_{metric_name(method, variant)}", float(values.mean()) if len(values) else np.nan,
        n=len(values), method=f"mean of within-group {method} correlations over groups where both sides vary; "
        f"CI: {boot.method} over groups", note=join_notes(note, res.note, boot.note), **boot.fields(),
        n_groups_used=len(values), n_groups_skipped=int(per_group["skipped"].sum()), n_rows=res.n, **res.context())
    return tidy_frame([row])


@dataclass(frozen=True)
class _SystemMeans:
    """Judge (x) and human (y) scores as items x systems matrices (NaN where absent), and the system means."""

    res: Resolved
    mx: np.ndarray
    my: np.ndarray
    systems: list[Any]
    unit: str  # what the bootstrap resamples: "items", or "rows" when no item is given

    @property
    def means(self) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(invalid="ignore"):
            return np.nanmean(self.mx, axis=0), np.nanmean(self.my, axis=0)

    def bootstrap(self, reduce: Any, boot_kwargs: dict[str, Any]) -> BootstrapResult:
        """Bootstrap ``reduce(system means of x, system means of y)`` over items (or rows)."""
        return bootstrap(_system_means_statistic(self.mx, self.my, reduce), self.mx.shape[0],
                         return_distribution=False, **boot_kwargs)


def _on_judges(data: pd.DataFrame | None, x: Any, y: Any, aggregate: Aggregate) -> Aggregate:
    """``aggregate`` for pairing judges of a table; None when x and y are columns (it then merges only
    the rows of one item and system)."""
    return aggregate if names_judges(data, {"x": x, "y": y}) else None


def _system_means(x: Any, y: Any, system: Any, item: Any, data: pd.DataFrame | None,
                  aggregate: Aggregate = None) -> _SystemMeans:
    check_aggregate(aggregate)
    labels = {"system": system} if item is None else {"system": system, "item": item}
    res = resolve(data, {"x": x, "y": y}, labels=labels, aggregate=_on_judges(data, x, y, aggregate),
                  statistic="a system-level statistic")
    mx, my, systems, n_merged = _item_system_matrices(res.values["x"], res.values["y"], res.labels["system"],
                                                      res.labels.get("item"), aggregate)
    res.aggregate = aggregate
    res.n_rows_merged += n_merged
    return _SystemMeans(res, mx, my, systems, "items" if item is not None else "rows")


def _item_system_matrices(
    x: np.ndarray, y: np.ndarray, system: np.ndarray, item: np.ndarray | None, aggregate: Aggregate = None,
) -> tuple[np.ndarray, np.ndarray, list[Any], int]:
    """(items x systems) matrices of x and y (NaN where absent), one pseudo-item per row if no item, and the
    rows merged. Several rows for one item and system are an error unless ``aggregate`` merges them."""
    frame = pd.DataFrame({"x": x, "y": y, "system": system,
                          "item": item if item is not None else np.arange(len(x))})
    n_merged = 0
    dup = frame.duplicated(subset=["item", "system"], keep=False)
    if dup.any() and aggregate is None:
        raise DuplicateRatingsError(
            f"system means need one row per item and system: {describe_duplicates(frame[dup], ['item', 'system'])}"
            "; filter the rows (e.g. one criterion) or merge them with aggregate='mean' | 'median' | 'first'")
    if dup.any():
        merged_x, n_merged = aggregate_duplicates(frame, ["item", "system"], "x", aggregate)
        merged_y, _ = aggregate_duplicates(frame, ["item", "system"], "y", aggregate)
        frame = merged_x.drop(columns="n_rows_merged").merge(merged_y.drop(columns="n_rows_merged"),
                                                             on=["item", "system"])
    wide_x = frame.pivot(index="item", columns="system", values="x")
    wide_y = frame.pivot(index="item", columns="system", values="y").reindex_like(wide_x)
    return wide_x.to_numpy(dtype=float), wide_y.to_numpy(dtype=float), list(wide_x.columns), n_merged


def _system_means_statistic(mx: np.ndarray, my: np.ndarray, reduce: Any) -> Any:
    """Index statistic over items: system means from resampled items (via counts), then ``reduce``."""
    filled_x, filled_y = np.nan_to_num(mx), np.nan_to_num(my)
    present = (~np.isnan(mx)).astype(float)
    n_items = mx.shape[0]

    def stat(idx: np.ndarray) -> np.ndarray:
        offsets = (np.arange(idx.shape[0]) * n_items)[:, None]
        weights = np.bincount((idx + offsets).ravel(), minlength=idx.shape[0] * n_items).reshape(-1, n_items)
        counts = weights @ present
        with np.errstate(invalid="ignore", divide="ignore"):
            return reduce((weights @ filled_x) / counts, (weights @ filled_y) / counts)

    return stat


def _rowwise_correlation(method: CorrelationMethod, variant: str) -> Any:
    def reduce(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if method == "pearson":
            return rowwise_pearson(a, b)
        if method == "spearman":
            return rowwise_pearson(stats.rankdata(a, axis=1), stats.rankdata(b, axis=1))
        return np.array([stats.kendalltau(r, s, variant=variant).statistic for r, s in zip(a, b, strict=True)])

    return reduce


def _pair_agreement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Share of system pairs ordered the same way (a tie agrees only with a tie); rows of (B, S)."""
    i, j = np.triu_indices(a.shape[1], k=1)
    return (np.sign(a[:, i] - a[:, j]) == np.sign(b[:, i] - b[:, j])).mean(axis=1)


def system_level_correlation(
    x: Any,
    y: Any,
    system: Any,
    *,
    item: Any = None,
    data: pd.DataFrame | None = None,
    method: CorrelationMethod = "spearman",
    variant: str = "b",
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Correlation of per-system mean scores (judge ``x`` vs human ``y``), p from scipy over systems.

    With ``item`` the CI resamples items (each carrying all its systems' rows); without it, rows.
    Several rows for one item and system (repeats) are an error unless ``aggregate`` ("mean", "median",
    "first") merges them first. ``by``: one row per group (``by="criterion"``).
    """
    if by is not None:
        return by_group(lambda part: system_level_correlation(
            x, y, system, item=item, data=part, method=method, variant=variant, aggregate=aggregate,
            interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by,
            rows_of=judge_names(data, {"x": x, "y": y}))
    sm = _system_means(x, y, system, item, data, aggregate)
    estimate, p_value, note = correlate(*sm.means, method, variant)
    boot = sm.bootstrap(_rowwise_correlation(method, variant),
                        dict(n_resamples=n_resamples, ci_level=ci_level, interval=interval, seed=seed))
    row = result_row(
        f"system_{metric_name(method, variant)}", estimate, n=len(sm.systems), p_value=p_value,
        method=f"{method} correlation of per-system means ({len(sm.systems)} systems), p over systems "
        f"{p_value_method(method, *sm.means)}; "
        f"CI: {boot.method} over {sm.unit}", note=join_notes(note, sm.res.note, boot.note), **boot.fields(),
        n_systems=len(sm.systems), n_items=sm.mx.shape[0], n_rows=sm.res.n, **sm.res.context())
    return tidy_frame([row])


def system_pair_accuracy(
    x: Any,
    y: Any,
    system: Any,
    *,
    item: Any = None,
    data: pd.DataFrame | None = None,
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Share of system pairs that judge means (``x``) and human means (``y``) order the same way.

    A pair counts as agreeing when the signs of the two mean differences match (so a tie agrees
    only with a tie). CI by bootstrap over items (or rows); no p-value (pairs are not independent).
    ``by`` and ``aggregate``: as in :func:`system_level_correlation`.
    """
    if by is not None:
        return by_group(lambda part: system_pair_accuracy(
            x, y, system, item=item, data=part, aggregate=aggregate, interval=interval, n_resamples=n_resamples,
            ci_level=ci_level, seed=seed), data, by, rows_of=judge_names(data, {"x": x, "y": y}))
    sm = _system_means(x, y, system, item, data, aggregate)
    n_pairs = len(sm.systems) * (len(sm.systems) - 1) // 2
    note = "" if n_pairs else "fewer than 2 systems: no pairs"
    means_x, means_y = sm.means
    estimate = float(_pair_agreement(means_x[None], means_y[None])[0]) if n_pairs else np.nan
    boot = sm.bootstrap(_pair_agreement, dict(n_resamples=n_resamples, ci_level=ci_level, interval=interval,
                                              seed=seed))
    row = result_row(
        "system_pair_accuracy", estimate, n=n_pairs,
        method=f"share of {n_pairs} system pairs with the same sign of mean difference (tie agrees only with tie); "
        f"CI: {boot.method} over {sm.unit}", note=join_notes(note, sm.res.note, boot.note if n_pairs else ""),
        **boot.fields(), n_systems=len(sm.systems), n_items=sm.mx.shape[0], **sm.res.context())
    return tidy_frame([row])


def meta_evaluation(
    x: Any,
    y: Any,
    *,
    data: pd.DataFrame | None = None,
    group: Any = None,
    system: Any = None,
    item: Any = None,
    method: CorrelationMethod = "spearman",
    variant: str = "b",
    by: By = None,
    aggregate: Aggregate = None,
    n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Every level the inputs allow, one row each: pooled (clustered by ``group`` if given), group, system, pairs.

    ``aggregate`` merges a judge's duplicate rows on a judgments table and, at the system levels,
    several rows of one item and system (see :func:`system_level_correlation`). ``by``: one block of
    rows per group (``by="criterion"``); a table with several criteria needs it (or a filter).
    """
    common: dict[str, Any] = dict(n_resamples=n_resamples, ci_level=ci_level, seed=seed)
    if by is not None:
        return by_group(lambda part: meta_evaluation(
            x, y, data=part, group=group, system=system, item=item, method=method, variant=variant,
            aggregate=aggregate, **common), data, by, rows_of=judge_names(data, {"x": x, "y": y}))
    res = resolve(data, {"x": x, "y": y}, cluster=group, aggregate=_on_judges(data, x, y, aggregate),
                  statistic="meta_evaluation")
    frames = [tidy_frame([correlation_row(res, method, variant=variant, level="pooled", **common)])]
    if group is not None:
        frames.append(group_level_correlation(x, y, group, data=data, method=method, variant=variant,
                                              aggregate=aggregate, **common).assign(level="group"))
    if system is not None:
        frames.append(system_level_correlation(x, y, system, item=item, data=data, method=method, variant=variant,
                                               aggregate=aggregate, **common).assign(level="system"))
        frames.append(system_pair_accuracy(x, y, system, item=item, data=data, aggregate=aggregate, **common)
                      .assign(level="system_pairs"))
    combined = pd.concat(frames, ignore_index=True)
    ordered = [c for c in combined.columns if c != "note"] + ["note"]
    return combined[ordered].assign(note=combined["note"].fillna(""))
