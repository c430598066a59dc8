"""Split-conformal prediction intervals for judge scores: where, on the gold scale, is this item's score?

Calibrate on items with both a judge score and a gold label: the nonconformity score is the absolute
residual |gold − judge| and q is its ⌈(n+1)(1−α)⌉-th smallest value among the n calibration items
(α = 1 − ``ci_level``; q is infinite when that rank exceeds n). Every other item gets the interval
judge ± q, clipped to the rating ``scale``. For exchangeable items the interval holds the item's gold
value with probability at least ``ci_level`` (marginally, over items and calibration draws; not per
item). MAPIE's ``SplitConformalRegressor`` with the judge as a prefit model computes the same q.

Ordinal boundary adjustment (Sheng et al., EMNLP 2025): on a discrete scale (1-5, or means of three
integer ratings) each bound is moved to the nearest valid label, ``labels`` (default: the distinct
gold values of the calibration items). Rounding a bound to its nearest label never drops a label the
continuous interval held, so coverage on the label grid cannot fall; the interval becomes a set of
labels a reader can use.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.stats.corrected.means import corrected_inputs
from judgelab.stats.corrected.ppi import CorrectionError
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["conformal_interval", "conformal_quantile", "snap_to_labels"]


def conformal_quantile(residuals: np.ndarray, ci_level: float) -> float:
    """The split-conformal quantile of absolute residuals (inf when too few for ``ci_level``)."""
    scores = np.sort(np.abs(np.asarray(residuals, dtype=float)))
    n = len(scores)
    rank = math.ceil((n + 1) * ci_level)
    return float(scores[rank - 1]) if rank <= n else math.inf


def snap_to_labels(bounds: np.ndarray, labels: Sequence[float]) -> np.ndarray:
    """Each bound moved to its nearest label (ties to the outer side are not needed: either keeps coverage)."""
    grid = np.sort(np.asarray(labels, dtype=float))
    bounds = np.asarray(bounds, dtype=float)
    idx = np.clip(np.searchsorted(grid, bounds), 1, len(grid) - 1)
    left, right = grid[idx - 1], grid[idx]
    out = np.where(np.abs(bounds - left) <= np.abs(right - bounds), left, right)
    return np.where(np.isfinite(bounds), out, bounds)


def conformal_interval(
    table: pd.DataFrame,
    *,
    judge: str,
    gold: Any = "gold",
    value: str | None = None,
    calibration: Collection[str] | None = None,
    scale: tuple[float, float] | None = None,
    labels: Sequence[float] | None = None,
    ordinal: bool = True,
    ci_level: float = 0.9,
) -> pd.DataFrame:
    """Split-conformal intervals on the gold scale for the judge's scores (see the module docstring).

    ``calibration``: the item ids to calibrate on (default: every item with a gold label); intervals
    are returned for every other judged item, with ``gold`` and ``covered`` filled where a gold label
    exists (to check coverage on held-out labelled items). ``scale``: (low, high) to clip to (default:
    the range of the calibration gold values). ``ordinal``: snap bounds to ``labels``. Returns one
    ``conformal_interval`` row per item (``estimate`` = the judge's score) with ``item_id``, ``gold``,
    ``covered``, ``width`` and ``quantile`` (q); unscored judge rows are left out and counted.
    """
    if not 0 < ci_level < 1:
        raise CorrectionError(f"ci_level must be in (0, 1), not {ci_level}")
    [(_, inp)] = corrected_inputs(table, judge=judge, gold=gold, value=value)
    s = inp.sample
    ids = np.concatenate([inp.item_ids_l, inp.item_ids_u]).astype(str)
    yhat = np.concatenate([s.yhat, s.yhat_u])
    y = np.concatenate([s.y, np.full(s.n_unlabelled, np.nan)])
    if calibration is None:
        cal = np.concatenate([np.ones(s.n, dtype=bool), np.zeros(s.n_unlabelled, dtype=bool)])
    else:
        wanted = set(map(str, calibration))
        cal = np.isin(ids, list(wanted)) & ~np.isnan(y)
        if not cal.any():
            raise CorrectionError("none of the calibration items has both a scored judge row and a gold label")
    n_cal = int(cal.sum())
    if n_cal < 2:
        raise CorrectionError(f"{n_cal} calibration item(s): split conformal needs gold labels on calibration items")
    q = conformal_quantile(y[cal] - yhat[cal], ci_level)
    low, high = yhat[~cal] - q, yhat[~cal] + q
    lo_s, hi_s = scale if scale is not None else (float(np.min(y[cal])), float(np.max(y[cal])))
    low, high = np.clip(low, lo_s, hi_s), np.clip(high, lo_s, hi_s)
    grid = labels if labels is not None else np.unique(y[cal])
    if ordinal:
        low, high = snap_to_labels(low, grid), snap_to_labels(high, grid)
    target = y[~cal]
    covered = np.where(np.isnan(target), np.nan, (low <= target + 1e-9) & (target <= high + 1e-9))
    note = "" if math.isfinite(q) else (f"{n_cal} calibration items are too few for a {ci_level:.0%} interval: "
                                        "q is infinite, every interval is the whole scale")
    method = (f"split conformal, |gold − judge| scores, q = the ⌈(n+1)·{ci_level:g}⌉-th smallest of {n_cal}; "
              f"clipped to [{lo_s:g}, {hi_s:g}]" + ("; bounds snapped to the nearest label (Sheng et al. 2025)"
                                                    if ordinal else ""))
    rows = [result_row("conformal_interval", yhat_i, n=n_cal, ci_low=lo, ci_high=hi, method=method,
                       item_id=item, judge=judge, gold=g, covered=c, width=hi - lo, quantile=q, ci_level=ci_level,
                       n_unscored_excluded=inp.counts.get("n_unscored_excluded", 0), note=note)
            for item, yhat_i, lo, hi, g, c in zip(ids[~cal], yhat[~cal], low, high, target, covered, strict=True)]
    if not rows:
        raise CorrectionError("every judged item is a calibration item: nothing left to give an interval to")
    return tidy_frame(rows)
