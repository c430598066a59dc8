"""The calibrated mean: judge scores mapped to the gold scale by cross-fitted isotonic regression, then PPI.

The labelled items are split into K folds (whole clusters per fold when items are clustered). For
each fold k an increasing isotonic map f_k from judge score to gold is fitted on the other folds; a
labelled item's calibrated score is f_k(score) of its own fold (out of fold), an unlabelled item's is
the mean of the K maps (cross-prediction, Zrnic & Candès 2024). The estimate is the PPI estimate
(λ = 1) on these calibrated scores: the mean calibrated score of the unlabelled items plus the mean
out-of-fold residual of the labelled ones, so a miscalibrated map is corrected by the residuals.

Its interval adds the calibrator's own uncertainty (as cje-eval does): the delete-one-fold jackknife
variance of the estimate, ``(K−1)/K · Σ_k (θ_k − θ̄)²`` with θ_k the estimate computed with map f_k
alone (for the unlabelled plug-in and the labelled residuals), is added to the PPI variance. (The
calibrator's first-order error cancels between plug-in and residuals, so the term is small when the
map is stable; jackknifing the plug-in alone would count that error twice.) A judge whose scores say nothing increasing
about gold gets a flat map; the estimate is then the classical mean, and a note says so.
"""

from __future__ import annotations

import numpy as np

from judgelab.stats.corrected.ppi import CorrectionError, Estimate, Sample, ppi_estimate, stratum_parts

__all__ = ["MIN_LABELLED_PER_FOLD", "IsotonicMap", "calibrated_estimate", "fold_assignment"]

MIN_LABELLED_PER_FOLD = 2  # an isotonic map fitted on fewer labels is noise


def fold_assignment(n: int, n_folds: int, rng: np.random.Generator, clusters: np.ndarray | None = None) -> np.ndarray:
    """A fold number per labelled item: random and balanced, whole clusters per fold when given."""
    if clusters is None:
        return rng.permutation(n) % n_folds
    units, inverse = np.unique(clusters, return_inverse=True)
    return (rng.permutation(len(units)) % n_folds)[inverse]


class IsotonicMap:
    """The increasing least-squares fit of y on x (pool-adjacent-violators), as scikit-learn's IsotonicRegression.

    Tied x values are pooled first (their mean y, weighted by count); predictions interpolate linearly
    between the fitted points and are clipped to the end values outside the fitted range.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        knots, inverse = np.unique(np.asarray(x, dtype=float), return_inverse=True)
        weights = np.bincount(inverse).astype(float)
        means = np.bincount(inverse, weights=np.asarray(y, dtype=float)) / weights
        values: list[float] = []
        block_w: list[float] = []
        sizes: list[int] = []
        for v, w in zip(means, weights, strict=True):
            values.append(float(v))
            block_w.append(float(w))
            sizes.append(1)
            while len(values) > 1 and values[-2] > values[-1]:  # pool adjacent violators
                w2 = block_w[-2] + block_w[-1]
                values[-2:] = [(values[-2] * block_w[-2] + values[-1] * block_w[-1]) / w2]
                block_w[-2:] = [w2]
                sizes[-2:] = [sizes[-2] + sizes[-1]]
        self.knots = knots
        self.values = np.repeat(values, sizes)

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.interp(np.asarray(x, dtype=float), self.knots, self.values)


def _fit(x: np.ndarray, y: np.ndarray) -> IsotonicMap:
    return IsotonicMap(x, y)


def calibrated_estimate(sample: Sample, *, n_folds: int = 5, seed: int = 0) -> Estimate:
    """Cross-fitted isotonic calibration of the judge to gold, then PPI with λ = 1 (see the module docstring)."""
    units = sample.n if sample.cluster_l is None else len(np.unique(sample.cluster_l))
    k = min(n_folds, units // MIN_LABELLED_PER_FOLD)
    if k < 2:
        what = "labelled items" if sample.cluster_l is None else "labelled clusters"
        raise CorrectionError(f"the calibrated estimate needs at least {2 * MIN_LABELLED_PER_FOLD} {what} for two "
                              f"cross-fitting folds; there are {units}")
    folds = fold_assignment(sample.n, k, np.random.default_rng(seed), sample.cluster_l)
    oof = np.empty(sample.n)
    per_fold_l = np.empty((k, sample.n))
    per_fold_u = np.empty((k, sample.n_unlabelled))
    for fold in range(k):
        held = folds == fold
        model = _fit(sample.yhat[~held], sample.y[~held])
        per_fold_l[fold] = model.predict(sample.yhat)
        oof[held] = per_fold_l[fold, held]
        per_fold_u[fold] = model.predict(sample.yhat_u) if sample.n_unlabelled else []
    calibrated = Sample(sample.y, oof, per_fold_u.mean(axis=0), sample.strata_l, sample.strata_u,
                        sample.cluster_l, sample.cluster_u)
    est = ppi_estimate(calibrated, tuned=False)
    by_fold = np.zeros(k)  # the whole estimate with map f_k alone (for the plug-in and the residuals)
    for w, in_l, in_u in stratum_parts(sample):
        by_fold += w * (sample.y[in_l] - per_fold_l[:, in_l]).mean(axis=1)
        if in_u.any():
            by_fold += w * per_fold_u[:, in_u].mean(axis=1)
    jackknife = (k - 1) / k * float(np.sum((by_fold - by_fold.mean()) ** 2))
    est.variance += jackknife
    est.extra_variance = jackknife
    est.detail = {"n_folds": k, "calibrator_variance": jackknife}
    full = _fit(sample.yhat, sample.y)
    if np.ptp(full.predict(np.concatenate([sample.yhat, sample.yhat_u]))) == 0:
        est.notes.append("the isotonic map from judge to gold is flat (the judge's scores carry no increasing "
                         "information about gold): the estimate is the classical mean")
    return est
