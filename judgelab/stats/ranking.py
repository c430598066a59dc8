"""Ranking systems from pairwise battles: Bradley-Terry with rank intervals, the win-rate matrix, and Elo.

:func:`rank_systems` fits Bradley-Terry coefficients by maximum likelihood (:mod:`judgelab.stats.bradley_terry`)
on a battles frame (one row per battle: the two systems and the winner, as Chatbot Arena and Arena-Hard
release them; read by :mod:`judgelab.stats.battles`). It returns, per system, its coefficient
(``bt_coefficient``, natural-log scale: a difference of 1 multiplies the odds of winning by e) and its win
probability (``win_probability``, the expected score with a tie worth half) against the reference system,
or against an average system (coefficient 0) when coefficients sum to zero; optional covariates
("style control") as their own rows (``covariate_coefficient``); Davidson's tie parameter
(``tie_parameter``, nu). Intervals are percentile bootstraps: battles are resampled, or whole clusters
(prompts) when ``cluster=`` is given, and the model refitted on each resample.

Rank intervals: a system's ``rank`` is 1 + the number of systems with a larger coefficient (1 = best); in
each resample it is ranked the same way, and ``rank_low`` / ``rank_high`` are the ``(1 - ci_level) / 2``
and ``(1 + ci_level) / 2`` quantiles of its resampled ranks (inverted-CDF quantiles, so they are ranks it
actually took): with the default 95%, fewer than 2.5% of resamples give it a better (smaller) rank than
``rank_low`` and at most 2.5% a worse (larger) rank than ``rank_high``.

A resample in which some system wins (or loses) every battle it has, or in which the graph of battles
falls apart, has no finite MLE; it is left out and counted (``n_invalid_resamples`` and the note),
never refitted with a penalty.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.stats.battles import Battles, TiePolicy, read_battles, winner_outcomes
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES
from judgelab.stats.bradley_terry import FitData, collapse, existence_problem, fit, win_probability
from judgelab.stats.pairing import StatsInputError, is_judgments_table
from judgelab.stats.ranking_scores import check_resampling, ranked_frame
from judgelab.stats.ranking_tables import (
    UnscoredPolicy,
    by_columns,
    frame_groups,
    group_rows,
    stack_blocks,
    table_battles,
)
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["elo_ratings", "rank_systems", "win_rate_matrix"]

_TIES_TEXT = {"half": "ties as half a win each", "drop": "ties dropped", "davidson": "ties by Davidson's model"}


def _resample_weights(battles: Battles, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """Per resample, each battle's multiplicity: battles drawn with replacement, or whole clusters.

    One resample at a time, so memory stays O(battles) however many resamples are asked for.
    """
    rng = np.random.default_rng(seed)
    n_clusters = 0 if battles.cluster is None else int(battles.cluster.max()) + 1
    for _ in range(n_resamples):
        if battles.cluster is None:
            yield np.bincount(rng.integers(0, battles.n, size=battles.n), minlength=battles.n).astype(float)
        else:
            counts = np.bincount(rng.integers(0, n_clusters, size=n_clusters), minlength=n_clusters)
            yield counts[battles.cluster].astype(float)


def _level_text(ci_level: float) -> str:
    pct = ci_level * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:g}%"


def _bootstrap_text(battles: Battles, n_resamples: int, ci_level: float) -> str:
    text = f"percentile bootstrap {_level_text(ci_level)}, {n_resamples} resamples"
    if battles.cluster is None:
        return text + " of battles"
    n_clusters = len(np.unique(battles.cluster))
    return text + f", clustered by {battles.cluster_name} ({n_clusters} clusters; resampling whole clusters)"


def _ranks(theta: np.ndarray) -> np.ndarray:
    """1 + the number of systems with a strictly larger coefficient, per row of ``theta``."""
    return 1 + (theta[..., None, :] > theta[..., :, None]).sum(axis=-1)


def _fit_one(data: FitData, weights: np.ndarray, battles: Battles, ties: TiePolicy,
             start: np.ndarray | None = None) -> tuple[np.ndarray | None, str]:
    # necessary with covariates too: a system that never loses gains from every increase of its coefficient
    problem = existence_problem(data, weights, battles.systems, ties)
    if problem:
        return None, problem
    params = fit(data, weights, ties, start=start)
    if params is None:
        return None, ("the maximum-likelihood fit diverged (a covariate, or a group of systems, separates wins "
                      "from losses), so there is no finite estimate")
    return params, ""


def rank_systems(
    battles: pd.DataFrame,
    *,
    system_a: str = "model_a",
    system_b: str = "model_b",
    winner: str = "winner",
    cluster: str | None = None,
    ties: TiePolicy = "half",
    reference: str | None = None,
    covariates: Sequence[str] = (),
    judge: str | None = None,
    by: str | Sequence[str] | None = None,
    unscored: UnscoredPolicy | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Bradley-Terry ranking of the systems in ``battles`` with bootstrap intervals and rank intervals.

    ``battles``: one row per battle; ``system_a`` / ``system_b`` name the two systems' columns and ``winner``
    the outcome column (A, B or tie; Chatbot Arena's model_a, model_b, tie, 'tie (bothbad)' too).
    ``ties``: "half" (a tie is half a win for each), "davidson" (Davidson's tie model, fitted by maximum
    likelihood) or "drop" (ties left out; counted in ``n_ties_dropped`` and the note).
    ``reference``: a system whose coefficient is fixed at 0 (win probabilities are then against it); None
    makes the coefficients sum to zero (win probabilities against an average system, coefficient 0).
    ``covariates``: numeric columns (the value for A minus the value for B, e.g. a length difference)
    added to the logit as additive terms; their coefficients are rows with a ``term`` column, and the
    systems' coefficients are then those at equal covariates.
    ``cluster``: the column of the unit to resample (the prompt); battles are resampled when None.

    Returns the tidy frame (``metric, estimate, ci_low, ci_high, p_value, n, method``, then ``system``,
    ``term``, ``rank``, ``rank_low``, ``rank_high`` ... and ``note``), system rows ordered by rank; ``n`` is
    the battles a system took part in (every battle for the other rows). A system that wins or loses every
    battle, or a comparison graph in pieces, is refused (:class:`StatsInputError` naming the systems).

    A judgments table (:func:`judgelab.stats.is_judgments_table`) is read as battles too: ``system_a`` /
    ``system_b`` then name the columns holding the systems of candidates A and B in the ORIGINAL order, and
    each (item, order) row of one judge is one battle, its ``winner`` (A / B / TIE, in the original labels,
    as the table stores swapped rows) read as it is. ``judge=`` names the judge when the table has several;
    ``unscored=`` says how unscored rows count ("tie" or "drop", reported in ``n_unscored`` and the note;
    without it they are refused); ``cluster`` defaults to ``item_id`` there (an item's two orders are
    resampled together). See :mod:`judgelab.stats.ranking_tables` for the rules.

    ``by``: columns to split on (``by="judge"``: one ranking per judge side by side); each group is ranked
    with the same ``seed``, so groups over the same clusters are resampled alike. The group columns lead.
    """
    check_resampling(n_resamples, ci_level, seed)
    options: dict[str, Any] = {"ties": ties, "reference": reference, "n_resamples": n_resamples,
                               "ci_level": ci_level, "seed": seed}
    if is_judgments_table(battles):
        if winner != "winner":
            raise StatsInputError(f"a judgments table keeps its verdicts in 'winner', so winner={winner!r} cannot "
                                  f"be read: leave winner= out")
        cover = list(covariates) if not isinstance(covariates, str) else [covariates]
        cluster_col = "item_id" if cluster is None else cluster
        blocks = []
        for keys, rows in group_rows(battles, judge=judge, by=by, value="winner"):
            read = table_battles(rows, system_a=system_a, system_b=system_b, unscored=unscored,
                                 carry=[cluster_col, *cover])
            extra = {"n_unscored": read.n_unscored} if unscored is not None else {}
            blocks.append((keys, _rank_battles(read.frame, system_a=system_a, system_b=system_b, winner="winner",
                                               cluster=cluster_col, covariates=cover, note=read.note, extra=extra,
                                               **options)))
        return stack_blocks(blocks)
    if judge is not None or unscored is not None:
        raise StatsInputError("judge= and unscored= read a judgments table (item_id, judge, criterion, status "
                              "columns); for a battles frame, filter it to the judge's battles and leave them out")
    if not by_columns(by):
        return _rank_battles(battles, system_a=system_a, system_b=system_b, winner=winner, cluster=cluster,
                             covariates=covariates, **options)
    blocks = [(keys, _rank_battles(part, system_a=system_a, system_b=system_b, winner=winner, cluster=cluster,
                                   covariates=covariates, **options))
              for keys, part in frame_groups(battles, by, "the battles frame")]
    return stack_blocks(blocks)


