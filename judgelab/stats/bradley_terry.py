"""Bradley-Terry (and Davidson) maximum-likelihood fits on weighted battles, and the check that an MLE exists.

The model: for a battle of systems i (first) and j (second) with covariate differences x,
``d = theta_i - theta_j + beta . x`` on the natural-log (logit) scale.

- ``ties="half"`` / ``"drop"``: logistic likelihood on the outcome y (1 first wins, 0 second wins,
  0.5 a tie, which counts as half a win each): ``sum w [y log s(d) + (1 - y) log s(-d)]``, s the logistic
  function. With no ties (or ties dropped) this is the classical Bradley-Terry likelihood.
- ``ties="davidson"``: Davidson (1970): P(first wins) = e^(d/2) / D, P(second wins) = e^(-d/2) / D,
  P(tie) = nu / D with D = e^(d/2) + e^(-d/2) + nu; the tie parameter is fitted as log nu.

The negative log-likelihood is minimised by ``scipy.optimize.minimize(method="trust-exact")`` with its
analytic gradient and Hessian (the problem is concave, so Newton steps converge in a few iterations).
Coefficients are identified by fixing one system's coefficient at 0 during the fit; the caller shifts
them (to sum zero, or to a named reference) afterwards, which leaves every difference unchanged.

Without covariates an MLE exists exactly when the directed graph "i beat or tied j at least once" is
strongly connected (Ford 1957; Zermelo): :func:`existence_problem` says, in a sentence, why it is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, sparse, special
from scipy.sparse import csgraph

from judgelab.stats.battles import Battles, TiePolicy

__all__ = ["FitData", "collapse", "existence_problem", "fit", "win_probability"]

_GTOL = 1e-10
_MAX_COEFFICIENT = 50.0  # beyond this a logit coefficient is a diverging fit (separation), not an estimate


@dataclass(frozen=True)
class FitData:
    """Distinct battles (rows) with their multiplicities; ``design`` maps the free parameters to d."""

    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    x: np.ndarray
    n_systems: int


def collapse(battles: Battles) -> tuple[FitData, np.ndarray]:
    """Merge identical battles (same systems, outcome and covariates) into one row; also the row of each battle.

    Without covariates a tournament has at most 3 K^2 distinct battles however many were fought, so each
    fit (and each bootstrap resample, as a reweighting of these rows) costs O(K^2), not O(battles).
    """
    table = np.column_stack([battles.a, battles.b, battles.outcome, battles.covariates])
    distinct, row_of = np.unique(table, axis=0, return_inverse=True)
    data = FitData(a=distinct[:, 0].astype(np.int64), b=distinct[:, 1].astype(np.int64), outcome=distinct[:, 2],
                   x=distinct[:, 3:], n_systems=battles.n_systems)
    return data, row_of.ravel()


def _design(data: FitData, fixed: int) -> np.ndarray:
    """d as a linear map of the free parameters: +1 for the first system, -1 for the second, then covariates."""
    n = len(data.a)
    pair = np.zeros((n, data.n_systems))
    pair[np.arange(n), data.a] += 1.0
    pair[np.arange(n), data.b] -= 1.0
    return np.column_stack([np.delete(pair, fixed, axis=1), data.x])


def _pieces(params: np.ndarray, design: np.ndarray, data: FitData, w: np.ndarray,
            ties: TiePolicy) -> tuple[float, np.ndarray, np.ndarray]:
    """Log-likelihood, gradient and Hessian in the free parameters."""
    y = data.outcome
    if ties != "davidson":
        d = design @ params
        ll = float(w @ (y * special.log_expit(d) + (1.0 - y) * special.log_expit(-d)))
        s = special.expit(d)
        grad = design.T @ (w * (y - s))
        hess = -(design.T * (w * s * (1.0 - s))) @ design
        return ll, grad, hess
    d = design @ params[:-1]
    lam = params[-1]
    log_d = np.logaddexp(np.logaddexp(d / 2, -d / 2), lam)
    first, second, tie = (y == 1.0).astype(float), (y == 0.0).astype(float), (y == 0.5).astype(float)
    ll = float(w @ ((first - second) * d / 2 + tie * lam - log_d))
    p_first, p_second, p_tie = np.exp(d / 2 - log_d), np.exp(-d / 2 - log_d), np.exp(lam - log_d)
    diff = p_first - p_second
    grad = np.append(design.T @ (w * ((first - second) - diff) / 2), w @ (tie - p_tie))
    h_dd = -w * ((p_first + p_second) - diff**2) / 4
    h_dl = w * diff * p_tie / 2
    h_ll = -float(w @ (p_tie * (1.0 - p_tie)))
    k = design.shape[1]
    hess = np.empty((k + 1, k + 1))
    hess[:k, :k] = (design.T * h_dd) @ design
    hess[:k, k] = hess[k, :k] = design.T @ h_dl
    hess[k, k] = h_ll
    return ll, grad, hess


def fit(data: FitData, weights: np.ndarray, ties: TiePolicy, fixed: int = 0,
        start: np.ndarray | None = None) -> np.ndarray | None:
    """Maximum-likelihood ``[theta (K, theta[fixed] = 0), beta (P), log nu (Davidson only)]``; None if it diverges.

    ``weights``: the multiplicity of each row of ``data`` (a resample is a reweighting).
    """
    design = _design(data, fixed)
    k = design.shape[1] + (ties == "davidson")
    cache: dict[bytes, tuple[float, np.ndarray, np.ndarray]] = {}

    def pieces(params: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        key = params.tobytes()
        if key not in cache:
            cache.clear()
            cache[key] = _pieces(params, design, data, weights, ties)
        return cache[key]

    x0 = np.zeros(k) if start is None else np.delete(start, fixed)
    result = optimize.minimize(
        lambda p: -pieces(p)[0], x0, jac=lambda p: -pieces(p)[1], hess=lambda p: -pieces(p)[2],
        method="trust-exact", options={"gtol": _GTOL * max(1.0, float(weights.sum()))},
    )
    params = result.x
    _, grad, _ = pieces(params)
    scale = max(1.0, float(weights.sum()))
    if not (np.isfinite(params).all() and np.abs(params).max(initial=0.0) < _MAX_COEFFICIENT
            and np.abs(grad).max(initial=0.0) <= 1e-6 * scale):
        return None
    return np.insert(params, fixed, 0.0)


def win_probability(difference: np.ndarray, ties: TiePolicy, log_nu: float | np.ndarray | None = None) -> np.ndarray:
    """Expected score (a win 1, a tie 1/2) of a system ``difference`` above its opponent, covariates at 0."""
    if ties != "davidson":
        return special.expit(difference)
    log_d = np.logaddexp(np.logaddexp(difference / 2, -difference / 2), log_nu)
    return np.exp(difference / 2 - log_d) + 0.5 * np.exp(log_nu - log_d)


def existence_problem(data: FitData, weights: np.ndarray, systems: list[str], ties: TiePolicy) -> str:
    """Why the likelihood has no finite maximum on these weighted battles ('' when it has one; no covariates).

    A tie counts as a result in both directions; Davidson's tie parameter also needs both ties and decisive
    battles.
    """
    k = data.n_systems
    used = weights > 0
    a, b, y = data.a[used], data.b[used], data.outcome[used]
    met = sparse.coo_matrix((np.ones(len(a)), (a, b)), shape=(k, k))
    n_groups, group = csgraph.connected_components(met, directed=True, connection="weak")
    if n_groups > 1:
        parts = [", ".join(repr(systems[i]) for i in np.flatnonzero(group == g)) for g in range(n_groups)]
        return (f"the comparison graph is disconnected: {n_groups} groups of systems never met ("
                + " | ".join(f"{{{p}}}" for p in parts) + "), so their coefficients are not comparable; rank each "
                "group separately or add battles between them")
    beat = np.concatenate([a[y > 0], b[y < 1]]), np.concatenate([b[y > 0], a[y < 1]])  # winner -> loser edges
    edges = sparse.coo_matrix((np.ones(len(beat[0])), beat), shape=(k, k)).tocsr()
    n_parts, part = csgraph.connected_components(edges, directed=True, connection="strong")
    if n_parts > 1:
        # a group nobody outside it beats (or that beats nobody outside it): its coefficients run off to infinity
        into = np.zeros(n_parts, dtype=bool)
        out_of = np.zeros(n_parts, dtype=bool)
        rows, cols = edges.nonzero()
        cross = part[rows] != part[cols]
        out_of[part[rows][cross]] = True
        into[part[cols][cross]] = True
        # name the smallest such group: usually the one system that won (or lost) everything
        candidates = [(int((part == g).sum()), g, not into[g]) for g in range(n_parts) if not into[g] or not out_of[g]]
        size, group_code, never_loses = min(candidates)
        names = ", ".join(repr(systems[i]) for i in np.flatnonzero(part == group_code))
        if size == 1:
            verb = "never loses nor ties" if never_loses else "never wins nor ties"
            return (f"system {names} {verb} against the other systems, so its Bradley-Terry coefficient has no finite "
                    f"maximum-likelihood estimate; add battles it {'lost' if never_loses else 'won'}"
                    + (" (ties='drop' left its ties out)" if ties == "drop" else ""))
        verb = "never lose nor tie" if never_loses else "never win nor tie"
        return (f"the systems {names} {verb} against the other systems, so their Bradley-Terry coefficients have no "
                f"finite maximum-likelihood estimate; add battles they {'lost' if never_loses else 'won'}"
                + (" (ties='drop' left their ties out)" if ties == "drop" else ""))
    if ties == "davidson":
        tie_weight = float(weights[used] @ (data.outcome[used] == 0.5))
        if tie_weight == 0:
            return "no battle is a tie, so Davidson's tie parameter has no finite estimate; use ties='half'"
        if tie_weight == float(weights[used].sum()):
            return "every battle is a tie, so Davidson's tie parameter has no finite estimate; use ties='half'"
    return ""
