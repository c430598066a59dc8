"""Corrected means when the labelled items were drawn with unequal probabilities (active statistical inference).

Zrnic & Candès (ICML 2024, "Active statistical inference") label item i with a known probability π_i --
larger where the judge is less sure -- and reweight each labelled item by w_i = 1/π_i. Over the N judged items,
with the judge's value f on every item and gold y on the labelled set L, the estimate is

    λ·mean(f over all N) + Σ_L w·(y − λf) / Σ_L w,

the judge's mean plus the weighted (Hájek) mean of the residuals on the labelled items. Normalising by Σ w
rather than by N (the Horvitz-Thompson form) keeps the residuals centred: a judge biased by a constant, as judges
on a 1-5 scale often are, would otherwise make every reweighted residual large and the interval wide. With
equal probabilities it is PPI's estimate with the judge's mean taken over all items. The variance is
Σ_L w²(r − r̄_w)² / (Σ_L w)² + λ²·var(f)/N (r = y − λf; ddof 0, as ppi-python), the interval normal. λ = 0 is
the weighted mean of the labels ("classical"), λ = 1 weighted PPI ("ppi"), and "ppi++" takes the λ in [0, 1]
that minimises this variance, as the paper's power tuning does. Every π must be positive: an item that could
never be labelled is a hole no weight fills, which is why the selection mixes uniform probability in. The
Hájek ratio is consistent, with a bias of order 1/n.
"""

from __future__ import annotations

import numpy as np

from judgelab.stats.corrected.ppi import CorrectionError, Estimate, Sample

__all__ = ["WEIGHTED_METHODS", "weighted_estimate"]

WEIGHTED_METHODS: tuple[str, ...] = ("classical", "ppi", "ppi++")


def _tuned_lambda(w: np.ndarray, dy: np.ndarray, df: np.ndarray, var_f: float, total: int) -> float:
    """argmin over λ in [0, 1] of Σ w²(dy − λ·df)² / (Σ w)² + λ²·var_f / N (0 when nothing varies)."""
    scale = float(np.sum(w)) ** 2
    denominator = float(np.sum(w ** 2 * df ** 2)) / scale + var_f / total
    if not denominator > 0:
        return 0.0
    return float(np.clip(float(np.sum(w ** 2 * dy * df)) / scale / denominator, 0.0, 1.0))


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
    w = 1.0 / pi
    f_all = np.concatenate([sample.yhat, sample.yhat_u])
    total = len(f_all)
    var_f = float(np.var(f_all))
    dy = sample.y - np.sum(w * sample.y) / np.sum(w)
    df = sample.yhat - np.sum(w * sample.yhat) / np.sum(w)
    lam = {"classical": 0.0, "ppi": 1.0}.get(method)
    if lam is None:
        lam = _tuned_lambda(w, dy, df, var_f, total)
    residual = sample.y - lam * sample.yhat
    centre = float(np.sum(w * residual) / np.sum(w))
    estimate = lam * float(f_all.mean()) + centre
    # per-item contributions: the labelled items' weighted residuals, every item's share of the judge's mean
    psi_l = w * (residual - centre) / np.sum(w)
    psi_f = lam * (f_all - f_all.mean()) / total
    variance = float(np.sum(psi_l ** 2) + np.sum(psi_f ** 2))
    est = Estimate(estimate, estimate, variance, float("inf"), psi_l + psi_f[:sample.n], psi_f[sample.n:])
    est.detail["lambda"] = lam
    return est
