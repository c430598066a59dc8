"""Ranking systems by their mean score, with bootstrap intervals and rank intervals.

:func:`rank_by_score` reads a judgments table (one score per item of one judge; the caller names the column
of the item's system, see :mod:`judgelab.stats.ranking_tables`) or a plain frame of (system, score) rows.
A system's ``estimate`` is the mean of its scores; the intervals are percentile bootstraps resampling items,
or whole clusters (``cluster=``, e.g. the source document every system summarised: all systems' scores of a
drawn document come along, so the systems are compared on the same documents). Ranks are defined as in
:func:`judgelab.stats.rank_systems`: 1 + the number of systems with a larger mean, and ``rank_low`` /
``rank_high`` the inverted-CDF quantiles of the resampled ranks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.stats.bootstrap import DEFAULT_RESAMPLES
from judgelab.stats.pairing import EmptyInputError, StatsInputError, is_judgments_table
from judgelab.stats.ranking_tables import frame_groups, group_rows, stack_blocks, table_scores
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["ScoreData", "cluster_resamples", "rank_by_score", "read_scores", "score_means"]


def cluster_resamples(n_clusters: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Per resample, how many times each cluster is drawn (with replacement); one resample at a time.

    The draws are those of :func:`judgelab.stats.rank_systems` (one ``integers`` call per resample from
    ``default_rng(seed)``), so two rankings over the same clusters with one seed see the same resamples.
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_resamples):
        yield np.bincount(rng.integers(0, n_clusters, size=n_clusters), minlength=n_clusters)


class ScoreData:
    """Scores with system codes and cluster labels (each row its own cluster when no column is named)."""

    def __init__(self, systems: np.ndarray, scores: np.ndarray, clusters: np.ndarray, cluster_name: str | None):
        self.names: list[str] = sorted(set(systems))
        code = {s: i for i, s in enumerate(self.names)}
        self.system = np.array([code[s] for s in systems], dtype=np.int64)
        self.score = scores
        self.cluster_labels = clusters
        self.cluster_name = cluster_name
        self.cluster_names: list[str] = sorted(set(clusters))
        cluster_code = {c: i for i, c in enumerate(self.cluster_names)}
        self.cluster = np.array([cluster_code[c] for c in clusters], dtype=np.int64)

    def means(self, weights: np.ndarray) -> np.ndarray:
        """Each system's weighted mean score (NaN for a system with no weight)."""
        k = len(self.names)
        total = np.bincount(self.system, weights=weights, minlength=k)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.bincount(self.system, weights=weights * self.score, minlength=k) / total


def read_scores(frame: pd.DataFrame, *, system: str, score: str, cluster: str | None) -> ScoreData:
    """Validate (system, score[, cluster]) rows: names present, scores finite numbers."""
    missing = [c for c in (system, score, *([cluster] if cluster else [])) if c not in frame.columns]
    if missing:
        raise StatsInputError(f"the frame has no column {missing[0]!r}; name the system column with system=, the "
                              f"score column with score= and the cluster column with cluster=")
    if len(frame) == 0:
        raise EmptyInputError("there are no scores to rank")
    for column in (system, *([cluster] if cluster else [])):
        if frame[column].isna().any():
            raise StatsInputError(f"{int(frame[column].isna().sum())} rows have no {column!r}; fill it in or remove "
                                  f"those rows")
    values = frame[score]
    if not (pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)):
        raise StatsInputError(f"score column {score!r} is not numeric (dtype {values.dtype})")
    numbers = values.to_numpy(dtype=float, na_value=np.nan)
    if not np.isfinite(numbers).all():
        raise StatsInputError(f"{int((~np.isfinite(numbers)).sum())} scored rows have a missing or infinite "
                              f"{score!r}; fill them in, or mark them unscored")
    clusters = frame[cluster].astype(str).to_numpy() if cluster else np.array([f"{i}" for i in range(len(frame))])
    return ScoreData(frame[system].astype(str).to_numpy(), numbers, clusters, cluster)


def _ranks(values: np.ndarray) -> np.ndarray:
    return 1 + (values[..., None, :] > values[..., :, None]).sum(axis=-1)


def score_means(data: ScoreData, counts: np.ndarray) -> np.ndarray:
    """Each system's mean when cluster ``c`` is drawn ``counts[c]`` times."""
    return data.means(counts[data.cluster].astype(float))


