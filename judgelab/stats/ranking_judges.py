"""How a ranking of systems depends on the judge: Kendall's tau between two judges' rankings and top-k stability.

:func:`ranking_agreement` ranks the systems once per judge -- by Bradley-Terry coefficients from the judges'
pairwise verdicts (as :func:`judgelab.stats.rank_systems` reads a judgments table) or by mean score (as
:func:`judgelab.stats.rank_by_score`) -- and compares the two rankings over the systems both judges ranked.
Its bootstrap resamples the units (items, or ``cluster=``) of the UNION of both judges' rows, and refits both
judges on each same resample, so the interval of tau reflects that the judges judged the same items.

Rows (metric):

- ``kendall_tau``: Kendall's tau-b between the two judges' coefficients (or mean scores), percentile
  bootstrap CI over the joint resamples;
- ``top_k_changes``: per judge, the share of resamples whose top-k set differs from the judge's own
  point-estimate top-k set (a judge's ``top_k`` systems: those ranked ``<= k``; more than k when tied);
- ``top_k_differs``: 1 when the two judges' point estimates have different top-k sets, else 0 (the note
  names both sets);
- ``top_k_differs_resampled``: the share of joint resamples in which the two judges' top-k sets differ.

What the tau interval is not: tau is computed between ESTIMATED rankings, and the noise of each judge's
estimates pulls it below the tau of the judges' underlying rankings (two judges with the same expected
ranking rarely give tau 1 on finite data); the percentile interval describes how the estimated tau varies
over the items, so an interval below 1 does not by itself show that the judges rank the systems differently
-- compare the rank intervals of :func:`judgelab.stats.rank_systems` / ``rank_by_score(by="judge")``.

A resample in which either judge has no finite estimate (a system winning all its battles, a system
without scores) is left out of every row and counted (``n_invalid_resamples``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.stats.battles import TiePolicy, read_battles
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES
from judgelab.stats.bradley_terry import collapse
from judgelab.stats.pairing import StatsInputError, is_judgments_table
from judgelab.stats.ranking import _fit_one
from judgelab.stats.ranking_scores import check_resampling, cluster_resamples, read_scores
from judgelab.stats.ranking_tables import UnscoredPolicy, group_rows, table_battles, table_scores
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["kendall_tau_b", "ranking_agreement"]

def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the last axes of ``x`` and ``y`` (NaN when either is constant)."""
    dx = np.sign(x[..., :, None] - x[..., None, :])
    dy = np.sign(y[..., :, None] - y[..., None, :])
    upper = np.triu(np.ones(dx.shape[-2:], dtype=bool), 1)
    s = (dx * dy)[..., upper].sum(axis=-1)
    nx = (dx[..., upper] != 0).sum(axis=-1)
    ny = (dy[..., upper] != 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s / np.sqrt(nx * ny.astype(float))


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of the top-k set (rank <= k, rank = 1 + number strictly larger) along the last axis."""
    ranks = 1 + (values[..., None, :] > values[..., :, None]).sum(axis=-1)
    return ranks <= k


def _battle_judge(rows: pd.DataFrame, *, system_a: str, system_b: str, cluster: str, ties: TiePolicy,
                  unscored: UnscoredPolicy | None) -> tuple[list[str], list[str], np.ndarray, Any, str]:
    read = table_battles(rows, system_a=system_a, system_b=system_b, unscored=unscored, carry=[cluster])
    battles = read_battles(read.frame, system_a=system_a, system_b=system_b, winner="winner", cluster=cluster,
                           ties=ties)
    data, row_of = collapse(battles)
    full = np.bincount(row_of, minlength=len(data.a)).astype(float)
    point, problem = _fit_one(data, full, battles, ties)
    if point is None:
        raise StatsInputError(problem[0].upper() + problem[1:])
    k = battles.n_systems
    assert battles.cluster is not None

    def refit(cluster_counts: np.ndarray) -> np.ndarray | None:
        weights = np.bincount(row_of, weights=cluster_counts[battles.cluster].astype(float), minlength=len(data.a))
        values, _ = _fit_one(data, weights, battles, ties, start=point)
        return None if values is None else values[:k]

    return battles.systems, list(battles.cluster_names), point[:k], refit, read.note


def _score_judge(rows: pd.DataFrame, *, system: str, score: str, cluster: str,
                 unscored: UnscoredPolicy | None) -> tuple[list[str], list[str], np.ndarray, Any, str]:
    if unscored == "tie":
        raise StatsInputError("unscored='tie' counts an unscored verdict as a tie; for scores use unscored='drop'")
    read = table_scores(rows, system=system, score=score, unscored=unscored, carry=[cluster])
    data = read_scores(read.frame, system=system, score=score, cluster=cluster)
    point = data.means(np.ones(len(data.score)))

    def refit(cluster_counts: np.ndarray) -> np.ndarray | None:
        means = data.means(cluster_counts[data.cluster].astype(float))
        return means if np.isfinite(means).all() else None

    return data.names, data.cluster_names, point, refit, read.note


def ranking_agreement(
    table: pd.DataFrame,
    judges: Sequence[str],
    *,
    system_a: str = "model_a",
    system_b: str = "model_b",
    system: str = "system",
    score: str | None = None,
    cluster: str | None = None,
    ties: TiePolicy = "half",
    unscored: UnscoredPolicy | None = None,
    top_k: int = 3,
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Kendall's tau between two judges' rankings of the systems, and how stable each judge's top-k set is.

    ``table``: a judgments table with both judges' rows. Pairwise verdicts (the default): ``system_a`` /
    ``system_b`` name the columns of candidate A's and B's systems (original order), ``ties`` and
    ``unscored`` as in :func:`judgelab.stats.rank_systems`; scores: ``score=`` names the value column and
    ``system`` the column of the item's system (``unscored="drop"`` to leave unscored rows out).
    ``cluster``: the unit resampled for BOTH judges at once (``item_id`` when None). ``top_k``: the size of
    the leading set compared. See the module for the rows.
    """
    check_resampling(n_resamples, ci_level, seed)
    if not isinstance(table, pd.DataFrame) or not is_judgments_table(table):
        raise StatsInputError("ranking_agreement reads a judgments table (item_id, judge, criterion, status columns) "
                              "holding both judges' rows")
    if isinstance(judges, str) or len(judges) != 2 or judges[0] == judges[1]:
        raise StatsInputError(f"judges must name two different judges, got {judges!r}")
    if not isinstance(top_k, int | np.integer) or top_k < 1:
        raise StatsInputError(f"top_k must be a positive whole number, got {top_k!r}")
    unit = "item_id" if cluster is None else cluster
    per_judge = []
    for name in judges:
        [(_, rows)] = group_rows(table, judge=name, by=None, value="winner" if score is None else score)
        if score is None:
            per_judge.append(_battle_judge(rows, system_a=system_a, system_b=system_b, cluster=unit, ties=ties,
                                           unscored=unscored))
        else:
            per_judge.append(_score_judge(rows, system=system, score=score, cluster=unit, unscored=unscored))
    common = sorted(set(per_judge[0][0]) & set(per_judge[1][0]))
    if len(common) < 3:
        raise StatsInputError(f"the two judges rank {len(common)} systems in common ({', '.join(common) or 'none'}); "
                              f"comparing rankings needs at least 3")
    if top_k >= len(common):
        raise StatsInputError(f"top_k={top_k} covers all {len(common)} common systems: pick k < {len(common)}")
    left_out = sorted((set(per_judge[0][0]) | set(per_judge[1][0])) - set(common))
    units = sorted(set(per_judge[0][1]) | set(per_judge[1][1]))
    unit_code = {u: i for i, u in enumerate(units)}
    picks = [np.array([names.index(s) for s in common]) for names, *_ in per_judge]
    maps = [np.array([unit_code[u] for u in labels], dtype=np.int64) for _, labels, *_ in per_judge]
    points = [pj[2][pick] for pj, pick in zip(per_judge, picks, strict=True)]
    draws = np.full((n_resamples, 2, len(common)), np.nan)
    for r, counts in enumerate(cluster_resamples(len(units), n_resamples, seed)):
        for j, (pj, pick, mapping) in enumerate(zip(per_judge, picks, maps, strict=True)):
            values = pj[3](counts[mapping])
            if values is None:
                break
            draws[r, j] = values[pick]
    valid = draws[np.isfinite(draws).all(axis=(1, 2))]
    n_invalid = n_resamples - len(valid)
    alpha = (1 - ci_level) / 2
    tau = float(kendall_tau_b(points[0], points[1]))
    taus = kendall_tau_b(valid[:, 0], valid[:, 1])
    taus = taus[np.isfinite(taus)]
    low, high = np.quantile(taus, [alpha, 1 - alpha]) if len(taus) >= 2 else (np.nan, np.nan)
    kind = "Bradley-Terry coefficients" if score is None else f"mean {score!r}"
    pct = ci_level * 100
    level = f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:g}%"
    boot = (f"{n_resamples} joint resamples of {unit} ({len(units)} units, both judges refitted on each), "
            f"{len(valid)} valid")
    notes = join_notes(per_judge[0][4], per_judge[1][4],
                       f"system(s) {', '.join(left_out)} ranked by one judge only, left out" if left_out else "",
                       f"{n_invalid} of {n_resamples} resamples had no finite estimate for a judge and were left out"
                       if n_invalid else "")
    pair = f"{judges[0]} vs {judges[1]}"
    shared: dict[str, Any] = {"judges": pair, "top_k": int(top_k), "ci_level": ci_level, "n_resamples": n_resamples,
                              "n_invalid_resamples": n_invalid}
    rows = [result_row("kendall_tau", tau, n=len(common), ci_low=float(low), ci_high=float(high),
                       method=f"Kendall's tau-b between the judges' {kind} over {len(common)} systems; percentile "
                              f"bootstrap {level}, {boot}", judge="", **shared, note=notes)]
    tops = [_top(p, top_k) for p in points]
    resampled_tops = [_top(valid[:, j], top_k) for j in range(2)]
    for j, name in enumerate(judges):
        changed = (resampled_tops[j] != tops[j]).any(axis=1)
        rows.append(result_row("top_k_changes", float(changed.mean()) if len(valid) else np.nan, n=len(valid),
                               method=f"share of resamples whose top-{top_k} set by {kind} differs from the judge's "
                                      f"point estimate's; {boot}", judge=name, **shared, note=notes))
    sets = [", ".join(np.array(common)[t]) for t in tops]
    differs = bool((tops[0] != tops[1]).any())
    rows.append(result_row("top_k_differs", float(differs), n=len(common),
                           method=f"1 when the two judges' point-estimate top-{top_k} sets differ, else 0",
                           judge="", **shared,
                           note=join_notes(f"top-{top_k} of {judges[0]}: {sets[0]}; of {judges[1]}: {sets[1]}",
                                           notes)))
    jointly = (resampled_tops[0] != resampled_tops[1]).any(axis=1)
    rows.append(result_row("top_k_differs_resampled", float(jointly.mean()) if len(valid) else np.nan,
                           n=len(valid), method=f"share of joint resamples in which the two judges' top-{top_k} sets "
                                                f"differ; {boot}", judge="", **shared, note=notes))
    return tidy_frame(rows)
