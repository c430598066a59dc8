"""The Rogan-Gladen correction of a binary pass rate, with an interval that carries the judge's error rates.

A binary judge with sensitivity q1 = P(judge 1 | gold 1) and specificity q0 = P(judge 0 | gold 0)
passes a share p = q1·θ + (1 − q0)·(1 − θ) of items whose true pass rate is θ, so
``θ = (p + q0 − 1) / (q0 + q1 − 1)`` (Rogan & Gladen 1978). p is the judge's pass rate on the
unlabelled items, q0 and q1 are measured on the labelled ones (as judgy does), and the estimate is
clipped to [0, 1]. It is undefined when q0 + q1 <= 1 (a judge no better than chance): that raises.

The interval is Lee et al.'s (2025, "How to correctly report LLM-as-a-judge evaluations", arXiv
2511.21140): the delta-method variance of θ over all three estimated rates,
``[p(1−p)/N + (1−θ)²q0(1−q0)/m0 + θ²q1(1−q1)/m1] / (q0+q1−1)²``, evaluated at add-z²/2 (p) and
add-one (q0, q1) smoothed rates and shifted by their second-order term, so it does not collapse when
a measured rate is 0 or 1 (the plain Wald interval then under-covers; ``interval="wald"`` gives it for
comparison). With strata, each stratum is corrected on its own (its own q0, q1) and the strata are
combined with their weights; with clusters, the variance is multiplied by the design effect of the
linearised estimator (cluster-robust over independent) and the quantile is t on G−1 df.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import special

from judgelab.stats.corrected.ppi import CorrectionError, Estimate, Sample, cluster_sums, stratum_parts

__all__ = ["RoganGladenInterval", "error_rates", "rogan_gladen_estimate"]

RoganGladenInterval = Literal["adjusted", "wald"]


def error_rates(y: np.ndarray, yhat: np.ndarray) -> tuple[float, float, int, int]:
    """(specificity q0, sensitivity q1, gold negatives m0, gold positives m1) of a binary judge."""
    pos, neg = y == 1, y == 0
    m1, m0 = int(pos.sum()), int(neg.sum())
    q1 = float(yhat[pos].mean()) if m1 else float("nan")
    q0 = float(1 - yhat[neg].mean()) if m0 else float("nan")
    return q0, q1, m0, m1


def _check_rates(q0: float, q1: float, m0: int, m1: int, where: str) -> None:
    if not m1 or not m0:
        missing = "positives (gold 1)" if not m1 else "negatives (gold 0)"
        rate = "sensitivity" if not m1 else "specificity"
        raise CorrectionError(f"the labelled items{where} hold no gold {missing}, so the judge's {rate} cannot be "
                              "measured and the Rogan-Gladen correction is undefined; label items of both kinds")
    if q0 + q1 <= 1:
        raise CorrectionError(
            f"the judge's sensitivity + specificity{where} is {q1:.3f} + {q0:.3f} = {q0 + q1:.3f} <= 1: it is no "
            "better than chance, so the Rogan-Gladen correction is undefined (no number is returned); use "
            "method='ppi++' or 'calibrated', which fall back to the gold labels")


def _adjusted(p: float, q0: float, q1: float, big_n: int, m0: int, m1: int, z: float) -> tuple[float, float]:
    """(centre, variance) of Lee et al.'s smoothed delta-method interval."""
    z2 = z * z
    p_s, q0_s, q1_s = (big_n * p + z2 / 2) / (big_n + z2), (m0 * q0 + 1) / (m0 + 2), (m1 * q1 + 1) / (m1 + 2)
    n_s, m0_s, m1_s = big_n + z2, m0 + 2, m1 + 2
    d_s = q0_s + q1_s - 1
    theta = (p_s + q0_s - 1) / d_s
    shift = 2 * z2 * (-(1 - theta) * q0_s * (1 - q0_s) / m0_s + theta * q1_s * (1 - q1_s) / m1_s)
    var = (p_s * (1 - p_s) / n_s + (1 - theta) ** 2 * q0_s * (1 - q0_s) / m0_s
           + theta ** 2 * q1_s * (1 - q1_s) / m1_s) / d_s ** 2
    return theta + shift, var


def rogan_gladen_estimate(sample: Sample, *, ci_level: float = 0.95,
                          interval: RoganGladenInterval = "adjusted") -> Estimate:
    """The Rogan-Gladen pass rate of a 0/1 judge against 0/1 gold labels (see the module docstring)."""
    if interval not in ("adjusted", "wald"):
        raise CorrectionError(f"interval must be 'adjusted' or 'wald', not {interval!r}")
    z = float(special.ndtri(0.5 + ci_level / 2))
    estimate = center = variance = 0.0
    psi_l, psi_u = np.zeros(sample.n), np.zeros(sample.n_unlabelled)
    rates: dict[str, float] = {}
    parts = list(stratum_parts(sample))
    for k, (w, in_l, in_u) in enumerate(parts):
        y, yhat, yhat_u = sample.y[in_l], sample.yhat[in_l], sample.yhat_u[in_u]
        where = f" of stratum {k}" if len(parts) > 1 else ""
        if not len(yhat_u):
            raise CorrectionError(f"stratum {k} has no unlabelled items: the judge's pass rate there cannot be "
                                  "corrected; merge it with another stratum or use method='classical'")
        q0, q1, m0, m1 = error_rates(y, yhat)
        _check_rates(q0, q1, m0, m1, where)
        p = float(yhat_u.mean())
        d = q0 + q1 - 1
        theta = float(np.clip((p + q0 - 1) / d, 0.0, 1.0))
        pos, neg = y == 1, y == 0
        psi_u[in_u] = w * (yhat_u - p) / (len(yhat_u) * d)
        local = np.zeros(len(y))
        local[neg] = (1 - theta) * ((1 - yhat[neg]) - q0) / (m0 * d)
        local[pos] = -theta * (yhat[pos] - q1) / (m1 * d)
        psi_l[in_l] = w * local
        if interval == "adjusted":
            c, v = _adjusted(p, q0, q1, len(yhat_u), m0, m1, z)
        else:
            c, v = theta, (p * (1 - p) / len(yhat_u) + (1 - theta) ** 2 * q0 * (1 - q0) / m0
                           + theta ** 2 * q1 * (1 - q1) / m1) / d ** 2
        estimate += w * theta
        center += w * c
        variance += w * w * v
        if len(parts) == 1:
            rates = {"sensitivity": q1, "specificity": q0, "judge_pass_rate": p, "n_gold_positive": m1,
                     "n_gold_negative": m0}
    df = float("inf")
    notes: list[str] = []
    if sample.cluster_l is not None:
        independent = float(np.sum(psi_l ** 2) + np.sum(psi_u ** 2))
        clustered, df = cluster_sums(sample, psi_l, psi_u)
        if independent > 0:
            variance *= clustered / independent
        else:
            notes.append("no design effect could be measured (every contribution is 0): the interval is not "
                         "widened for clusters")
    est = Estimate(estimate, center, variance, df, psi_l, psi_u, detail=dict(rates), notes=notes)
    return est
