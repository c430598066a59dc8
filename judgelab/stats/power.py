"""How many items does a judge study need? Sample sizes for a flip rate, a kappa and correlations.

Each function returns a tidy row whose ``estimate`` and ``n`` are the required number of items,
with the achieved power and every assumption written out in ``method`` / ``assumptions``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from judgelab.stats._inputs import StatsInputError
from judgelab.stats.correlation import Alternative
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["kappa_variance_factor", "n_for_correlation", "n_for_correlation_difference", "n_for_flip_rate",
           "n_for_kappa"]


def _z(p: float) -> float:
    return float(special.ndtri(p))


def _alpha_z(alpha: float, alternative: Alternative) -> float:
    return _z(1 - alpha / 2) if alternative == "two-sided" else _z(1 - alpha)


def _check(alpha: float, power: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise StatsInputError(f"alpha and power must lie in (0, 1), got alpha={alpha}, power={power}")


def _exact_binomial_power(ns: np.ndarray, rate: float, null_rate: float, alpha: float,
                          alternative: Alternative) -> np.ndarray:
    """Power of the exact binomial test at each n (two-sided: alpha/2 in each tail)."""
    power = np.zeros(len(ns))
    tail = alpha / 2 if alternative == "two-sided" else alpha
    if alternative in ("greater", "two-sided"):
        upper = stats.binom.isf(tail, ns, null_rate)  # reject when X > upper  (P0(X > upper) <= tail)
        power += stats.binom.sf(upper, ns, rate)
    if alternative in ("less", "two-sided"):
        lower = stats.binom.ppf(tail, ns, null_rate)  # smallest k with P0(X <= k) >= tail
        lower = np.where(stats.binom.cdf(lower, ns, null_rate) > tail, lower - 1, lower)  # reject when X <= lower
        power += np.where(lower >= 0, stats.binom.cdf(lower, ns, rate), 0.0)
    return power


def n_for_flip_rate(
    rate: float,
    null_rate: float,
    *,
    alpha: float = 0.05, power: float = 0.8, alternative: Alternative = "greater",
    max_n: int = 100_000,
) -> pd.DataFrame:
    """Items needed for an exact binomial test to detect a flip rate ``rate`` against ``null_rate``.

    Exact power is a sawtooth in n; the row reports the smallest n reaching ``power`` and, in
    ``n_stable``, the smallest n from which power never drops below it again (up to ``max_n``).
    """
    _check(alpha, power)
    if not (0 < rate < 1 and 0 < null_rate < 1) or rate == null_rate:
        raise StatsInputError(f"rate and null_rate must differ and lie in (0, 1), got {rate} and {null_rate}")
    if alternative == "greater" and rate < null_rate or alternative == "less" and rate > null_rate:
        raise StatsInputError(f"alternative={alternative!r} cannot detect rate {rate} against null {null_rate}")
    ns = np.arange(1, max_n + 1)
    achieved = _exact_binomial_power(ns, rate, null_rate, alpha, alternative)
    reached = achieved >= power
    assumptions = (f"independent items, each flipping with probability {rate} (null {null_rate}); exact binomial "
                   f"test, {alternative}{' with alpha/2 per tail' if alternative == 'two-sided' else ''}, alpha={alpha}")
    if not reached.any():
        return tidy_frame([result_row("n_required", np.nan, n=0, method="exact binomial power search",
                                      note=f"power {power} not reached up to n={max_n}", assumptions=assumptions)])
    first = int(ns[np.argmax(reached)])
    below = np.flatnonzero(~reached)
    stable = int(ns[below[-1] + 1]) if len(below) and below[-1] + 1 < len(ns) else first
    # normal approximation, for comparison with textbook formulas
    z_a, z_b = _alpha_z(alpha, alternative), _z(power)
    approx = ((z_a * np.sqrt(null_rate * (1 - null_rate)) + z_b * np.sqrt(rate * (1 - rate))) / (rate - null_rate)) ** 2
    return tidy_frame([result_row(
        "n_required", first, n=first, method="smallest n whose exact binomial test reaches the power",
        achieved_power=float(achieved[first - 1]), n_stable=stable, n_normal_approximation=int(np.ceil(approx)),
        alpha=alpha, power=power, alternative=alternative, rate=rate, null_rate=null_rate, assumptions=assumptions)])


def kappa_variance_factor(kappa: float, prevalence: float) -> float:
    """n * Var(kappa-hat) for two raters, binary labels, common prevalence (Bloch & Kraemer 1989)."""
    pq = prevalence * (1 - prevalence)
    return (1 - kappa) * ((1 - kappa) * (1 - 2 * kappa) + kappa * (2 - kappa) / (2 * pq))


def n_for_kappa(
    kappa: float,
    null_kappa: float = 0.0,
    *,
    prevalence: float = 0.5,
    alpha: float = 0.05, power: float = 0.8, alternative: Alternative = "greater",
) -> pd.DataFrame:
    """Items needed to show Cohen's kappa exceeds ``null_kappa`` when it is ``kappa`` (z-test, large sample)."""
    _check(alpha, power)
    if not 0 < prevalence < 1:
        raise StatsInputError(f"prevalence must lie in (0, 1), got {prevalence}")
    if kappa == null_kappa:
        raise StatsInputError("kappa and null_kappa must differ")
    if not (-1 <= kappa <= 1 and -1 <= null_kappa <= 1):
        raise StatsInputError(f"kappa and null_kappa must lie in [-1, 1], got {kappa} and {null_kappa}")
    v0, v1 = kappa_variance_factor(null_kappa, prevalence), kappa_variance_factor(kappa, prevalence)
    if not (v0 >= 0 and v1 >= 0):
        raise StatsInputError(f"the large-sample variance of kappa is negative at kappa={kappa if v1 < 0 else null_kappa} "
                              f"with prevalence {prevalence} (Bloch & Kraemer's formula holds for kappa above its "
                              "lower bound at that prevalence); choose another kappa or prevalence")
    z_a, z_b = _alpha_z(alpha, alternative), _z(power)
    n = int(np.ceil(((z_a * np.sqrt(v0) + z_b * np.sqrt(v1)) / (kappa - null_kappa)) ** 2))
    assumptions = (f"two raters, binary labels, both with prevalence {prevalence}; large-sample variance of kappa "
                   f"(Bloch & Kraemer 1989) under the null ({null_kappa}) and the alternative ({kappa}); z-test, "
                   f"{alternative}, alpha={alpha}; independent items")
    return tidy_frame([result_row("n_required", n, n=n, method="Bloch & Kraemer (1989) sample size for kappa",
                                  alpha=alpha, power=power, alternative=alternative, kappa=kappa,
                                  null_kappa=null_kappa, prevalence=prevalence, assumptions=assumptions)])


