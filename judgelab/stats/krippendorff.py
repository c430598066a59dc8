"""Krippendorff's alpha (nominal, ordinal, interval) for any number of raters with missing ratings.

alpha = 1 - D_o / D_e over *pairable* values (units with at least two ratings). Written in
per-unit sums so that a bootstrap over units is a matrix product:

    alpha = 1 - (n - 1) * sum_u sum_ck n_uc n_uk d_ck / (m_u - 1)  /  sum_ck n_c n_k d_ck

with n_uc the count of value c in unit u, m_u the unit's ratings, n_c the pooled counts and
d_ck the squared distance of the level (nominal: c != k; interval: (c - k)^2; ordinal: the
squared count of ranks between c and k, which depends on the pooled counts).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.stats._inputs import ratings_matrix
from judgelab.stats.agreement import label_codes
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Interval, Seed, bootstrap
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["AlphaLevel", "krippendorff_alpha"]

AlphaLevel = Literal["nominal", "ordinal", "interval"]


def _unit_counts(matrix: np.ndarray, level: AlphaLevel) -> tuple[np.ndarray, np.ndarray, int]:
    """(pairable units x values counts, the ordered values, units dropped as unpairable)."""
    present = ~pd.isna(matrix)
    pairable = present.sum(axis=0) >= 2
    sub, mask = matrix[:, pairable], present[:, pairable]
    values = sub.T[mask.T]
    if level != "nominal":
        try:
            values = values.astype(float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{level} Krippendorff's alpha needs numeric ratings: {exc}") from exc
    (codes,), categories = label_codes([values])
    unit_of_value = np.repeat(np.arange(sub.shape[1]), mask.sum(axis=0))
    counts = np.zeros((sub.shape[1], len(categories)))
    np.add.at(counts, (unit_of_value, codes), 1)
    return counts, np.asarray(categories, dtype=object), int((~pairable).sum())


def _alpha_from_counts(unit_counts: np.ndarray, weights: np.ndarray, level: AlphaLevel,
                       values: np.ndarray) -> np.ndarray:
    """alpha of each resample; ``weights`` is (B, units): how often each unit was drawn."""
    m_u = unit_counts.sum(axis=1)
    pooled = weights @ unit_counts  # (B, k)
    n = pooled.sum(axis=1)
    scaled = unit_counts / (m_u - 1)[:, None]
    if level == "ordinal":
        # coincidences summed over drawn units; distance depends on each resample's pooled counts
        coincidence = np.einsum("bu,uc,uk->bck", weights, scaled, unit_counts)
        cum = np.cumsum(pooled, axis=1)
        between = cum[:, None, :] - cum[:, :, None] + pooled[:, :, None]  # sum_{g=c..k} n_g for c <= k
        delta = (np.abs(between) - (pooled[:, :, None] + pooled[:, None, :]) / 2) ** 2
        upper = np.triu(np.ones(delta.shape[1:]), k=1)
        delta = delta * upper + np.transpose(delta * upper, (0, 2, 1))
        observed = np.einsum("bck,bck->b", coincidence, delta)
        expected = np.einsum("bc,bck,bk->b", pooled, delta, pooled)
    else:
        if level == "interval":
            v = values.astype(float)
            delta = (v[:, None] - v[None, :]) ** 2
        else:
            delta = 1.0 - np.eye(len(values))
        per_unit = np.einsum("uc,ck,uk->u", scaled, delta, unit_counts)
        observed = weights @ per_unit
        expected = np.einsum("bc,ck,bk->b", pooled, delta, pooled)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1) * observed / expected
    alpha[expected <= 0] = np.nan
    return alpha


def krippendorff_alpha(
    ratings: Any = None,
    *,
    data: pd.DataFrame | None = None, item: str = "item_id", rater: str = "judge", value: str = "score",
    level: AlphaLevel = "nominal",
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Krippendorff's alpha; ``ratings`` raters x units (NaN = missing) or long ``data``; CI resamples units."""
    if level not in ("nominal", "ordinal", "interval"):
        raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
    matrix, _, n_unscored = ratings_matrix(ratings, data, item=item, rater=rater, value=value,
                                           layout="raters x units (the krippendorff package's layout)")
    if ratings is None:
        matrix = matrix.T  # pivoted items x raters; alpha reads raters x units
    unit_counts, values, n_unpairable = _unit_counts(matrix, level)
    n_units = unit_counts.shape[0]

    def stat(idx: np.ndarray) -> np.ndarray:
        offsets = (np.arange(idx.shape[0]) * n_units)[:, None]
        weights = np.bincount((idx + offsets).ravel(), minlength=idx.shape[0] * n_units).reshape(-1, n_units)
        return _alpha_from_counts(unit_counts, weights.astype(float), level, values)

    boot = bootstrap(stat, n_units, interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed,
                     return_distribution=False)
    note = "" if n_units == 0 or np.isfinite(boot.estimate) else "alpha undefined: no variation among pairable values"
    context: dict[str, Any] = {"n_pairable_values": int(unit_counts.sum()), "n_units_unpairable": n_unpairable,
                               "n_raters": matrix.shape[0]}
    if n_unscored is not None:
        context["n_unscored_excluded"] = n_unscored
    row = result_row(f"krippendorff_alpha_{level}", boot.estimate, n=n_units,
                     method=f"Krippendorff's alpha ({level}) over units with >= 2 ratings; CI: {boot.method} over units",
                     note=join_notes(note, boot.note), **boot.fields(), **context)
    return tidy_frame([row])
