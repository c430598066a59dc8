"""How many gold labels do I need? Interval widths projected from a pilot, per correction method.

A pilot table (the judge on every item, gold on a first batch) gives the variance components each
method's interval is made of; the width at n labels (the other ``n_total − n`` items unlabelled) is
then ``2·z·sqrt(V(n)·deff)``:

- classical: V = σ²(gold)/n;
- ppi: V = σ²(gold − judge)/n + σ²(judge)/(n_total − n);
- ppi++: V at PPI++'s λ = cov/(σ²(judge)·(1 + n/(n_total − n))) clipped to [0, 1] of
  [σ²(gold) − 2λ·cov + λ²σ²(judge)]/n + λ²σ²(judge)/(n_total − n);
- rogan_gladen: the delta-method variance with m1 = θ·n gold positives and m0 = (1−θ)·n negatives, at
  the pilot's sensitivity, specificity, pass rate and θ (Lee et al. 2025);
- calibrated: ppi's formula on the cross-fitted isotonic calibration of the pilot (residuals out of fold).

``deff`` is the pilot's design effect for the method (cluster-robust over independent variance, 1
without ``cluster=``), held at the pilot's value for every n. That is right when future labels are drawn
the way the pilot's were per cluster (e.g. whole clusters labelled); when labels are drawn item by item,
a larger n puts more labels in each cluster and raises the design effect, so projections beyond the
pilot's n are optimistic. With ``cluster=`` every row's note says so and gives the pilot's labels per
cluster (size-weighted mean). :func:`label_budget` returns the smallest n whose projected width is at most
``target_width`` (NaN with a note when no n up to ``n_total − 1`` reaches it); :func:`projected_width`
the width at given n. Projections assume future labels are drawn at random like the pilot's; they are
only as good as the pilot's variance estimates (a pilot of 50–100 labels is a sensible start).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from judgelab.stats.corrected.calibrated_mean import IsotonicMap, calibrated_estimate, fold_assignment
from judgelab.stats.corrected.means import (
    METHODS,
    CorrectedInput,
    Positive,
    corrected_inputs,
    estimate_method,
)
from judgelab.stats.corrected.ppi import CorrectionError, Sample
from judgelab.stats.corrected.rogan_gladen import error_rates
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["label_budget", "projected_width"]

Variance = Callable[[np.ndarray], np.ndarray]  # n labels -> variance


def _unclustered(s: Sample) -> Sample:
    return Sample(s.y, s.yhat, s.yhat_u)


def _design_effect(sample: Sample, method: str) -> float:
    if sample.cluster_l is None:
        return 1.0
    clustered = estimate_method(sample, method).variance
    plain = estimate_method(_unclustered(sample), method).variance
    return clustered / plain if plain > 0 else 1.0


def _calibrated_residuals(sample: Sample, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold calibrated scores of the labelled items and the mean-map scores of all items."""
    k = min(5, sample.n // 2)
    folds = fold_assignment(sample.n, k, np.random.default_rng(seed))
    oof = np.empty(sample.n)
    every = np.concatenate([sample.yhat, sample.yhat_u])
    mapped = np.zeros(len(every))
    for fold in range(k):
        held = folds == fold
        model = IsotonicMap(sample.yhat[~held], sample.y[~held])
        oof[held] = model.predict(sample.yhat[held])
        mapped += model.predict(every) / k
    return sample.y - oof, mapped


def _variance_function(sample: Sample, method: str, n_total: int, seed: int) -> tuple[Variance, str]:
    y, yhat, all_hat = sample.y, sample.yhat, np.concatenate([sample.yhat, sample.yhat_u])
    var_y = float(np.var(y, ddof=1))
    if method == "classical":
        return (lambda n: var_y / n), f"σ²(gold) = {var_y:.4g}"
    if method == "ppi":
        var_r, var_h = float(np.var(y - yhat, ddof=1)), float(np.var(all_hat, ddof=1))
        return (lambda n: var_r / n + var_h / (n_total - n)), f"σ²(gold − judge) = {var_r:.4g}, σ²(judge) = {var_h:.4g}"
    if method == "ppi++":
        var_h, var_hl = float(np.var(all_hat, ddof=1)), float(np.var(yhat, ddof=1))
        cov = float(np.cov(y, yhat, ddof=1)[0, 1])

        def ppi_pp(n: np.ndarray) -> np.ndarray:
            big = n_total - n
            lam = np.clip(cov / (var_h * (1 + n / big)), 0, 1) if var_h > 0 else np.zeros_like(n, dtype=float)
            return (var_y - 2 * lam * cov + lam ** 2 * var_hl) / n + lam ** 2 * var_h / big
        return ppi_pp, (f"σ²(gold) = {var_y:.4g}, cov = {cov:.4g}, σ²(judge) = {var_hl:.4g} (labelled), "
                        f"{var_h:.4g} (all)")
    if method == "rogan_gladen":
        est = estimate_method(_unclustered(sample), "rogan_gladen")
        q0, q1, _, _ = error_rates(y, yhat)
        theta, p, d = est.estimate, float(all_hat.mean()), q0 + q1 - 1
        th = min(max(theta, 1e-3), 1 - 1e-3)  # a pilot rate of 0 or 1 would promise free labels

        def rg(n: np.ndarray) -> np.ndarray:
            return (p * (1 - p) / (n_total - n) + (1 - th) ** 2 * q0 * (1 - q0) / (n * (1 - th))
                    + th ** 2 * q1 * (1 - q1) / (n * th)) / d ** 2
        return rg, f"sensitivity {q1:.3f}, specificity {q0:.3f}, judge pass rate {p:.3f}, θ {theta:.3f}"
    residual, mapped = _calibrated_residuals(_unclustered(sample), seed)
    var_r, var_m = float(np.var(residual, ddof=1)), float(np.var(mapped, ddof=1))
    calibrated_estimate(_unclustered(sample), seed=seed)  # the same input checks as the estimate
    return (lambda n: var_r / n + var_m / (n_total - n)), (f"σ²(gold − calibrated) = {var_r:.4g}, "
                                                          f"σ²(calibrated) = {var_m:.4g}")


def _pilot(pilot: pd.DataFrame, judge: str, gold: Any, value: str | None, positive: Positive,
           cluster: Any) -> CorrectedInput:
    [(_, inp)] = corrected_inputs(pilot, judge=judge, gold=gold, value=value, positive=positive, cluster=cluster)
    if inp.sample.n < 10:
        raise CorrectionError(f"the pilot has {inp.sample.n} labelled items; a projection needs at least 10")
    if not inp.sample.n_unlabelled:
        raise CorrectionError("the pilot has a gold label on every item: nothing unlabelled to project from "
                              "(use method='classical', or include the judged items you have not labelled)")
    return inp


def _methods(method: str | Sequence[str]) -> list[str]:
    methods = list(METHODS) if method == "all" else [method] if isinstance(method, str) else list(method)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise CorrectionError(f"unknown method(s) {unknown}; known: {', '.join(METHODS)}")
    return methods


def _held_design_effect_note(sample: Sample) -> str:
    """With clusters: the design effect is held at the pilot's, and what that assumes."""
    if sample.cluster_l is None:
        return ""
    per_cluster = np.bincount(sample.cluster_l)
    per_cluster = per_cluster[per_cluster > 0]
    weighted = float((per_cluster**2).sum() / per_cluster.sum())
    return (f"design effect held at the pilot's ({weighted:.3g} labels per cluster, size-weighted, over "
            f"{len(per_cluster)} labelled clusters): right if future labels fill clusters as the pilot's do; "
            "if they are drawn item by item, more labels per cluster raise it and a projection beyond the "
            "pilot's n is optimistic")


def _curves(pilot: pd.DataFrame, judge: str, gold: Any, method: str | Sequence[str], value: str | None,
            positive: Positive, cluster: Any, n_total: int | None, seed: int
            ) -> tuple[CorrectedInput, int, list[tuple[str, Variance, float, str]]]:
    inp = _pilot(pilot, judge, gold, value, positive, cluster)
    total = n_total or inp.sample.n + inp.sample.n_unlabelled
    out = []
    for m in _methods(method):
        estimate_method(inp.sample, m)  # the pilot must support the method (binary judge, rates > chance ...)
        fn, text = _variance_function(inp.sample, m, total, seed)
        out.append((m, fn, _design_effect(inp.sample, m), text))
    return inp, total, out


def projected_width(pilot: pd.DataFrame, *, judge: str, gold: Any = "gold", n_labels: Sequence[int],
                    method: str | Sequence[str] = ("classical", "ppi++"), n_total: int | None = None,
                    value: str | None = None, positive: Positive = None, cluster: Any = None,
                    ci_level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """The interval width each method is projected to reach with ``n_labels`` gold labels (module docstring)."""
    inp, total, curves = _curves(pilot, judge, gold, method, value, positive, cluster, n_total, seed)
    z = float(special.ndtri(0.5 + ci_level / 2))
    held = _held_design_effect_note(inp.sample)
    rows = []
    for m, fn, deff, text in curves:
        for n in n_labels:
            if not 2 <= n < total:
                raise CorrectionError(f"n_labels must be between 2 and n_total − 1 = {total - 1}, not {n}")
            width = 2 * z * float(np.sqrt(fn(np.array([float(n)]))[0] * deff))
            rows.append(result_row("projected_width", width, n=int(n), method=f"projected {ci_level:.0%} interval "
                                   f"width of {m} from a pilot of {inp.sample.n} labels; {text}; design effect "
                                   f"{deff:.3g}", estimator=m, n_labels=int(n), n_total=total, design_effect=deff,
                                   n_pilot_labelled=inp.sample.n, ci_level=ci_level, note=held))
    return tidy_frame(rows)


def label_budget(pilot: pd.DataFrame, *, judge: str, gold: Any = "gold", target_width: float,
                 method: str | Sequence[str] = ("classical", "ppi++"), n_total: int | None = None,
                 value: str | None = None, positive: Positive = None, cluster: Any = None,
                 ci_level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """The number of gold labels each method needs for an interval no wider than ``target_width``.

    ``pilot``: a judgments table with the judge on every item and gold on a first batch; ``n_total``:
    the number of items the final study will judge (default: the pilot's). One ``labels_needed`` row
    per method: ``estimate`` the labels needed (NaN with a note when unreachable), ``width_at_n``.
    """
    if not target_width > 0:
        raise CorrectionError(f"target_width must be positive, not {target_width}")
    inp, total, curves = _curves(pilot, judge, gold, method, value, positive, cluster, n_total, seed)
    z = float(special.ndtri(0.5 + ci_level / 2))
    held = _held_design_effect_note(inp.sample)
    grid = np.arange(2, total, dtype=float)
    rows = []
    for m, fn, deff, text in curves:
        widths = 2 * z * np.sqrt(fn(grid) * deff)
        hit = np.flatnonzero(widths <= target_width)
        desc = (f"smallest n with projected {ci_level:.0%} width <= {target_width:g} for {m}, from a pilot of "
                f"{inp.sample.n} labels among {inp.sample.n + inp.sample.n_unlabelled} items; {text}; design "
                f"effect {deff:.3g}; the other n_total − n items unlabelled")
        if len(hit):
            n_needed = int(grid[hit[0]])
            rows.append(result_row("labels_needed", n_needed, n=inp.sample.n, method=desc, estimator=m,
                                   target_width=target_width, width_at_n=float(widths[hit[0]]), n_total=total,
                                   design_effect=deff, ci_level=ci_level, note=held))
        else:
            best = int(np.nanargmin(widths))
            rows.append(result_row("labels_needed", np.nan, n=inp.sample.n, method=desc, estimator=m,
                                   target_width=target_width, width_at_n=float(widths[best]), n_total=total,
                                   design_effect=deff, ci_level=ci_level,
                                   note=join_notes(f"unreachable: the narrowest projected width is "
                                                   f"{widths[best]:.4g} (at n = {int(grid[best])} of {total} "
                                                   "items); judge more items or widen the target", held)))
    return tidy_frame(rows)
