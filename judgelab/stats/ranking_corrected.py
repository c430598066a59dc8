"""Corrected rankings: a judge's verdict on every battle, a human (gold) verdict on a random subset.

:func:`rank_systems_corrected` fits Bradley-Terry coefficients by prediction-powered inference for an
M-estimator (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi & Zrnic 2023). With the
logistic loss ``l(theta; x, y) = log(1 + e^(x.theta)) - y x.theta`` (x: +1 for the first system, -1 for
the second; y: 1, 0 or 1/2 for a tie, i.e. ties as half a win each), n labelled battles (human y, judge
yhat) and N unlabelled battles (judge yhat only), the estimate minimises

    lambda/N sum_unlabelled l(theta; x, yhat) + 1/n sum_labelled [l(theta; x, y) - lambda l(theta; x, yhat)],

convex for lambda in [0, 1]: lambda = 0 is the classical fit on the human verdicts of the labelled
battles alone, lambda = 1 is PPI, and ``lam="tuned"`` is PPI++ (lambda chosen from the data to minimise
the summed variance of the reported coefficients, by ppi-python's rule, clipped to [0, 1]; it is
computed at the lambda = 1 fit, as ppi-python does). The interval is Wald with the sandwich variance
H^-1 [Cov_labelled(grad_human - lambda grad_judge) / n + lambda^2 Cov_unlabelled(grad_judge) / N] H^-1,
H the mean Hessian over all battles (over the labelled ones when lambda = 0), covariances with ddof 1
and a normal quantile: exactly ppi-python's ``ppi_logistic_ci``. With ``cluster=`` (prompts) the
per-battle contributions are summed per cluster (labelled and unlabelled battles of one prompt together)
and the variance is cluster-robust (CRV1, t quantile on G - 1 degrees of freedom), as the project's
corrected means do (:func:`judgelab.stats.corrected.ppi.cluster_sums`).

A win probability is the logistic function of a coefficient, and its interval is the coefficient's
interval mapped through the same (monotone) function, so it stays inside [0, 1]. The ``win_rate`` rows are
each system's share of its battles won (ties half) by human verdict, estimated by the one-number PPI of
:mod:`judgelab.stats.corrected.ppi` on the system's battles (PPI++'s lambda tuned per system).

The labelled battles must be a uniformly random subset of the battles: the intervals assume it.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from judgelab.stats.battles import read_battles, winner_outcomes
from judgelab.stats.bradley_terry import FitData, existence_problem
from judgelab.stats.corrected.ppi import (
    Estimate,
    Sample,
    _weighted_ppi,
    classical_estimate,
    cluster_sums,
    ppi_estimate,
)
from judgelab.stats.pairing import StatsInputError
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["rank_systems_corrected"]

Lambda = Literal["tuned"] | float
_MAX_COEFFICIENT = 50.0  # beyond this a logit coefficient is a diverging fit, not an estimate


def _loss_pieces(theta: np.ndarray, x_l: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_u: np.ndarray,
                 yhat_u: np.ndarray, lam: float) -> tuple[float, np.ndarray, np.ndarray]:
    """The rectified loss, its gradient and Hessian (see the module)."""
    n, big_n = len(y), len(yhat_u)
    d_l, d_u = x_l @ theta, x_u @ theta
    soft_l, soft_u = np.logaddexp(0.0, d_l), np.logaddexp(0.0, d_u)
    s_l, s_u = special.expit(d_l), special.expit(d_u)
    loss = float(np.sum(soft_l - y * d_l) / n - lam * np.sum(soft_l - yhat * d_l) / n)
    grad = x_l.T @ ((s_l - y) - lam * (s_l - yhat)) / n
    hess = (x_l.T * ((1 - lam) * s_l * (1 - s_l))) @ x_l / n
    if lam and big_n:
        loss += lam * float(np.sum(soft_u - yhat_u * d_u)) / big_n
        grad = grad + lam * x_u.T @ (s_u - yhat_u) / big_n
        hess = hess + lam * (x_u.T * (s_u * (1 - s_u))) @ x_u / big_n
    return loss, grad, hess


def _solve(x_l: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_u: np.ndarray, yhat_u: np.ndarray,
           lam: float) -> np.ndarray | None:
    """The minimiser of the rectified loss (free parameters), or None when the fit diverges.

    Newton's method with a backtracking line search: the loss is convex for lambda in [0, 1], and this
    plain loop is steadier here than scipy's trust-region solvers, whose subproblem can fail on
    nearly flat directions.
    """
    theta = np.zeros(x_l.shape[1])
    loss, grad, hess = _loss_pieces(theta, x_l, y, yhat, x_u, yhat_u, lam)
    for _ in range(200):
        if np.abs(grad).max(initial=0.0) <= 1e-11:
            break
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        size = 1.0
        while size > 1e-12:
            trial = theta - size * step
            trial_loss = _loss_pieces(trial, x_l, y, yhat, x_u, yhat_u, lam)[0]
            if trial_loss <= loss - 1e-4 * size * float(grad @ step):
                break
            size /= 2
        else:
            break
        theta = trial
        loss, grad, hess = _loss_pieces(theta, x_l, y, yhat, x_u, yhat_u, lam)
        if np.abs(theta).max(initial=0.0) >= _MAX_COEFFICIENT:
            return None
    if not (np.isfinite(theta).all() and np.abs(grad).max(initial=0.0) <= 1e-8):
        return None
    return theta


def _gradients(theta: np.ndarray, x_l: np.ndarray, y: np.ndarray, yhat: np.ndarray, x_u: np.ndarray,
               yhat_u: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-battle gradients (human labelled, judge labelled, judge unlabelled) and the inverse Hessian."""
    s_l, s_u = special.expit(x_l @ theta), special.expit(x_u @ theta)
    grads, grads_hat, grads_hat_u = x_l * (s_l - y)[:, None], x_l * (s_l - yhat)[:, None], x_u * (s_u - yhat_u)[:, None]
    x_all, s_all = (np.vstack([x_l, x_u]), np.concatenate([s_l, s_u])) if lam else (x_l, s_l)
    hessian = (x_all.T * (s_all * (1 - s_all))) @ x_all / len(s_all)
    return grads, grads_hat, grads_hat_u, np.linalg.inv(hessian)


