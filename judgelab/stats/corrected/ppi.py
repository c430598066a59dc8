"""Prediction-powered inference on arrays: the classical, PPI and PPI++ means, stratified and clustered.

The data are ``n`` labelled items (gold ``y``, judge ``yhat``) and ``N`` unlabelled items (judge
``yhat_u``). With a weight λ the estimate is ``λ·mean(yhat_u) + mean(y − λ·yhat)``: λ = 0 is the
classical mean of the gold labels, λ = 1 is PPI (Angelopoulos et al., Science 2023), and PPI++
(Angelopoulos, Duchi & Zrnic 2023) tunes λ to the data with ppi-python's rule
``λ = cov(y, yhat) / ((1 + n/N)·var(yhat over all items))`` clipped to [0, 1], so a judge that is
anti-correlated with gold gets λ = 0 (the classical estimate). Variances use ddof=0 and a normal
quantile, as ppi-python does, so without strata or clusters the interval equals its ``ppi_mean_ci``.

Strata (Fisch et al., NeurIPS 2024): each stratum h gets its own λ_h and estimate, combined with the
weights W_h = (n_h + N_h)/(n + N) (the stratum's share of all items), so labels may be spread over
strata in any proportion. Clusters (documents, questions): the estimate is a sum of per-item
contributions ψ_i (its linearisation), and the variance is the cluster-robust (CRV1) sum over clusters
of (Σ_{i in cluster} ψ_i)² times G/(G−1), with a t quantile on G−1 degrees of freedom; labelled and
unlabelled items of one cluster are summed together, so their correlation is carried.

:class:`Estimate` carries the per-item contributions so that differences of estimates (two systems on
the same prompts) get their covariance from the same cluster sums (:func:`difference`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special, stats

from judgelab.errors import JudgelabError

__all__ = ["CorrectionError", "Estimate", "Sample", "classical_estimate", "cluster_sums", "difference", "ppi_estimate", "ppi_lambda",
           "stratum_parts"]


class CorrectionError(JudgelabError, ValueError):
    """A judge-corrected estimate that cannot be computed from the input as given; says what to change."""


@dataclass(frozen=True)
class Sample:
    """Labelled and unlabelled items as arrays; strata and clusters as integer codes (None: absent).

    Cluster codes are shared between the labelled and unlabelled items (one code per cluster).
    """

    y: np.ndarray
    yhat: np.ndarray
    yhat_u: np.ndarray
    strata_l: np.ndarray | None = None
    strata_u: np.ndarray | None = None
    cluster_l: np.ndarray | None = None
    cluster_u: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.y)

    @property
    def n_unlabelled(self) -> int:
        return len(self.yhat_u)

    @property
    def n_clusters(self) -> int | None:
        if self.cluster_l is None:
            return None
        return len(np.unique(np.concatenate([self.cluster_l, self.cluster_u])))

    def subset(self, labelled: np.ndarray, unlabelled: np.ndarray) -> Sample:
        """The sample restricted to the given labelled and unlabelled positions (masks or indices)."""
        def pick(a: np.ndarray | None, idx: np.ndarray) -> np.ndarray | None:
            return None if a is None else a[idx]
        return Sample(self.y[labelled], self.yhat[labelled], self.yhat_u[unlabelled],
                      pick(self.strata_l, labelled), pick(self.strata_u, unlabelled),
                      pick(self.cluster_l, labelled), pick(self.cluster_u, unlabelled))


@dataclass
class Estimate:
    """A point estimate with the pieces of its interval.

    ``psi_l`` / ``psi_u``: each labelled / unlabelled item's contribution to the estimate's error
    (estimate − truth ≈ Σ ψ); ``variance`` the variance the interval uses (the cluster-robust or plain
    sum of ψ², plus ``extra_variance``, e.g. a calibrator's jackknife term); ``center`` the interval's
    centre (the estimate, except where a method shifts it, like Rogan-Gladen's adjusted interval).
    """

    estimate: float
    center: float
    variance: float
    df: float
    psi_l: np.ndarray
    psi_u: np.ndarray
    extra_variance: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def std_error(self) -> float:
        return float(np.sqrt(self.variance)) if self.variance >= 0 else float("nan")

    def quantile(self, ci_level: float) -> float:
        p = 0.5 + ci_level / 2
        return float(special.ndtri(p)) if not np.isfinite(self.df) else float(stats.t.ppf(p, self.df))

    def interval(self, ci_level: float) -> tuple[float, float]:
        half = self.quantile(ci_level) * self.std_error
        return self.center - half, self.center + half


def stratum_parts(sample: Sample) -> Iterator[tuple[float, np.ndarray, np.ndarray]]:
    """(weight W_h, labelled mask, unlabelled mask) per stratum; one stratum of weight 1 without strata."""
    if sample.strata_l is None:
        yield 1.0, np.ones(sample.n, dtype=bool), np.ones(sample.n_unlabelled, dtype=bool)
        return
    assert sample.strata_u is not None
    total = sample.n + sample.n_unlabelled
    for h in np.unique(np.concatenate([sample.strata_l, sample.strata_u])):
        in_l, in_u = sample.strata_l == h, sample.strata_u == h
        yield (int(in_l.sum()) + int(in_u.sum())) / total, in_l, in_u


def cluster_sums(sample: Sample, psi_l: np.ndarray, psi_u: np.ndarray) -> tuple[float, float]:
    """(variance, degrees of freedom) of Σψ: CRV1 over clusters (t, G−1 df), else Σψ² (normal)."""
    if sample.cluster_l is None:
        return float(np.sum(psi_l ** 2) + np.sum(psi_u ** 2)), float("inf")
    assert sample.cluster_u is not None
    codes = np.concatenate([sample.cluster_l, sample.cluster_u])
    _, dense = np.unique(codes, return_inverse=True)
    sums = np.bincount(dense, weights=np.concatenate([psi_l, psi_u]))
    g = len(sums)
    return float(g / (g - 1) * np.sum(sums ** 2)), float(g - 1)


def ppi_lambda(y: np.ndarray, yhat: np.ndarray, yhat_u: np.ndarray) -> float:
    """PPI++'s power-tuned λ for a mean, exactly as ppi-python computes it (clipped to [0, 1]).

    NaN when the judge gives one value on every item (no λ can use it).
    """
    n, big_n = len(y), len(yhat_u)
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var_all = float(np.var(np.concatenate([yhat, yhat_u]), ddof=1))
    if not var_all > 0:
        return float("nan")
    return float(np.clip(cov / ((1 + n / big_n) * var_all), 0.0, 1.0))


def _weighted_ppi(sample: Sample, lambdas: dict[int, float]) -> Estimate:
    """λ_h-weighted PPI per stratum, combined with the strata weights (λ = 0: classical)."""
    estimate = 0.0
    psi_l, psi_u = np.zeros(sample.n), np.zeros(sample.n_unlabelled)
    for k, (w, in_l, in_u) in enumerate(stratum_parts(sample)):
        lam = lambdas[k]
        y, yhat, yhat_u = sample.y[in_l], sample.yhat[in_l], sample.yhat_u[in_u]
        rectifier = y - lam * yhat
        part = float(rectifier.mean())
        psi_l[in_l] = w * (rectifier - part) / len(y)
        if lam and len(yhat_u):
            part += lam * float(yhat_u.mean())
            psi_u[in_u] = w * lam * (yhat_u - yhat_u.mean()) / len(yhat_u)
        estimate += w * part
    variance, df = cluster_sums(sample, psi_l, psi_u)
    return Estimate(estimate, estimate, variance, df, psi_l, psi_u)


def classical_estimate(sample: Sample) -> Estimate:
    """The mean of the gold labels (stratum-weighted with strata), ignoring the judge."""
    n_strata = sum(1 for _ in stratum_parts(sample))
    est = _weighted_ppi(sample, dict.fromkeys(range(n_strata), 0.0))
    est.detail["lambda"] = 0.0
    return est


def ppi_estimate(sample: Sample, *, tuned: bool) -> Estimate:
    """PPI (λ = 1) or PPI++ (λ tuned per stratum; a stratum without unlabelled items uses λ = 0)."""
    lambdas: dict[int, float] = {}
    notes: list[str] = []
    for k, (_, in_l, in_u) in enumerate(stratum_parts(sample)):
        y, yhat, yhat_u = sample.y[in_l], sample.yhat[in_l], sample.yhat_u[in_u]
        if not len(yhat_u):
            lambdas[k] = 0.0
            continue
        if not tuned:
            lambdas[k] = 1.0
            continue
        lam = ppi_lambda(y, yhat, yhat_u)
        if np.isnan(lam):
            notes.append("the judge gives one value on every item: PPI++ uses λ = 0 (the classical estimate)")
            lam = 0.0
        lambdas[k] = lam
    est = _weighted_ppi(sample, lambdas)
    est.detail["lambda"] = lambdas[0] if len(lambdas) == 1 else dict(lambdas)
    est.notes.extend(notes)
    return est


def difference(a: Estimate, b: Estimate,
               shared: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> tuple[float, float, float, float]:
    """(estimate, centre, variance, df) of a − b for two estimates on paired items.

    ``shared``: the pairing-unit (cluster) codes of a's labelled, a's unlabelled, b's labelled and b's
    unlabelled items in one coding; the covariance is the CRV1 cross-product of the two estimates'
    per-unit sums. Each estimate's own variance (with its extras and adjustments) is kept as it is.
    """
    ca_l, ca_u, cb_l, cb_u = shared
    codes = np.concatenate([ca_l, ca_u, cb_l, cb_u])
    _, dense = np.unique(codes, return_inverse=True)
    g = int(dense.max()) + 1
    na = len(ca_l) + len(ca_u)
    sum_a = np.bincount(dense[:na], weights=np.concatenate([a.psi_l, a.psi_u]), minlength=g)
    sum_b = np.bincount(dense[na:], weights=np.concatenate([b.psi_l, b.psi_u]), minlength=g)
    clustered = np.isfinite(a.df) or np.isfinite(b.df)
    covariance = (g / (g - 1) if clustered else 1.0) * float(np.sum(sum_a * sum_b))
    variance = a.variance + b.variance - 2 * covariance
    df = min(a.df, b.df) if clustered else float("inf")
    return a.estimate - b.estimate, a.center - b.center, variance, df