def _rank_scores(data: ScoreData, *, n_resamples: int, ci_level: float, seed: int, note: str,
                 extra: dict[str, Any]) -> pd.DataFrame:
    k = len(data.names)
    estimate = data.means(np.ones(len(data.score)))
    draws = np.stack([score_means(data, c) for c in cluster_resamples(len(data.cluster_names), n_resamples, seed)])
    valid = draws[np.isfinite(draws).all(axis=1)]
    n_invalid = n_resamples - len(valid)
    alpha = (1 - ci_level) / 2
    rank = _ranks(estimate)
    if len(valid) >= 2:
        low, high = np.quantile(valid, [alpha, 1 - alpha], axis=0)
        ranks = _ranks(valid)
        rank_low = np.quantile(ranks, alpha, axis=0, method="inverted_cdf")
        rank_high = np.quantile(ranks, 1 - alpha, axis=0, method="inverted_cdf")
    else:
        low = high = rank_low = rank_high = np.full(k, np.nan)
    unit = f"{data.cluster_name} ({len(data.cluster_names)} clusters; resampling whole clusters)" \
        if data.cluster_name else f"items ({len(data.cluster_names)})"
    pct = ci_level * 100
    level = f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:g}%"
    method = f"mean score per system; percentile bootstrap {level}, {n_resamples} resamples of {unit}"
    resample_note = f"{n_invalid} of {n_resamples} resamples drew no score of some system and were left out" \
        if n_invalid else ""
    counts = np.bincount(data.system, minlength=k)
    rows = [result_row("mean_score", float(estimate[i]), n=int(counts[i]), method=method, ci_low=float(low[i]),
                       ci_high=float(high[i]), system=data.names[i], rank=int(rank[i]), rank_low=rank_low[i],
                       rank_high=rank_high[i], ci_level=ci_level, n_resamples=n_resamples,
                       n_invalid_resamples=n_invalid, **extra, note=join_notes(note, resample_note))
            for i in np.argsort(rank, kind="stable")]
    return ranked_frame(rows)


def check_resampling(n_resamples: int, ci_level: float, seed: int) -> None:
    """The ranking functions' resampling arguments, refused in one sentence each."""
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise StatsInputError(f"n_resamples must be a positive whole number, got {n_resamples!r}")
    if not 0 < ci_level < 1:
        raise StatsInputError(f"ci_level must be between 0 and 1, got {ci_level}")
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise StatsInputError(f"seed must be a whole number >= 0, got {seed!r}")


def ranked_frame(rows: Sequence[dict[str, Any]], defaults: dict[str, Any] | None = None) -> pd.DataFrame:
    """The tidy frame of ranking rows, its rank columns whole numbers with missing values (``Int64``): rows
    without a rank (a covariate's, a tie parameter's) leave them empty."""
    frame = tidy_frame(list(rows), defaults=defaults)
    for column in ("rank", "rank_low", "rank_high"):
        frame[column] = pd.array(frame[column].astype("float64"), dtype="Float64").astype("Int64")
    return frame


def rank_by_score(
    table: pd.DataFrame,
    *,
    system: str = "system",
    score: str = "score",
    judge: str | None = None,
    cluster: str | None = None,
    by: str | Sequence[str] | None = None,
    unscored: Literal["drop"] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Systems ranked by mean score, with bootstrap CIs and rank intervals (``rank``, ``rank_low``, ``rank_high``).

    ``table``: a judgments table (one row per item of the judge, ``system`` the column naming the item's
    system, ``score`` its value column) or a plain frame of scores. On a judgments table ``judge=`` names
    the judge when there are several (or ``by="judge"`` ranks per judge side by side); several criteria,
    repeats or rubrics are refused unless ``by=`` splits on them; unscored rows are refused unless
    ``unscored="drop"`` (counted in ``n_unscored`` and the note). ``cluster``: the column of the unit to
    resample (e.g. ``document_id``); otherwise items (``item_id`` of a judgments table, rows of a plain frame). Rows: metric ``mean_score`` per system, ordered
    by rank; ``n`` is the system's number of scores.
    """
    check_resampling(n_resamples, ci_level, seed)
    if not isinstance(table, pd.DataFrame):
        raise StatsInputError(f"rank_by_score needs a pandas DataFrame, got {type(table).__name__}")
    options = {"n_resamples": n_resamples, "ci_level": ci_level, "seed": seed}
    blocks: list[tuple[dict[str, Any], pd.DataFrame]] = []
    if is_judgments_table(table):
        for keys, rows in group_rows(table, judge=judge, by=by, value=score):
            unit = cluster or "item_id"  # items are the unit; named, so the resamples ignore the row order
            read = table_scores(rows, system=system, score=score, unscored=unscored, carry=[unit])
            data = read_scores(read.frame, system=system, score=score, cluster=unit)
            extra = {"n_unscored": read.n_unscored} if unscored is not None else {}
            blocks.append((keys, _rank_scores(data, note=read.note, extra=extra, **options)))
    else:
        if judge is not None or unscored is not None:
            raise StatsInputError("judge= and unscored= read a judgments table (item_id, judge, criterion, status "
                                  "columns); for a plain frame of scores, filter it first and leave them out")
        for keys, part in frame_groups(table, by):
            data = read_scores(part, system=system, score=score, cluster=cluster)
            blocks.append((keys, _rank_scores(data, note="", extra={}, **options)))
    return stack_blocks(blocks)
