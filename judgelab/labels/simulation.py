"""Do the labelling strategies cover, and how wide are their intervals? Seeded simulations with a known truth.

Each data set is ``n_items`` items with a gold value y (the estimand: its mean over all items) and a judge value
f whose error size varies from item to item, and the judge's uncertainty u (what "active" is given) tracks that
size:

- ``binary``: y ~ Bernoulli(0.35); the judge is right with probability c (its confidence): c ~ U(0.95, 1) on
  70% of the items (easy ones), U(0.5, 0.75) on the others; u = sqrt(1 − c);
- ``1-5``: y uniform on 1..5; f = y + N(0, σ²) rounded and clipped to 1..5, σ ~ U(0.1, 0.4) on 70% of the items
  and U(0.8, 1.6) on the others; u = σ.

So the judge's uncertainty is informative: it says where its errors are. Where it is not (u unrelated to the
error), "active" reduces to a noisier "random".

``budget`` items are labelled under each strategy -- "random" (PPI++ on a simple random sample), "stratified"
(stratified PPI++ over the judge's value, proportional allocation), "active" (probabilities from u mixed with
uniform, the weighted estimator of :mod:`judgelab.stats.corrected.weighted`) -- drawn by the same functions
``stats.select_for_labelling`` uses, and each interval either holds the mean of y or not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import special

from judgelab.labels.questions import LabelError
from judgelab.stats.corrected.means import estimate_method
from judgelab.stats.corrected.ppi import Sample
from judgelab.stats.corrected.weighted import weighted_estimate
from judgelab.stats.selection import inclusion_probabilities, stratified_allocation, systematic_sample
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["SCALES", "Scale", "released_coverage", "selection_coverage", "simulated_data"]

Scale = Literal["binary", "1-5"]
SCALES: tuple[str, ...] = ("binary", "1-5")


def simulated_data(scale: Scale, n_items: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray,
                                                                                  np.ndarray]:
    """(gold y, judge f, judge uncertainty u) for one data set (see the module)."""
    if scale == "binary":
        y = rng.binomial(1, 0.35, n_items).astype(float)
        easy = rng.random(n_items) < 0.7
        confidence = np.where(easy, rng.uniform(0.95, 1.0, n_items), rng.uniform(0.5, 0.75, n_items))
        f = np.where(rng.random(n_items) < confidence, y, 1.0 - y)
        return y, f, np.sqrt(1.0 - confidence)
    y = rng.integers(1, 6, n_items).astype(float)
    easy = rng.random(n_items) < 0.7
    sigma = np.where(easy, rng.uniform(0.1, 0.4, n_items), rng.uniform(0.8, 1.6, n_items))
    f = np.clip(np.round(y + rng.normal(0.0, sigma)), 1, 5)
    return y, f, sigma


def _interval(strategy: str, y: np.ndarray, f: np.ndarray, u: np.ndarray, budget: int, method: str,
              ci_level: float, rng: np.random.Generator) -> tuple[float, float]:
    n = len(y)
    if strategy == "active":
        pi = inclusion_probabilities(u, budget)
        chosen = systematic_sample(pi, rng)
    elif strategy == "stratified":
        chosen, pi = stratified_allocation(f, budget, rng)
    else:
        chosen = rng.choice(n, budget, replace=False)
        pi = np.full(n, budget / n)
    labelled = np.zeros(n, dtype=bool)
    labelled[chosen] = True
    if strategy == "stratified":
        _, codes = np.unique(f, return_inverse=True)
        sample = Sample(y[labelled], f[labelled], f[~labelled], codes[labelled], codes[~labelled])
    else:
        sample = Sample(y[labelled], f[labelled], f[~labelled])
    est = weighted_estimate(sample, pi[labelled], method) if strategy == "active" else estimate_method(sample, method)
    return est.interval(ci_level)


def selection_coverage(n_sims: int = 200, *, scales: Sequence[Scale] = SCALES,
                       strategies: Sequence[str] = ("random", "stratified", "active"), n_items: int = 400,
                       budget: int = 40, method: str = "ppi++", ci_level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Coverage of each strategy's interval over ``n_sims`` seeded data sets per scale, with its mean width.

    One ``coverage`` row per scale and strategy: ``estimate`` the share of intervals holding the true mean,
    ``ci_low`` / ``ci_high`` its Wilson 95% interval, ``mean_width``, and ``width_vs_random`` (the mean width
    relative to "random" on the same data sets). Every strategy sees the same data sets.
    """
    rows: list[dict] = []
    for scale in scales:
        hits = {s: 0 for s in strategies}
        widths: dict[str, list[float]] = {s: [] for s in strategies}
        for k in range(n_sims):
            rng = np.random.default_rng([seed, SCALES.index(scale), k])
            y, f, u = simulated_data(scale, n_items, rng)
            for strategy in strategies:
                low, high = _interval(strategy, y, f, u, budget, method, ci_level, rng)
                hits[strategy] += int(low <= y.mean() <= high)
                widths[strategy].append(high - low)
        rows += _coverage_rows(hits, widths, n_sims, scale, seed, ci_level,
                               lambda strategy: f"{method} intervals holding the mean of all {n_items} gold values, "
                               f"{budget} labels drawn {strategy!r}, over {n_sims} seeded data sets")
    return tidy_frame(rows)