def _tuned_lambda(grads: np.ndarray, grads_hat: np.ndarray, grads_hat_u: np.ndarray, inv_h: np.ndarray,
                  contrast: np.ndarray) -> float:
    """PPI++'s lambda minimising the summed variance of ``contrast @ theta`` (ppi-python's rule, clipped)."""
    n, big_n = len(grads), len(grads_hat_u)
    g_c, h_c = grads - grads.mean(axis=0), grads_hat - grads_hat.mean(axis=0)
    cov = (g_c.T @ h_c + h_c.T @ g_c) / n
    var_hat = np.atleast_2d(np.cov(np.vstack([grads_hat, grads_hat_u]).T))
    v = contrast @ inv_h
    denominator = 2 * (1 + n / big_n) * np.trace(v @ var_hat @ v.T)
    if not denominator > 0:
        return 0.0
    return float(np.clip(np.trace(v @ cov @ v.T) / denominator, 0.0, 1.0))


def _influence(grads: np.ndarray, grads_hat: np.ndarray, grads_hat_u: np.ndarray, inv_h: np.ndarray, lam: float,
               clustered: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each battle's contribution to (estimate - truth) of the free parameters (rows), labelled and unlabelled.

    Unclustered, the rows are scaled so that their sum of squares is the ddof-1 covariance ppi-python uses.
    """
    n, big_n = len(grads), len(grads_hat_u)
    rect = grads - lam * grads_hat
    psi_l = (rect - rect.mean(axis=0)) @ inv_h.T / n
    psi_u = lam * (grads_hat_u - grads_hat_u.mean(axis=0)) @ inv_h.T / big_n
    if not clustered:
        psi_l *= np.sqrt(n / (n - 1))
        psi_u *= np.sqrt(big_n / (big_n - 1)) if big_n > 1 else 0.0
    return psi_l, psi_u


def _quantile(ci_level: float, df: float) -> float:
    p = 0.5 + ci_level / 2
    return float(special.ndtri(p)) if not np.isfinite(df) else float(stats.t.ppf(p, df))


def rank_systems_corrected(
    battles: pd.DataFrame,
    *,
    gold: str = "human",
    system_a: str = "model_a",
    system_b: str = "model_b",
    winner: str = "winner",
    labelled: str | None = None,
    cluster: str | None = None,
    ties: Literal["half"] = "half",
    reference: str | None = None,
    lam: Lambda = "tuned",
    classical: bool = True,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Prediction-powered Bradley-Terry coefficients, win probabilities and win rates (see the module).

    ``battles``: one row per battle with the judge's verdict in ``winner`` (A, B or tie, as
    :func:`judgelab.stats.rank_systems` reads it) on every battle and the human verdict in ``gold`` on the
    labelled ones. ``labelled``: a boolean column marking the labelled battles (each must have a gold
    verdict; gold on other rows is not used); by default a battle is labelled when its gold verdict is
    present, as :func:`judgelab.stats.corrected_mean` marks its labelled items. ``ties``: only "half".
    ``reference``: a system fixed at 0 (win probabilities against it); None makes the coefficients sum to 0.
    ``lam``: "tuned" (PPI++) or a number in [0, 1] (1: PPI, 0: classical). ``classical``: also return the
    classical rows (labelled battles' human verdicts alone, lambda = 0) for comparison; they are left out
    when the estimate is itself classical (lam=0, or PPI++ tuned to lambda = 0: its rows say lambda 0).

    Returns the tidy frame with ``system``, ``estimator`` ("ppi++", "ppi" or "ppi(lambda)", and
    "classical"), ``lambda``, ``n`` (labelled battles of the system; all labelled battles on summary
    rows) and ``n_unlabelled``; metrics ``bt_coefficient``, ``win_probability`` and ``win_rate``.
    No labelled battle, a system without a labelled battle, unknown gold verdicts, and a labelled subset
    whose human verdicts have no finite Bradley-Terry fit are refused (:class:`StatsInputError`).
    """
    if ties != "half":
        raise StatsInputError(f"rank_systems_corrected counts a tie as half a win (ties='half'); got ties={ties!r}")
    if not 0 < ci_level < 1:
        raise StatsInputError(f"ci_level must be between 0 and 1, got {ci_level}")
    tuned = isinstance(lam, str)
    if tuned and lam != "tuned" or not tuned and not (isinstance(lam, int | float) and not isinstance(lam, bool)
                                                        and 0 <= lam <= 1):
        raise StatsInputError(f"lam must be 'tuned' (PPI++) or a number from 0 (classical) to 1 (PPI), got {lam!r}")
    # the project's battle rules (systems, judge winners, clusters), on every battle
    read_battles(battles, system_a=system_a, system_b=system_b, winner=winner, cluster=cluster)
    for name, what in ((gold, "gold"), (labelled, "labelled")):
        if name is not None and name not in battles.columns:
            raise StatsInputError(f"{what}={name!r} is not a column of the battles frame; name the column of the "
                                  f"{'human verdicts' if what == 'gold' else 'labelled-battle marks'}")
    if labelled is None:
        mark = battles[gold].notna().to_numpy()
    else:
        if not pd.api.types.is_bool_dtype(battles[labelled]):
            raise StatsInputError(f"labelled={labelled!r} must be a boolean column (True: the battle has a human "
                                  f"verdict), not dtype {battles[labelled].dtype}")
        mark = battles[labelled].to_numpy(dtype=bool)
        empty = mark & battles[gold].isna().to_numpy()
        if empty.any():
            raise StatsInputError(f"{int(empty.sum())} battles marked labelled have no gold verdict in {gold!r} "
                                  f"(first at row {battles.index[empty][0]!r}); fill them in or unmark them")
    n, big_n = int(mark.sum()), int((~mark).sum())
    if n < 2:
        raise StatsInputError(f"{n} labelled battle(s) (gold verdicts in {gold!r}): a corrected ranking needs "
                              f"human verdicts on a random subset of at least 2 battles")
    if big_n == 0:
        raise StatsInputError(f"every battle has a gold verdict in {gold!r}, so the judge adds nothing: rank on the "
                              f"human verdicts with rank_systems(battles, winner={gold!r})")
    first = battles[system_a].astype(str).to_numpy()
    second = battles[system_b].astype(str).to_numpy()
    judge = winner_outcomes(battles[winner], winner)
    human = np.full(len(battles), np.nan)
    human[mark] = winner_outcomes(battles[gold][mark], gold)
    systems = sorted(set(first) | set(second))
    code = {s: i for i, s in enumerate(systems)}
    a, b = np.array([code[s] for s in first]), np.array([code[s] for s in second])
    k = len(systems)
    unseen = [s for i, s in enumerate(systems) if not np.any(mark & ((a == i) | (b == i)))]
    if unseen:
        raise StatsInputError(f"system(s) {', '.join(map(repr, unseen))} never appear in a labelled battle, so the "
                              f"human verdicts say nothing about them; label some of their battles")
    lab = FitData(a=a[mark], b=b[mark], outcome=human[mark], x=np.zeros((n, 0)), n_systems=k)
    problem = existence_problem(lab, np.ones(n), systems, "half")
    if problem:
        raise StatsInputError(f"in the labelled battles' human verdicts, {problem}")
    if reference is not None and str(reference) not in systems:
        raise StatsInputError(f"reference {reference!r} is not one of the systems ({', '.join(map(repr, systems))})")
    ref = None if reference is None else systems.index(str(reference))
    fixed = 0 if ref is None else ref
    full = np.zeros((len(battles), k))
    full[np.arange(len(battles)), a] += 1.0
    full[np.arange(len(battles)), b] -= 1.0
    x = np.delete(full, fixed, axis=1)
    # reported coefficients = contrast @ free parameters (the fixed system inserted at 0, then shifted)
    embed = np.delete(np.eye(k), fixed, axis=1)
    contrast = embed - (embed.mean(axis=0, keepdims=True) if ref is None else 0.0)
    cl_l = cl_u = None
    cluster_text = ""
    if cluster is not None:
        codes = pd.factorize(battles[cluster].astype(str), sort=True)[0]
        n_clusters = int(codes.max()) + 1
        if n_clusters < 2:
            raise StatsInputError(f"every battle is in one {cluster!r} cluster: a cluster-robust interval needs at "
                                  f"least 2 clusters")
        cl_l, cl_u = codes[mark], codes[~mark]
        cluster_text = f"; cluster-robust over {cluster!r} ({n_clusters} clusters, t on {n_clusters - 1} df)"
    arrays = (x[mark], human[mark], judge[mark], x[~mark], judge[~mark])
    versus = (f"system {systems[ref]!r} (coefficient fixed at 0)" if ref is not None
              else "an average system (coefficients sum to 0)")
    counts_l = np.array([int(np.sum(mark & ((a == i) | (b == i)))) for i in range(k)])
    counts_u = np.array([int(np.sum(~mark & ((a == i) | (b == i)))) for i in range(k)])

    def fit_rows(estimator: str, weight: float, weight_text: str, note: str = "") -> list[dict[str, Any]]:
        theta = _solve(*arrays, weight)
        if theta is None:
            raise StatsInputError(f"the {estimator} Bradley-Terry fit has no finite estimate on these battles (with "
                                  f"lambda={weight:g} the rectified loss is unbounded: the labelled battles' "
                                  f"correction outweighs the judge's unlabelled verdicts); use lam='tuned' or a "
                                  f"smaller lam")
        pieces = _gradients(theta, *arrays, weight)
        psi_l, psi_u = _influence(*pieces, weight, cluster is not None)
        coefficients = contrast @ theta
        shared = Sample(arrays[1], arrays[2], arrays[4], None, None, cl_l, cl_u)
        fit_text = (f"{weight_text}, Bradley-Terry logit scale, ties as half a win, identified against {versus}; "
                    f"Wald {ci_level:.0%} from the sandwich variance{cluster_text}")
        rows = []
        for i in np.argsort(-coefficients, kind="stable"):
            variance, df = cluster_sums(shared, psi_l @ contrast[i], psi_u @ contrast[i])
            half = _quantile(ci_level, df) * np.sqrt(variance)
            low, high = coefficients[i] - half, coefficients[i] + half
            if ref is not None and i == ref:
                low = high = 0.0
            common = {"system": systems[i], "estimator": estimator, "lambda": weight, "n_unlabelled": counts_u[i],
                      "ci_level": ci_level,
                      "note": join_notes("the reference: fixed at 0" if i == ref else "", note)}
            rows.append(result_row("bt_coefficient", coefficients[i], n=counts_l[i], method=fit_text,
                                   ci_low=low, ci_high=high, **common))
            rows.append(result_row("win_probability", special.expit(coefficients[i]), n=counts_l[i],
                                   method=f"logistic of the coefficient (against {versus}), interval mapped "
                                          f"through it; {weight_text}", ci_low=special.expit(low),
                                   ci_high=special.expit(high), **common))
        return rows

    def rate_rows(estimator: str, weight: float | None, weight_text: str) -> list[dict[str, Any]]:
        rows = []
        for i, name in enumerate(systems):
            mine = (a == i) | (b == i)
            score_j = np.where(a == i, judge, 1.0 - judge)
            score_h = np.where(a == i, human, 1.0 - human)
            in_l, in_u = mine & mark, mine & ~mark
            sample = Sample(score_h[in_l], score_j[in_l], score_j[in_u], None, None,
                            None if cluster is None else codes[in_l], None if cluster is None else codes[in_u])
            common = {"system": name, "estimator": estimator, "n_unlabelled": int(in_u.sum()), "ci_level": ci_level}
            groups = sample.n_clusters if cluster is not None else sample.n
            if sample.n < 2 or (groups is not None and groups < 2):
                rows.append(result_row("win_rate", np.nan, n=sample.n, method=f"{weight_text}: share of its battles "
                                       "won", note="fewer than 2 labelled battles (or clusters) of this system: no "
                                       "interval", **{"lambda": np.nan}, **common))
                continue
            est: Estimate = (classical_estimate(sample) if weight == 0.0 else
                             ppi_estimate(sample, tuned=True) if weight is None else
                             _weighted_ppi(sample, {0: weight}))
            used = float(est.detail.get("lambda", weight if weight is not None else np.nan))
            low, high = est.interval(ci_level)
            rows.append(result_row("win_rate", est.estimate, n=sample.n, ci_low=low, ci_high=high,
                                   method=f"{weight_text}: share of its battles won by human verdict (ties half), "
                                          f"one-number PPI per system{cluster_text or ', normal quantile'}",
                                   **{"lambda": used}, **common, note="; ".join(est.notes)))
        return rows

    fit_note = ""
    if tuned:
        start, at = _solve(*arrays, 1.0), 1.0
        if start is None:
            # the lambda = 1 loss is unbounded here (its labelled part is linear in theta); tune at the classical fit
            start, at = _solve(*arrays, 0.0), 0.0
            fit_note = ("the PPI fit (lambda = 1) has no finite estimate on these battles, so lambda was tuned at "
                        "the classical estimate")
        if start is None:
            raise StatsInputError("neither the PPI nor the classical Bradley-Terry fit has a finite estimate on these "
                                  "battles, so PPI++ cannot tune lambda; add labelled battles")
        weight = _tuned_lambda(*_gradients(start, *arrays, at)[:4], contrast)
        name, text = "ppi++", f"prediction-powered (PPI++, lambda={weight:.3g} power-tuned as ppi-python)"
    else:
        weight = float(lam)  # type: ignore[arg-type]
        name = "ppi" if weight == 1.0 else "classical" if weight == 0.0 else f"ppi(lambda={weight:g})"
        text = f"prediction-powered (lambda={weight:g})"
    rows = fit_rows(name, weight, text, fit_note)
    rows += rate_rows(name, None if tuned else weight,
                      "prediction-powered (PPI++, lambda tuned per system)" if tuned else text)
    if classical and weight != 0.0:
        classical_text = "classical (labelled battles' human verdicts alone, lambda=0)"
        rows += fit_rows("classical", 0.0, classical_text) + rate_rows("classical", 0.0, classical_text)
    frame = tidy_frame(rows, defaults={"system": "", "estimator": ""})
    frame["n_unlabelled"] = frame["n_unlabelled"].astype("int64")
    return frame
