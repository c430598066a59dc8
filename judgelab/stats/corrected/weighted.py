"""Corrected means when the labelled items were drawn with unequal probabilities (active statistical inference).

Zrnic & Candès (ICML 2024, "Active statistical inference") label item i with a known probability π_i --
larger where the judge is less sure -- and reweight each labelled residual by 1/π_i. Over all N judged items,
with ξ_i = 1 when item i was labelled,

    Z_i = λ·f_i + (y_i − λ·f_i)·ξ_i / π_i,        estimate = mean(Z),      variance = var(Z) / N,

which is unbiased for the mean of y whatever λ, provided every π_i > 0 (an item that could never be labelled
is a hole no weight fills: the selection mixes uniform probability in for that reason). λ = 0 is the
Horvitz-Thompson mean of the labels ("classical"), λ = 1 is weighted PPI ("ppi"), and "ppi++" takes the λ in
[0, 1] minimising the plug-in variance of Z, as the paper's power tuning does. The interval is normal, as in
the paper; it treats the draws as independent (Poisson sampling), which is conservative for a fixed-size
draw without replacement.
"""

from __future__ import annotations

import numpy as np

from judgelab.stats.corrected.ppi import CorrectionError, Estimate, Sample

__all__ = ["WEIGHTED_METHODS", "weighted_estimate"]

WEIGHTED_METHODS: tuple[str, ...] = ("classical", "ppi", "ppi++")


def _tuned_lambda(a: np.ndarray, b: np.ndarray) -> float:
    """argmin over λ in [0, 1] of var(a + λ·b): −cov(a, b) / var(b), clipped (0 when b is constant)."""
    var_b = float(np.var(b))
    if not var_b > 0:
        return 0.0
    return float(np.clip(-np.mean((a - a.mean()) * (b - b.mean())) / var_b, 0.0, 1.0))


def weighted_estimate(sample: Sample, pi: np.ndarray, method: str) -> Estimate:
    """The inverse-probability weighted estimate of ``method`` ("classical", "ppi", "ppi++").

    ``pi``: the inclusion probability of each labelled item of ``sample``, in its order.
    """
    if method not in WEIGHTED_METHODS:
        raise CorrectionError(f"with weights= (inclusion probabilities) the methods are {', '.join(WEIGHTED_METHODS)}; "
                              f"{method!r} assumes a uniformly drawn labelled set")
    if sample.strata_l is not None or sample.cluster_l is not None:
        raise CorrectionError("weights= (inclusion probabilities) cannot be combined with strata= or cluster=; the "
                              "probabilities already carry the design")
    pi = np.asarray(pi, dtype=float)
    if len(pi) != sample.n or not np.all((pi > 0) & (pi <= 1)):
        raise CorrectionError("every labelled item needs an inclusion probability in (0, 1]; an item drawn with "
                              "probability 0 cannot be reweighted")
    total = sample.n + sample.n_unlabelled
    f = np.concatenate([sample.yhat, sample.yhat_u])
    labelled_weight = np.concatenate([1.0 / pi, np.zeros(sample.n_unlabelled)])
    y = np.concatenate([sample.y, np.zeros(sample.n_unlabelled)])
    a = y * labelled_weight  # the Horvitz-Thompson part
    b = f * (1.0 - labelled_weight)  # what the judge adds: zero in expectation for each item
    lam = {"classical": 0.0, "ppi": 1.0}.get(method)
    if lam is None:
        lam = _tuned_lambda(a, b)
    z = a + lam * b
    estimate = float(z.mean())
    psi = (z - estimate) / total
    variance = float(np.sum(psi ** 2))
    est = Estimate(estimate, estimate, variance, float("inf"), psi[:sample.n], psi[sample.n:])
    est.detail["lambda"] = lam
    return est
