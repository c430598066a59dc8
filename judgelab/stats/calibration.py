"""Can a judge's confidence be trusted? Reliability-diagram data and expected calibration error, per judge.

A verdict is *correct* when it matches the gold (or human) label of its item: the same winner
(pairwise) or the same score. A "TIE" verdict against an A/B gold label earns ``tie_credit``
(default 0.5: breaking the tie by a coin would be right half the time), which is also what the
swap-consistency rule's "inconsistent -> TIE with confidence 0.5" promises.

ECE = sum over bins of (n_bin / n) * |accuracy_bin - mean confidence_bin|, with ``n_bins`` equal-width
bins on [0, 1] (``binning="uniform"``) or equal-count bins (``"quantile"``, edges from the data).
Its interval is a percentile bootstrap over verdicts (clustered by item when an item has several
verdicts, e.g. several criteria or repeats), with the bin edges held fixed. ECE is biased upwards
in small samples (every bin's |gap| is positive under noise), so a perfectly calibrated judge on a
few hundred verdicts shows an ECE of a few hundredths, not 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from judgelab.judgments import is_scored
from judgelab.stats._inputs import StatsInputError
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap
from judgelab.stats.question import check_design
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["EXCLUSIONS", "CalibrationResult", "calibration", "correctness", "expected_calibration_error"]

# why a verdict row cannot enter a calibration: the ``excluded`` value of :func:`correctness`, and the
# count column each reason gets in the summary
EXCLUSIONS: dict[str, str] = {"unscored": "n_unscored_excluded", "no confidence": "n_without_confidence",
                              "no gold label": "n_without_gold"}

Binning = Literal["uniform", "quantile"]


@dataclass
class CalibrationResult:
    bins: pd.DataFrame  # judge, bin, bin_low, bin_high, n, mean_confidence, accuracy, gap
    summary: pd.DataFrame  # tidy: judge, metric (ece, accuracy, mean_confidence), estimate, CI, n, method


def _gold_map(table: pd.DataFrame, gold: str | Mapping[str, object]) -> tuple[dict[tuple, object], str | None]:
    if isinstance(gold, Mapping):
        return {(str(k), "overall", None): v for k, v in gold.items()}, None
    rows = table[(table["judge"] == gold) & is_scored(table)]
    if rows.empty:
        raise StatsInputError(f"no scored rows of gold judge {gold!r} in the table")
    out: dict[tuple, object] = {}
    for item, crit, side, winner, score in zip(rows["item_id"], rows["criterion"], rows["side"], rows["winner"],
                                               rows["score"], strict=True):
        key = (str(item), str(crit), None if pd.isna(side) else str(side))
        label = winner if isinstance(winner, str) else (None if pd.isna(score) else float(score))
        if key in out and out[key] != label:
            raise StatsInputError(f"gold judge {gold!r} gives item {item!r} two different labels")
        out[key] = label
    return out, gold


def correctness(table: pd.DataFrame, gold: str | Mapping[str, object] = "gold", *,
                tie_credit: float = 0.5) -> pd.DataFrame:
    """Every judge row with ``correct`` (1, 0 or ``tie_credit``) against the gold label.

    Returns columns judge, item_id, confidence, correct, excluded: ``excluded`` is "" for a usable
    verdict, else why it cannot be scored ("unscored", "no confidence", "no gold label"; see
    :data:`EXCLUSIONS`), and its ``correct`` is NaN.
    """
    labels, gold_judge = _gold_map(table, gold)
    rows = table if gold_judge is None else table[table["judge"] != gold_judge]
    keys = [(str(i), str(c), None if pd.isna(s) else str(s))
            for i, c, s in zip(rows["item_id"], rows["criterion"], rows["side"], strict=True)]
    gold_values = [labels.get(k) for k in keys]
    scored = is_scored(rows).to_numpy()
    conf = rows["confidence"].astype(float).to_numpy()
    has_conf = ~np.isnan(conf)
    excluded = np.where(~scored, "unscored", np.where(~has_conf, "no confidence",
                        np.where([g is None for g in gold_values], "no gold label", ""))).astype(object)
    usable = excluded == ""
    if ((conf[usable] < 0) | (conf[usable] > 1)).any():
        raise StatsInputError("confidence values must lie in [0, 1]")
    correct = [np.nan if not use else _credit(winner, score, g, tie_credit)
               for use, winner, score, g in zip(usable, rows["winner"], rows["score"], gold_values, strict=True)]
    return pd.DataFrame({"judge": rows["judge"].to_numpy(dtype=object), "item_id": rows["item_id"].to_numpy(dtype=object),
                         "confidence": np.where(usable, conf, np.nan), "correct": np.array(correct, dtype=float),
                         "excluded": excluded})


def _credit(winner: object, score: object, gold: object, tie_credit: float) -> float:
    if isinstance(winner, str):
        return 1.0 if winner == gold else (tie_credit if winner == "TIE" and gold != "TIE" else 0.0)
    return 1.0 if (not pd.isna(score) and float(score) == gold) else 0.0


def _edges(conf: np.ndarray, n_bins: int, binning: Binning) -> np.ndarray:
    if binning == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if binning == "quantile":
        edges = np.unique(np.quantile(conf, np.linspace(0, 1, n_bins + 1)))
        edges[0], edges[-1] = 0.0, 1.0
        return edges
    raise StatsInputError(f"binning must be 'uniform' or 'quantile', not {binning!r}")


def _bin_ids(conf: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, len(edges) - 2)


def expected_calibration_error(confidence: Sequence[float] | np.ndarray, correct: Sequence[float] | np.ndarray,
                               *, n_bins: int = 10, binning: Binning = "uniform") -> float:
    """ECE of one set of (confidence, correctness) pairs."""
    conf, corr = np.asarray(confidence, dtype=float), np.asarray(correct, dtype=float)
    bins = _bin_ids(conf, _edges(conf, n_bins, binning))
    k = int(bins.max()) + 1 if len(bins) else 1
    gap = np.bincount(bins, corr, minlength=k) - np.bincount(bins, conf, minlength=k)
    return float(np.abs(gap).sum() / len(conf)) if len(conf) else float("nan")


def calibration(table: pd.DataFrame, gold: str | Mapping[str, object] = "gold", *,
                judges: Sequence[str] | None = None, n_bins: int = 10, binning: Binning = "uniform",
                tie_credit: float = 0.5, by: str | Sequence[str] | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                ci_level: float = 0.95, seed: int = 0) -> CalibrationResult:
    """Reliability-diagram bins and ECE (bootstrap CI) per judge, against ``gold`` (a judge or item -> label).

    Each judge's summary rows count its verdicts left out, by reason (see :data:`EXCLUSIONS`). A judge's
    rows must hold one criterion, side, condition, repeat and rubric (rule 1 of
    :mod:`judgelab.stats.question`): ``by`` gives one block of bins and summary rows per group
    (``by="condition"`` for the two presentation orders), the group columns leading.
    """
    if n_bins < 1:
        raise StatsInputError(f"n_bins must be positive, got {n_bins}")
    if by is not None:
        cols = [by] if isinstance(by, str) else list(by)
        gold_rows = table[table["judge"] == gold] if isinstance(gold, str) else table.iloc[:0]
        judged = table[table["judge"] != gold] if isinstance(gold, str) else table
        parts = []
        for key, part in judged.groupby(cols, sort=True, dropna=False):
            res = calibration(pd.concat([part, gold_rows], ignore_index=True), gold, judges=judges, n_bins=n_bins,
                              binning=binning, tie_credit=tie_credit, n_resamples=n_resamples, ci_level=ci_level,
                              seed=seed)
            values = key if isinstance(key, tuple) else (key,)
            for frame in (res.bins, res.summary):
                for col, v in reversed(list(zip(cols, values, strict=True))):
                    frame.insert(0, col, v)
            parts.append(res)
        if not parts:
            raise StatsInputError("no judge rows to calibrate")
        return CalibrationResult(bins=pd.concat([p.bins for p in parts], ignore_index=True),
                                 summary=pd.concat([p.summary for p in parts], ignore_index=True))
    judged = table[table["judge"] != gold] if isinstance(gold, str) else table
    if judges is not None:
        judged = judged[judged["judge"].isin(list(judges))]
    for _, rows in judged.groupby("judge", sort=False):
        check_design(rows, rater=None, statistic="calibration")
    verdicts = correctness(table, gold, tie_credit=tie_credit)
    if judges is not None:
        verdicts = verdicts[verdicts["judge"].isin(list(judges))]
    data = verdicts[verdicts["excluded"] == ""]
    if data.empty:
        raise StatsInputError("no scored verdicts with both a confidence and a gold label to calibrate")
    bin_frames, summary_rows = [], []
    for judge, part in data.groupby("judge", sort=True):
        conf, corr = part["confidence"].to_numpy(), part["correct"].to_numpy()
        edges = _edges(conf, n_bins, binning)
        ids = _bin_ids(conf, edges)
        k = len(edges) - 1
        counts = np.bincount(ids, minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_conf = np.bincount(ids, conf, minlength=k) / counts
            acc = np.bincount(ids, corr, minlength=k) / counts
        bin_frames.append(pd.DataFrame({"judge": judge, "bin": np.arange(k), "bin_low": edges[:-1],
                                        "bin_high": edges[1:], "n": counts, "mean_confidence": mean_conf,
                                        "accuracy": acc, "gap": acc - mean_conf}))

        def ece_stat(idx: np.ndarray, ids: np.ndarray = ids, conf: np.ndarray = conf, corr: np.ndarray = corr,
                     k: int = k) -> np.ndarray:
            offsets = (np.arange(idx.shape[0]) * k)[:, None]
            cells = (ids[idx] + offsets).ravel()
            size = idx.shape[0] * k
            gap = (np.bincount(cells, corr[idx].ravel(), minlength=size)
                   - np.bincount(cells, conf[idx].ravel(), minlength=size)).reshape(-1, k)
            return np.abs(gap).sum(axis=1) / idx.shape[1]

        items = part["item_id"].to_numpy(dtype=object)
        clustered = len(set(items)) < len(items)
        boot = bootstrap(ece_stat, len(part), cluster=items if clustered else None,
                         cluster_name="item_id" if clustered else None, n_resamples=n_resamples,
                         ci_level=ci_level, seed=seed, return_distribution=False)
        reasons = verdicts.loc[verdicts["judge"] == judge, "excluded"]
        context = {"judge": judge, **{column: int((reasons == why).sum()) for why, column in EXCLUSIONS.items()}}
        summary_rows.append(result_row("ece", boot.estimate, n=len(part), note=boot.note, **boot.fields(),
                                       method=f"expected calibration error, {k} {binning} bins; CI: {boot.method}",
                                       **context))
        summary_rows.append(result_row("accuracy", float(corr.mean()), n=len(part), method="mean correctness "
                                       f"(TIE vs an A/B label = {tie_credit})", **context))
        summary_rows.append(result_row("mean_confidence", float(conf.mean()), n=len(part),
                                       method="mean stated confidence", **context))
    summary = tidy_frame(summary_rows)
    front = ["judge"] + [c for c in summary.columns if c != "judge"]
    return CalibrationResult(bins=pd.concat(bin_frames, ignore_index=True), summary=summary[front])