def _coverage_rows(hits: dict[str, int], widths: dict[str, list[float]], n_sims: int, scale: str, seed: int,
                   ci_level: float, what: Callable[[str], str]) -> list[dict]:
    """One coverage row per strategy: the share with its Wilson 95% interval, mean width, width vs random."""
    z = float(special.ndtri(0.975))
    base = float(np.mean(widths["random"])) if "random" in widths else float("nan")
    rows = []
    for strategy in hits:
        p = hits[strategy] / n_sims
        centre = (p + z * z / (2 * n_sims)) / (1 + z * z / n_sims)
        half = z * np.sqrt(p * (1 - p) / n_sims + z * z / (4 * n_sims ** 2)) / (1 + z * z / n_sims)
        width = float(np.mean(widths[strategy]))
        rows.append(result_row(
            "coverage", p, ci_low=centre - half, ci_high=centre + half, n=n_sims,
            method=f"share of {ci_level:.0%} " + what(strategy) + "; Wilson 95% interval",
            scale=scale, strategy=strategy, nominal=ci_level, mean_width=width, width_vs_random=width / base,
            seed=seed))
    return rows


def released_coverage(judge: Sequence[float], gold: Sequence[float], uncertainty: Sequence[float], *,
                      budget: int = 40, n_sims: int = 200, strategies: Sequence[str] = ("random", "active"),
                      method: str = "ppi++", ci_level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Repeated labelling plans on a released data set: the judge's value, the released human label and the
    judge's uncertainty per item (aligned arrays); each of ``n_sims`` seeded draws labels ``budget`` items per
    strategy, and its interval either holds the mean of every human label or not. Rows as
    :func:`selection_coverage` (``scale`` is "released")."""
    y, f, u = (np.asarray(v, dtype=float) for v in (gold, judge, uncertainty))
    if not len(y) == len(f) == len(u) or not np.all(np.isfinite(np.concatenate([y, f, u]))):
        raise LabelError("judge, gold and uncertainty must be finite values for the same items")
    widths: dict[str, list[float]] = {s: [] for s in strategies}
    hits = {s: 0 for s in strategies}
    for k in range(n_sims):
        rng = np.random.default_rng([seed, 99, k])
        for strategy in strategies:
            low, high = _interval(strategy, y, f, u, budget, method, ci_level, rng)
            hits[strategy] += int(low <= y.mean() <= high)
            widths[strategy].append(high - low)
    return tidy_frame(_coverage_rows(hits, widths, n_sims, "released", seed, ci_level,
                                     lambda strategy: f"{method} intervals holding the mean of all {len(y)} released "
                                     f"labels, {budget} labels drawn {strategy!r}, over {n_sims} seeded draws"))
