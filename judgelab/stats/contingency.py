"""Statistics of weighted joint tables: each maps a batch of K x L count tables to one value per table.

A paired sample (x, y) whose values are discrete is summarised without loss by its joint table:
how often each (x value, y value) pair occurs. Spearman's rho, Kendall's tau, Cohen's kappa, the
error metrics and percent agreement are all functions of that table, so a bootstrap can resample
*tables* (multinomial counts, or sums of per-cluster tables) instead of rows; see
:class:`judgelab.stats.bootstrap.TableStatistic`. Every function here takes ``counts`` of shape
(B, K, L) -- rows ordered by x value, columns by y value -- with float entries (resampled cluster
weights may make them any non-negative number) and returns B values; a table whose statistic is
undefined (a constant side, no rows) gives NaN, exactly where scipy / scikit-learn give NaN.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from judgelab.stats.pairing import StatsInputError

__all__ = ["agreement_from_table", "kappa_from_table", "kendall_from_table", "mean_from_table",
           "spearman_from_table", "rms_from_table"]


def _totals(counts: np.ndarray) -> np.ndarray:
    return counts.reshape(len(counts), -1).sum(axis=1)


@lru_cache(maxsize=64)
def _margin_maps(k: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(K L, K) and (K L, L) 0/1 matrices: a flat table times them gives its row and column sums."""
    rows = np.kron(np.eye(k), np.ones((m, 1)))
    cols = np.kron(np.ones((k, 1)), np.eye(m))
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def _margins(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row sums (B, K) and column sums (B, L) of each table, as two small matrix products (much faster
    than ``sum(axis=...)`` over a short axis)."""
    b, k, m = counts.shape
    rows, cols = _margin_maps(k, m)
    flat = counts.reshape(b, k * m)
    return flat @ rows, flat @ cols


def spearman_from_table(counts: np.ndarray) -> np.ndarray:
    """Spearman's rho with average ranks for ties (scipy.stats.spearmanr) of each table."""
    count_x, count_y = _margins(counts)
    m = count_x.sum(axis=1)
    rank_x = np.cumsum(count_x, axis=1) - (count_x - 1) / 2.0  # average rank of each x value
    rank_y = np.cumsum(count_y, axis=1) - (count_y - 1) / 2.0
    centre = m * ((m + 1) / 2.0) ** 2
    sxy = np.einsum("bij,bi,bj->b", counts, rank_x, rank_y) - centre
    sxx = np.einsum("bk,bk,bk->b", count_x, rank_x, rank_x) - centre
    syy = np.einsum("bk,bk,bk->b", count_y, rank_y, rank_y) - centre
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = sxy / np.sqrt(sxx * syy)
        constant = (sxx <= 1e-9 * centre) | (syy <= 1e-9 * centre)  # one value on a side: rho undefined
    rho[constant | (m < 2)] = np.nan
    return np.clip(rho, -1.0, 1.0)


def kendall_from_table(counts: np.ndarray, variant: str = "b") -> np.ndarray:
    """Kendall's tau-b or tau-c (scipy.stats.kendalltau) of each table, from concordant - discordant pairs."""
    count_x, count_y = _margins(counts)
    m = count_x.sum(axis=1)
    # below[b, i, j] = rows with x value after i and y value after j; above: x after i, y before j
    after_x = np.cumsum(counts[:, ::-1, :], axis=1)[:, ::-1, :] - counts  # x strictly greater, same y
    below = np.cumsum(after_x[:, :, ::-1], axis=2)[:, :, ::-1] - after_x  # and y strictly greater
    above = np.cumsum(after_x, axis=2) - after_x  # and y strictly smaller
    concordant_minus_discordant = np.einsum("bij,bij->b", counts, below - above)
    pairs = m * (m - 1) / 2.0
    ties_x = np.einsum("bk,bk->b", count_x, count_x - 1) / 2.0
    ties_y = np.einsum("bk,bk->b", count_y, count_y - 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            tau = concordant_minus_discordant / np.sqrt((pairs - ties_x) * (pairs - ties_y))
        elif variant == "c":
            classes = np.minimum((count_x > 0).sum(axis=1), (count_y > 0).sum(axis=1)).astype(float)
            tau = 2 * concordant_minus_discordant / (m**2 * (classes - 1) / classes)
        else:
            raise StatsInputError(f"variant must be 'b' or 'c', got {variant!r}")
    tau[(pairs - ties_x <= 0) | (pairs - ties_y <= 0)] = np.nan  # a constant side, as scipy
    return np.clip(tau, -1.0, 1.0)


def kappa_from_table(counts: np.ndarray, disagree: np.ndarray) -> np.ndarray:
    """Cohen's kappa of square k x k tables with disagreement weights ``disagree`` (0 on the diagonal).

    ``1 - observed / expected`` weighted disagreement (scikit-learn's ``cohen_kappa_score``). A rater
    with one category: observed equals expected disagreement, so kappa is exactly 0 (computed, it is
    0 plus rounding noise); both raters with one and the same category: expected is 0 -> NaN.
    """
    rows, cols = _margins(counts)
    n = rows.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = counts.reshape(len(counts), -1) @ disagree.ravel() / n
        expected = np.einsum("bi,bi->b", rows @ disagree, cols) / n**2
        kappa = 1.0 - observed / expected
    one_category = (rows == n[:, None]).any(axis=1) | (cols == n[:, None]).any(axis=1)
    kappa[one_category] = 0.0
    kappa[~(expected > 0)] = np.nan
    return kappa


def mean_from_table(counts: np.ndarray, cell_values: np.ndarray) -> np.ndarray:
    """Mean over rows of a per-cell value (e.g. ``|x - y|`` for the MAE, ``x == y`` for agreement)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts.reshape(len(counts), -1) @ np.ravel(cell_values) / _totals(counts)


def rms_from_table(counts: np.ndarray, cell_values: np.ndarray) -> np.ndarray:
    """Root mean square over rows of a per-cell value (the RMSE with ``x - y``)."""
    return np.sqrt(mean_from_table(counts, cell_values**2))


def agreement_from_table(counts: np.ndarray, same: np.ndarray) -> np.ndarray:
    """Share of rows whose cell is marked in the boolean K x L matrix ``same`` (x and y agree)."""
    return mean_from_table(counts, same.astype(float))
