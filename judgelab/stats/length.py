"""Length control: AlpacaEval-style length-controlled win rate as a general estimator, and length-score correlation.

Model: logit P(A wins) = b0 + b1 * z, with z = (len_A - len_B) / sd(len_A - len_B) (not centred,
so z = 0 means equal length). The length-controlled win rate is expit(b0): the predicted win
probability at zero length difference. Standard errors are cluster-robust (by item or
instruction) when ``cluster`` is given, else heteroskedasticity-robust (HC0). Intervals are Wald
intervals on the logit scale, back-transformed (the delta method on the logit scale).
When the GLM cannot be estimated (a constant outcome, perfect separation, no length
variation, non-finite fit) the affected rows are NaN with a note saying which -- never a
silent NaN (alpaca_eval #453).
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import special

from judgelab.stats._inputs import By, StatsInputError, judge_names, per_group, resolve
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Seed
from judgelab.stats.correlation import CorrelationMethod, correlation_row
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["length_controlled_win_rate", "length_score_correlation"]

_LABELS = {"A": 1.0, "B": 0.0, "TIE": 0.5}


def _win_outcome(values: np.ndarray) -> np.ndarray:
    """1 = A wins, 0 = B wins, 0.5 = tie; accepts numbers or the labels A / B / TIE."""
    out = np.empty(len(values))
    for i, v in enumerate(values):
        if isinstance(v, str):
            key = v.strip().upper()
            if key not in _LABELS:
                raise StatsInputError(f"win label {v!r} is not one of A, B, TIE (or 1, 0, 0.5)")
            out[i] = _LABELS[key]
        else:
            out[i] = float(v)
    if not np.isin(out, (0.0, 0.5, 1.0)).all():
        raise StatsInputError("win must be 1 (A wins), 0 (B wins) or 0.5 (tie)")
    return out


def _separation(z: np.ndarray, y: np.ndarray) -> str:
    wins, losses = z[y > 0], z[y < 1]
    if len(wins) == 0 or len(losses) == 0:
        return "every comparison has the same outcome"
    if wins.min() >= losses.max() or losses.min() >= wins.max():
        return "wins and losses are perfectly separated by length difference"
    return ""


def _fit(y: np.ndarray, exog: np.ndarray, groups: np.ndarray | None) -> tuple[Any, str]:
    cov = {"cov_type": "cluster", "cov_kwds": {"groups": groups}} if groups is not None else {"cov_type": "HC0"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = sm.GLM(y, exog, family=sm.families.Binomial()).fit(**cov)
        except Exception as exc:  # statsmodels raises several types for degenerate fits; report, never crash
            return None, f"GLM failed: {exc}"
    notes = sorted({str(w.message).split("\n")[0] for w in caught if "converge" in str(w.message).lower()
                    or "separation" in str(w.message).lower()})
    if not (np.all(np.isfinite(fit.params)) and np.all(np.isfinite(fit.bse))):
        return None, join_notes("GLM gave non-finite estimates", *notes)
    return fit, join_notes(*notes)


def length_controlled_win_rate(
    win: Any,
    length_a: Any,
    length_b: Any,
    *,
    data: pd.DataFrame | None = None,
    cluster: Any = None,
    ties: Literal["half", "exclude"] = "half",
    by: By = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Rows: raw_win_rate, length_coefficient (per SD of length difference), length_controlled_win_rate.

    ``win``: 1/0/0.5 or "A"/"B"/"TIE" (A is the candidate whose win rate is estimated); ties
    count as half a win (a fractional binomial outcome) or are excluded. ``by``: one block of rows per
    group (``by="judge"``); on a judgments table the rows must hold one judge, criterion, condition and
    repeat unless ``by`` splits on them.
    """
    if by is not None:
        return per_group(lambda part: length_controlled_win_rate(win, length_a, length_b, data=part, cluster=cluster,
                                                                 ties=ties, ci_level=ci_level), data, by)
    res = resolve(data, {"length_a": length_a, "length_b": length_b}, cluster=cluster, labels={"win": win},
                  statistic="the length-controlled win rate")
    y = _win_outcome(res.labels["win"])
    d = res.values["length_a"] - res.values["length_b"]
    n_ties = int((y == 0.5).sum())
    keep = y != 0.5 if ties == "exclude" else np.ones(len(y), dtype=bool)
    y, d = y[keep], d[keep]
    groups = None if res.cluster is None else pd.factorize(pd.Series(res.cluster[keep], dtype=object))[0]
    n = len(y)
    z_crit = special.ndtri(1 - (1 - ci_level) / 2)
    se_text = (f"cluster-robust SE by {res.cluster_name or 'cluster'} ({len(np.unique(groups))} clusters)"
               if groups is not None else "HC0 robust SE")
    ctx = {"ties": ties, "n_ties": n_ties, "ci_level": ci_level, **res.context()}
    rows = []
    raw, raw_note = (_fit(y, np.ones((n, 1)), groups) if n and 0 < y.mean() < 1 else
                     (None, "every comparison has the same outcome" if n else "no comparisons"))
    raw_rate = float(y.mean()) if n else np.nan
    low = high = p_raw = np.nan
    if raw is not None:
        b0, se0 = raw.params[0], raw.bse[0]
        low, high, p_raw = special.expit(b0 - z_crit * se0), special.expit(b0 + z_crit * se0), raw.pvalues[0]
    rows.append(result_row("raw_win_rate", raw_rate, n=n, ci_low=low, ci_high=high, p_value=p_raw,
                           method=f"mean win (tie = {'0.5' if ties == 'half' else 'excluded'}); p: win rate = 0.5; "
                           f"CI: Wald on the logit scale, {se_text}", note=raw_note, **ctx))
    sd = float(d.std(ddof=1)) if n >= 2 else np.nan
    note = ""
    if not np.isfinite(sd) or sd == 0:
        note = "length difference has no variation: length coefficient not estimable"
    else:
        note = _separation(d / sd, y)
    fit = None
    if not note:
        fit, note = _fit(y, np.column_stack([np.ones(n), d / sd]), groups)
    method_glm = f"logistic GLM win ~ length difference / sd ({sd:.4g}); {se_text}"
    if fit is None:
        rows.append(result_row("length_coefficient", np.nan, n=n, method=method_glm, note=note, length_sd=sd, **ctx))
        rows.append(result_row("length_controlled_win_rate", np.nan, n=n, method=method_glm, note=note,
                               length_sd=sd, **ctx))
        return tidy_frame(rows)
    (b0, b1), (se0, se1) = fit.params, fit.bse
    rows.append(result_row("length_coefficient", b1, n=n, ci_low=b1 - z_crit * se1, ci_high=b1 + z_crit * se1,
                           p_value=fit.pvalues[1], method=f"log-odds per SD of length difference; {method_glm}; "
                           "CI: Wald", note=note, length_sd=sd, **ctx))
    rows.append(result_row("length_controlled_win_rate", special.expit(b0), n=n,
                           ci_low=special.expit(b0 - z_crit * se0), ci_high=special.expit(b0 + z_crit * se0),
                           p_value=fit.pvalues[0], method=f"expit(intercept): win probability at equal length; "
                           f"p: = 0.5; {method_glm}; CI: Wald on the logit scale, back-transformed (delta method)",
                           note=note, length_sd=sd, **ctx))
    return tidy_frame(rows)


def length_score_correlation(
    scores: Any,
    lengths: Any,
    *,
    data: pd.DataFrame | None = None,
    method: CorrelationMethod = "spearman",
    cluster: Any = None,
    by: By = None,
    n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Correlation of direct scores with answer length (does the judge reward longer answers?).

    ``by``: one row per group (``by="criterion"``).
    """
    if by is not None:
        return per_group(lambda part: length_score_correlation(
            scores, lengths, data=part, method=method, cluster=cluster, n_resamples=n_resamples, ci_level=ci_level,
            seed=seed), data, by, rows_of=judge_names(data, {"x": scores, "y": lengths}))
    res = resolve(data, {"x": scores, "y": lengths}, cluster=cluster, statistic="the length-score correlation")
    row = correlation_row(res, method, n_resamples=n_resamples, ci_level=ci_level, seed=seed,
                          metric=f"length_score_{method}")
    return tidy_frame([row])
