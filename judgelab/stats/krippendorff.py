"""Krippendorff's alpha (nominal, ordinal, interval) for any number of raters with missing ratings.

alpha = 1 - D_o / D_e over *pairable* values (units with at least two ratings). Written in
per-unit sums so that a bootstrap over units only reweights units:

    alpha = 1 - (n - 1) * sum_u sum_ck n_uc n_uk d_ck / (m_u - 1)  /  sum_ck n_c n_k d_ck

with n_uc the count of value c in unit u, m_u the unit's ratings, n_c the pooled counts and
d_ck the squared distance of the level (nominal: c != k; interval: (c - k)^2; ordinal: the
squared count of ranks between c and k, which depends on the pooled counts).

Every distance used here is a squared difference of positions (interval: the values; ordinal:
each value's mid-rank among the pooled values, n_<c + n_c / 2 -- Krippendorff's ordinal metric is
exactly the squared difference of mid-ranks), so both sums reduce to weighted variances:
sum_ck n_uc n_uk d_ck = 2 m_u sum_c n_uc (x_c - mean_u)^2 (nominal: m_u^2 - sum_c n_uc^2). A
resample therefore costs O(distinct values per unit + categories), never O(categories^2): the
ordinal bootstrap with a thousand distinct values runs in bounded memory.

alpha depends on the units only through how often each distinct *unit pattern* (the unit's multiset of
values) occurs: 3 raters on 5 levels give at most 35 patterns however many units there are. When the
patterns are few (at most :data:`judgelab.stats.bootstrap.TABLE_MAX_CELLS` and one per two units), alpha is a
:class:`~judgelab.stats.bootstrap.TableStatistic` over pattern counts, so the bootstrap draws multinomial
pattern counts (the same distribution as drawing units) and a resample costs O(patterns), not O(units).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.stats._inputs import (
    Aggregate,
    By,
    Layout,
    StatsInputError,
    choose_raters,
    merge_note,
    per_group,
    ratings_matrix,
)
from judgelab.stats.agreement import check_long, label_codes, with_note
from judgelab.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    TABLE_MAX_CELLS,
    IndexStatistic,
    Interval,
    Seed,
    TableStatistic,
    bootstrap,
)
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["AlphaLevel", "krippendorff_alpha"]

AlphaLevel = Literal["nominal", "ordinal", "interval"]
_BATCH_ELEMENTS = 1_000_000  # resamples x max(entries, units, categories) per step: ~8 MB per array


@dataclass(frozen=True)
class _Units:
    """The pairable units as (unit, value code, count) entries, sorted by unit."""

    unit: np.ndarray  # entry -> unit
    code: np.ndarray  # entry -> value code
    count: np.ndarray  # entry -> how often the unit holds the value (float)
    m: np.ndarray  # unit -> number of ratings
    unit_starts: np.ndarray  # first entry of each unit
    by_code: np.ndarray  # entry positions sorted by code
    code_starts: np.ndarray  # first position (in by_code) of each code
    positions: np.ndarray | None  # interval level: the values, centred; else None
    n_unpairable: int

    @property
    def n_units(self) -> int:
        return len(self.m)

    @property
    def n_categories(self) -> int:
        return len(self.code_starts)


def _units(matrix: np.ndarray, level: AlphaLevel) -> _Units:
    """Pairable units (rows with >= 2 ratings) of an items x raters matrix as sparse entries."""
    present = ~pd.isna(matrix)
    pairable = present.sum(axis=1) >= 2
    sub, mask = matrix[pairable], present[pairable]
    values = sub[mask]  # row-major: grouped by unit
    if level != "nominal":
        try:
            values = values.astype(float)
        except (TypeError, ValueError) as exc:
            raise StatsInputError(f"{level} Krippendorff's alpha needs numeric ratings: {exc}") from exc
    (codes,), categories = label_codes([values])
    k = max(len(categories), 1)
    unit_of_value = np.repeat(np.arange(sub.shape[0]), mask.sum(axis=1))
    cells, count = np.unique(unit_of_value * k + codes, return_counts=True)
    unit, code = cells // k, cells % k
    by_code = np.argsort(code, kind="stable")
    positions = None
    if level == "interval":
        v = np.asarray(categories, dtype=float)
        positions = v - v.mean()  # distances are shift-invariant; centring keeps the sums accurate
    return _Units(unit=unit, code=code, count=count.astype(float), m=mask.sum(axis=1).astype(float),
                  unit_starts=np.flatnonzero(np.r_[True, np.diff(unit) > 0]), by_code=by_code,
                  code_starts=np.flatnonzero(np.r_[True, np.diff(code[by_code]) > 0]), positions=positions,
                  n_unpairable=int((~pairable).sum()))


def _spread(counts: np.ndarray, x: np.ndarray, starts: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """sum over each group's entries of count * (x - group mean)^2, for (B, entries) counts and positions x."""
    means = np.add.reduceat(counts * x, starts, axis=1) / totals
    group_of_entry = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, x.shape[1]]))
    return np.add.reduceat(counts * (x - means[:, group_of_entry]) ** 2, starts, axis=1)