def _rank_battles(
    battles: pd.DataFrame,
    *,
    system_a: str,
    system_b: str,
    winner: str,
    cluster: str | None,
    ties: TiePolicy,
    reference: str | None,
    covariates: Sequence[str],
    n_resamples: int,
    ci_level: float,
    seed: int,
    note: str = "",
    extra: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """:func:`rank_systems` on one battles frame; ``note`` and ``extra`` (context columns) join every row."""
    note_in = note
    data_battles = read_battles(battles, system_a=system_a, system_b=system_b, winner=winner, cluster=cluster,
                                covariates=covariates, ties=ties)
    systems = data_battles.systems
    if reference is not None and str(reference) not in systems:
        raise StatsInputError(f"reference {reference!r} is not one of the systems ({', '.join(map(repr, systems))})")
    ref = None if reference is None else systems.index(str(reference))
    data, row_of = collapse(data_battles)
    full_weights = np.bincount(row_of, minlength=len(data.a)).astype(float)
    params, problem = _fit_one(data, full_weights, data_battles, ties)
    if params is None:
        raise StatsInputError(problem[0].upper() + problem[1:])
    k, p = data_battles.n_systems, len(data_battles.covariate_names)

    def shifted(values: np.ndarray) -> np.ndarray:
        theta = values[..., :k]
        centre = theta.mean(axis=-1, keepdims=True) if ref is None else theta[..., ref:ref + 1]
        return np.concatenate([theta - centre, values[..., k:]], axis=-1)

    estimate = shifted(params)
    draws = np.full((n_resamples, len(params)), np.nan)
    invalid_reasons: dict[str, int] = {}
    for i, battle_weights in enumerate(_resample_weights(data_battles, n_resamples, seed)):
        weights = np.bincount(row_of, weights=battle_weights, minlength=len(data.a))
        values, why = _fit_one(data, weights, data_battles, ties, start=params)
        if values is None:
            key = why.split(", so ")[0].split(":")[0]  # the reason without the systems' list: one count per reason
            invalid_reasons[key] = invalid_reasons.get(key, 0) + 1
        else:
            draws[i] = shifted(values)
    valid = draws[np.isfinite(draws).all(axis=1)]
    n_invalid = n_resamples - len(valid)
    resample_note = ""
    if n_invalid:
        resample_note = (f"{n_invalid} of {n_resamples} resamples had no finite maximum-likelihood estimate and were "
                         f"left out (" + "; ".join(f"{r}: {c}" for r, c in invalid_reasons.items()) + ")")
    alpha = (1 - ci_level) / 2

    def interval(column: np.ndarray) -> dict[str, float]:
        if len(column) < 2:
            return {"ci_low": np.nan, "ci_high": np.nan}
        low, high = np.quantile(column, [alpha, 1 - alpha])
        return {"ci_low": float(low), "ci_high": float(high)}

    rank = _ranks(estimate[:k])
    if len(valid) >= 2:
        ranks = _ranks(valid[:, :k])
        rank_low = np.quantile(ranks, alpha, axis=0, method="inverted_cdf")
        rank_high = np.quantile(ranks, 1 - alpha, axis=0, method="inverted_cdf")
    else:
        rank_low = rank_high = np.full(k, np.nan)
    log_nu = estimate[-1] if ties == "davidson" else None
    valid_log_nu = valid[:, -1] if ties == "davidson" else None
    versus = f"system {systems[ref]!r} (coefficient fixed at 0)" if ref is not None else \
        "an average system (coefficients sum to 0)"
    fit_text = (f"Bradley-Terry maximum likelihood, logit scale ({_TIES_TEXT[ties]}"
                + (f"; covariates {', '.join(data_battles.covariate_names)}" if p else "") + ")")
    boot_text = _bootstrap_text(data_battles, n_resamples, ci_level)
    shared: dict[str, Any] = {"ci_level": ci_level, "n_resamples": n_resamples, "n_invalid_resamples": n_invalid,
                              **(extra or {})}
    if ties == "drop":
        shared["n_ties_dropped"] = data_battles.n_ties_dropped
    drop_note = f"{data_battles.n_ties_dropped} ties dropped (ties='drop')" if ties == "drop" else ""
    coefficient_rows, probability_rows = [], []
    for i in np.argsort(rank, kind="stable"):
        ranks_of = {"rank": int(rank[i]), "rank_low": rank_low[i], "rank_high": rank_high[i]}
        n_i = data_battles.battles_of(int(i))
        note = join_notes("the reference: fixed at 0" if i == ref else "", note_in, drop_note, resample_note)
        coefficient_rows.append(result_row(
            "bt_coefficient", estimate[i], n=n_i, method=f"{fit_text}, identified against {versus}; {boot_text}",
            **interval(valid[:, i]), system=systems[i], term="", **ranks_of,
            **shared, note=note))
        probability = win_probability(valid[:, i], ties, valid_log_nu)
        probability_rows.append(result_row(
            "win_probability", float(win_probability(np.asarray(estimate[i]), ties, log_nu)), n=n_i,
            method=f"expected score (win 1, tie 1/2) against {versus}, covariates at 0, from the {fit_text}; "
                   f"{boot_text}",
            **interval(probability), system=systems[i], term="", **ranks_of,
            **shared, note=note))
    other_rows = []
    base_note = join_notes(note_in, drop_note, resample_note)
    for j, name in enumerate(data_battles.covariate_names):
        other_rows.append(result_row(
            "covariate_coefficient", estimate[k + j], n=data_battles.n,
            method=f"{fit_text}: change in the logit of A winning per unit of A minus B; {boot_text}",
            **interval(valid[:, k + j]), system="", term=name, **shared,
            note=base_note))
    if ties == "davidson":
        other_rows.append(result_row(
            "tie_parameter", float(np.exp(estimate[-1])), n=data_battles.n,
            method=f"Davidson's nu (P(tie) = nu / (e^(d/2) + e^(-d/2) + nu)), from the {fit_text}; {boot_text}",
            **interval(np.exp(valid[:, -1])), system="", term="nu", **shared,
            note=base_note))
    return ranked_frame([*coefficient_rows, *probability_rows, *other_rows], defaults={"system": "", "term": ""})


def win_rate_matrix(
    battles: pd.DataFrame,
    *,
    system_a: str = "model_a",
    system_b: str = "model_b",
    winner: str = "winner",
    cluster: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The observed pairwise win rates, long form: one row per ordered pair (``system``, ``opponent``).

    ``estimate`` is the share of their battles ``system`` won, a tie counting half; ``n`` their battles
    (pairs that never met are rows with n 0, NaN and a note). Percentile bootstrap intervals resample
    battles, or whole clusters when ``cluster=`` is given (the same resamples for every pair).
    """
    check_resampling(n_resamples, ci_level, seed)
    data = read_battles(battles, system_a=system_a, system_b=system_b, winner=winner, cluster=cluster)
    k = data.n_systems
    pair = data.a * k + data.b  # a < b by construction: the first system's share of each pair

    def shares(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        won = np.bincount(pair, weights=weights * data.outcome, minlength=k * k)
        total = np.bincount(pair, weights=weights, minlength=k * k)
        with np.errstate(invalid="ignore", divide="ignore"):
            return won / total, total

    estimate, counts = shares(np.ones(data.n))
    resampled = np.stack([shares(w)[0] for w in _resample_weights(data, n_resamples, seed)])
    alpha = (1 - ci_level) / 2
    method = f"share of battles won, ties as half; {_bootstrap_text(data, n_resamples, ci_level)}"
    rows = []
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            cell, flip = (i * k + j, False) if i < j else (j * k + i, True)
            n = int(counts[cell])
            values = resampled[:, cell]
            values = values[np.isfinite(values)]
            if flip:
                values = 1 - values
            low, high = np.quantile(values, [alpha, 1 - alpha]) if n and len(values) >= 2 else (np.nan, np.nan)
            point = (1 - estimate[cell] if flip else estimate[cell]) if n else np.nan
            missing = n_resamples - len(values) if n else 0
            note = "the two systems never met" if n == 0 else (
                f"{missing} of {n_resamples} resamples had no battle of this pair and were left out" if missing else "")
            rows.append(result_row("win_rate", point, n=n, method=method, ci_low=low, ci_high=high,
                                   system=data.systems[i], opponent=data.systems[j], ci_level=ci_level,
                                   n_resamples=n_resamples, note=note))
    return tidy_frame(rows)


def elo_ratings(
    battles: pd.DataFrame,
    *,
    system_a: str = "model_a",
    system_b: str = "model_b",
    winner: str = "winner",
    k: float = 4.0,
    scale: float = 400.0,
    base: float = 1000.0,
) -> pd.DataFrame:
    """Online Elo ratings, updated battle by battle in the frame's row order (for comparison with Bradley-Terry).

    Every system starts at ``base``; after each battle A's rating moves by ``k * (score - expected)`` with
    expected = 1 / (1 + 10^((R_B - R_A) / scale)) and score 1, 0 or 1/2 for a tie, and B's by the opposite.
    Elo is order-dependent: shuffling the battles changes the ratings (Bradley-Terry does not), and it has
    no interval here. Rows: metric ``elo_rating`` per system, ordered by ``rank``.
    """
    if not (np.isfinite([k, scale, base]).all() and k > 0 and scale > 0):
        raise StatsInputError(f"k and scale must be positive numbers and base finite, got k={k}, scale={scale}, "
                              f"base={base}")
    read_battles(battles, system_a=system_a, system_b=system_b, winner=winner)  # the same input rules
    first = battles[system_a].astype(str).to_numpy()
    second = battles[system_b].astype(str).to_numpy()
    score = winner_outcomes(battles[winner], winner)
    ratings: dict[str, float] = {s: float(base) for s in sorted(set(first) | set(second))}
    played: dict[str, int] = dict.fromkeys(ratings, 0)
    for sa, sb, s in zip(first, second, score, strict=True):
        expected = 1.0 / (1.0 + 10.0 ** ((ratings[sb] - ratings[sa]) / scale))
        ratings[sa] += k * (s - expected)
        ratings[sb] -= k * (s - expected)
        played[sa] += 1
        played[sb] += 1
    names = list(ratings)
    values = np.array([ratings[s] for s in names])
    rank = _ranks(values)
    method = (f"online Elo in the frame's row order (k={k:g}, scale {scale:g}, base {base:g}; a tie scores 1/2); "
              f"order-dependent: another order gives other ratings")
    rows = [result_row("elo_rating", values[i], n=played[names[i]], method=method, system=names[i],
                       rank=int(rank[i]), note="no interval: Elo depends on the battles' order; rank_systems gives "
                       "Bradley-Terry intervals") for i in np.argsort(rank, kind="stable")]
    return tidy_frame(rows)