def n_for_correlation(
    r: float,
    null_r: float = 0.0,
    *,
    alpha: float = 0.05, power: float = 0.8, alternative: Alternative = "two-sided",
) -> pd.DataFrame:
    """Items needed to detect a correlation ``r`` against ``null_r`` (Fisher z, n - 3 variance)."""
    _check(alpha, power)
    if r == null_r or not (abs(r) < 1 and abs(null_r) < 1):  # written so that NaN fails too
        raise StatsInputError(f"r and null_r must differ and lie in (-1, 1), got {r} and {null_r}")
    effect = np.arctanh(r) - np.arctanh(null_r)
    n = int(np.ceil(((_alpha_z(alpha, alternative) + _z(power)) / effect) ** 2 + 3))
    return tidy_frame([result_row(
        "n_required", n, n=n, method="Fisher z sample size for one correlation", alpha=alpha, power=power,
        alternative=alternative, r=r, null_r=null_r,
        assumptions=f"bivariate normal scores (Pearson; approximately Spearman), independent items, {alternative}")])


def n_for_correlation_difference(
    r1: float,
    r2: float,
    *,
    r_between: float | None = None,
    alpha: float = 0.05, power: float = 0.8, alternative: Alternative = "two-sided",
) -> pd.DataFrame:
    """Items needed to detect r1 != r2 (two judges' correlations with humans), Fisher z.

    Without ``r_between``: independent samples (items per judge). With ``r_between`` (the
    correlation between the two judges on the same items): dependent correlations sharing the
    human variable, using Steiger's (1980) covariance of the two z values at the mean r.
    """
    _check(alpha, power)
    if r1 == r2 or not (abs(r1) < 1 and abs(r2) < 1):  # written so that NaN fails too
        raise StatsInputError(f"r1 and r2 must differ and lie in (-1, 1), got {r1} and {r2}")
    if r_between is not None and not abs(r_between) <= 1:
        raise StatsInputError(f"r_between must lie in [-1, 1], got {r_between}")
    effect = np.arctanh(r1) - np.arctanh(r2)
    factor = 2.0
    design = "independent samples (n items for each judge)"
    if r_between is not None:
        r_mean = (r1 + r2) / 2
        psi = r_between * (1 - 2 * r_mean**2) - 0.5 * r_mean**2 * (1 - 2 * r_mean**2 - r_between**2)
        factor = 2 - 2 * psi / (1 - r_mean**2) ** 2
        design = f"same items for both judges, judges correlating {r_between} (Steiger 1980 covariance)"
    n = int(np.ceil(factor * ((_alpha_z(alpha, alternative) + _z(power)) / effect) ** 2 + 3))
    context: dict[str, Any] = {"alpha": alpha, "power": power, "alternative": alternative, "r1": r1, "r2": r2,
                               "r_between": r_between if r_between is not None else np.nan}
    return tidy_frame([result_row(
        "n_required", n, n=n, method="Fisher z sample size for a difference of correlations",
        assumptions=f"{design}; bivariate normal scores; {alternative}", **context)])