def _alpha(u: _Units, level: AlphaLevel, weights: np.ndarray) -> np.ndarray:
    """alpha of each resample; ``weights`` is (B, units): how often each unit was drawn."""
    drawn = weights[:, u.unit] * u.count  # (B, entries): pairable values per entry
    pooled = np.add.reduceat(drawn[:, u.by_code], u.code_starts, axis=1)  # (B, categories)
    n = pooled.sum(axis=1)
    if level == "nominal":
        per_unit = (u.m**2 - np.add.reduceat(u.count**2, u.unit_starts)) / (u.m - 1)
        observed = weights @ per_unit
        expected = n**2 - np.sum(pooled**2, axis=1)
        scale = 1.0
    else:
        if level == "interval":
            assert u.positions is not None
            pos = np.broadcast_to(u.positions, pooled.shape)
        else:  # ordinal: each value's mid-rank among this resample's pooled values
            pos = np.cumsum(pooled, axis=1) - pooled / 2
        with np.errstate(invalid="ignore", divide="ignore"):
            expected = 2 * n * _spread(pooled, pos, np.array([0]), n[:, None])[:, 0]
        scale = np.max(pos**2, axis=1)  # the squared distances' order of magnitude
        if level == "interval":
            per_unit = 2 * u.m * _spread(u.count[None, :], u.positions[u.code][None, :], u.unit_starts, u.m)[0]
            observed = weights @ (per_unit / (u.m - 1))
        else:
            entry_pos = pos[:, u.code]
            within = _spread(np.broadcast_to(u.count, entry_pos.shape), entry_pos, u.unit_starts, u.m)
            observed = np.einsum("bu,bu->b", weights, 2 * u.m * within / (u.m - 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1) * observed / expected
    alpha[~(expected > 1e-12 * n**2 * scale)] = np.nan  # no variation among the pooled values (up to rounding)
    return alpha


def _patterns(u: _Units) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's pattern (0..P-1: units with the same values and counts share one) and, per pattern, the
    first unit holding it."""
    per_unit = np.diff(np.r_[u.unit_starts, len(u.unit)])
    width = int(per_unit.max(initial=0))
    keys = np.full((u.n_units, 2 * width), -1.0)
    slot = np.arange(len(u.unit)) - np.repeat(u.unit_starts, per_unit)  # the entry's place within its unit
    keys[u.unit, 2 * slot] = u.code
    keys[u.unit, 2 * slot + 1] = u.count
    _, first, pattern = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    return pattern.ravel().astype(np.int64), first


def _subset(u: _Units, chosen: np.ndarray) -> _Units:
    """The units ``chosen`` (in that order) as a _Units of their own; every category must occur in them."""
    entries = np.concatenate([np.arange(u.unit_starts[i], u.unit_starts[i] + n) for i, n in
                              zip(chosen, np.diff(np.r_[u.unit_starts, len(u.unit)])[chosen], strict=True)])
    unit = np.repeat(np.arange(len(chosen)), np.diff(np.r_[u.unit_starts, len(u.unit)])[chosen])
    code = u.code[entries]
    by_code = np.argsort(code, kind="stable")
    return _Units(unit=unit, code=code, count=u.count[entries], m=u.m[chosen],
                  unit_starts=np.flatnonzero(np.r_[True, np.diff(unit) > 0]), by_code=by_code,
                  code_starts=np.flatnonzero(np.r_[True, np.diff(code[by_code]) > 0]), positions=u.positions,
                  n_unpairable=u.n_unpairable)


def alpha_statistic(units: _Units, level: AlphaLevel, *, patterns: bool = True) -> IndexStatistic:
    """alpha as a statistic of unit indices: a TableStatistic over unit patterns when they are few (see the
    module docstring) and ``patterns``, else from per-unit draw counts (bincount of each resample's units)."""
    if patterns and units.n_units >= 2:
        pattern, first = _patterns(units)
        if len(first) <= min(TABLE_MAX_CELLS, units.n_units // 2):
            # every category occurs in some unit, so in the first unit of that unit's pattern
            kinds = _subset(units, first)
            return TableStatistic(pattern, len(first), lambda counts: _alpha(kinds, level, counts))

    def stat(idx: np.ndarray) -> np.ndarray:
        out = np.empty(idx.shape[0])
        step = max(1, _BATCH_ELEMENTS // max(len(units.unit), units.n_units, units.n_categories, 1))
        offsets = (np.arange(min(step, idx.shape[0])) * units.n_units)[:, None]
        for start in range(0, idx.shape[0], step):
            part = idx[start : start + step]
            flat = (part + offsets[: len(part)]).ravel()
            weights = np.bincount(flat, minlength=len(part) * units.n_units).reshape(len(part), units.n_units)
            out[start : start + step] = _alpha(units, level, weights.astype(float))
        return out

    return stat


def krippendorff_alpha(
    ratings: Any = None,
    *,
    data: pd.DataFrame | None = None, item: str = "item_id", rater: str = "judge", value: str = "score",
    raters: Sequence[Any] | None = None,
    level: AlphaLevel = "nominal",
    layout: Layout | None = None,
    by: By = None,
    aggregate: Aggregate = None,
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Krippendorff's alpha; CI resamples units.

    ``ratings``: an items x raters array (NaN = missing), the layout of :func:`fleiss_kappa` and
    :func:`icc`; the krippendorff package's raters x units array needs ``layout="raters x items"``
    (without ``layout`` an array with more columns than rows is refused rather than read the wrong
    way). Or long ``data`` with item/rater/value columns. ``raters``, ``by`` and ``aggregate`` as in
    :func:`judgelab.stats.fleiss_kappa` (the ``raters`` column names the raters used).
    """
    if level not in ("nominal", "ordinal", "interval"):
        raise StatsInputError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
    if by is not None:
        chosen, left_out = choose_raters(check_long(data), rater, raters, "Krippendorff's alpha")
        frame = per_group(lambda part: krippendorff_alpha(
            data=part, item=item, rater=rater, value=value, raters=chosen, level=level, aggregate=aggregate,
            interval=interval, n_resamples=n_resamples, ci_level=ci_level, seed=seed), data, by, rows_of=chosen,
            rater=rater)
        return with_note(frame, left_out)
    rm = ratings_matrix(ratings, data, item=item, rater=rater, value=value, layout=layout, aggregate=aggregate,
                        statistic="Krippendorff's alpha", raters=raters)
    matrix, n_merged = rm.matrix, rm.n_merged
    units = _units(matrix, level)
    stat = alpha_statistic(units, level)
    if units.n_units == 0:
        note = "alpha undefined: no unit has 2 or more ratings"
        boot = None
    else:
        boot = bootstrap(stat, units.n_units, interval=interval, n_resamples=n_resamples, ci_level=ci_level,
                         seed=seed, return_distribution=False)
        note = "" if np.isfinite(boot.estimate) else "alpha undefined: no variation among pairable values"
    context: dict[str, Any] = {"n_pairable_values": int(units.count.sum()), "n_units_unpairable": units.n_unpairable,
                               **rm.context(aggregate, named=data is not None)}
    fields: dict[str, Any] = boot.fields() if boot else {"ci_level": ci_level, "n_resamples": n_resamples}
    row = result_row(f"krippendorff_alpha_{level}", boot.estimate if boot else np.nan, n=units.n_units,
                     method=f"Krippendorff's alpha ({level}) over units with >= 2 ratings; CI: "
                     f"{boot.method if boot else 'none'} over units",
                     note=join_notes(note, merge_note(aggregate, n_merged), rm.note, boot.note if boot else ""),
                     **fields, **context)
    return tidy_frame([row])
