"""Vectorised, seeded bootstrap: percentile and BCa intervals for one or paired samples, optionally clustered.

The engine works on *index matrices*: a statistic is a function from an integer matrix of shape
(n_batch, m) -- each row one resample, as indices into the original rows -- to n_batch values.
Paired samples share the same index matrix, so pairing is automatic. Resamples are generated
in chunks (bounded memory) from one ``numpy.random.Generator``, so a seed fixes every result.

Clustered resampling (``cluster=``) is two-stage: draw clusters with replacement, then rows
with replacement within each drawn cluster (``cluster_resampling="clusters_then_rows"``), or
keep each drawn cluster whole (``"clusters"``). When clusters differ in size, resamples differ
in length; they are evaluated in batches of equal length.

Rank statistics are fast because resamples are never sorted: the data are coded once into dense
ranks, and a resample's average ranks follow from per-code counts (a bincount + cumsum per row).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from judgelab.stats._inputs import StatsInputError, resolve
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = [
    "DEFAULT_RESAMPLES", "BootstrapResult", "ClusterResampling", "IndexStatistic", "Interval", "Seed", "bootstrap",
    "bootstrap_ci", "dense_codes", "kendall_statistic", "mean_statistic", "pearson_statistic", "resample_midranks",
    "rowwise_pearson", "spearman_statistic", "vectorized_statistic",
]

IndexStatistic = Callable[[np.ndarray], np.ndarray]
Interval = Literal["percentile", "bca"]
ClusterResampling = Literal["clusters_then_rows", "clusters"]
Seed = int | np.random.Generator | None

DEFAULT_RESAMPLES = 10_000  # the default of every n_resamples in judgelab (stats, probes, ensembles, studies)
_CHUNK_ELEMENTS = 2_000_000  # index-matrix elements per batch: bounds memory at ~16 MB per array


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap interval with everything needed to report it honestly."""

    estimate: float
    ci_low: float
    ci_high: float
    ci_level: float
    interval: str
    n_resamples: int
    n: int
    n_clusters: int | None
    cluster_name: str | None
    cluster_resampling: str | None
    n_invalid: int
    std_error: float
    distribution: np.ndarray = field(repr=False)
    note: str = ""

    @property
    def method(self) -> str:
        """Exactly which interval this is, e.g. 'percentile bootstrap 95%, 10000 resamples, clustered by doc'."""
        name = "BCa bootstrap" if self.interval == "bca" else "percentile bootstrap"
        text = f"{name} {_level_text(self.ci_level)}, {self.n_resamples} resamples"
        if self.n_clusters is not None:
            how = "clusters, then rows within" if self.cluster_resampling == "clusters_then_rows" else "whole clusters"
            text += f", clustered by {self.cluster_name or 'cluster'} ({self.n_clusters} clusters; resampling {how})"
        return text

    def fields(self) -> dict[str, Any]:
        """Result-row fields: the interval and its resampling context."""
        return {"ci_low": self.ci_low, "ci_high": self.ci_high, "ci_level": self.ci_level,
                "n_resamples": self.n_resamples}


def _level_text(level: float) -> str:
    pct = level * 100
    return f"{pct:.0f}%" if abs(pct - round(pct)) < 1e-9 else f"{pct:g}%"


# ---------------------------------------------------------------- statistics on index matrices


def vectorized_statistic(func: Callable[..., np.ndarray], *arrays: np.ndarray) -> IndexStatistic:
    """Wrap ``func(*samples)`` -- vectorised along the last axis -- as an index statistic (paired)."""
    cols = [np.asarray(a) for a in arrays]
    return lambda idx: np.asarray(func(*[c[idx] for c in cols]), dtype="float64")


def mean_statistic(x: np.ndarray) -> IndexStatistic:
    """Mean of one sample."""
    values = np.asarray(x, dtype="float64")
    return lambda idx: values[idx].mean(axis=1)


def rowwise_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of two (B, m) matrices; NaN where a row is constant."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    sxx = np.einsum("ij,ij->i", xc, xc)
    syy = np.einsum("ij,ij->i", yc, yc)
    sxy = np.einsum("ij,ij->i", xc, yc)
    with np.errstate(invalid="ignore", divide="ignore"):
        # a relative tolerance: rounding leaves a tiny positive sum of squares for constant rows
        tiny = 1e-24 * np.maximum(np.einsum("ij,ij->i", x, x), np.einsum("ij,ij->i", y, y))
        r = sxy / np.sqrt(sxx * syy)
        r[(sxx <= tiny) | (syy <= tiny)] = np.nan
    return np.clip(r, -1.0, 1.0)


def pearson_statistic(x: np.ndarray, y: np.ndarray) -> IndexStatistic:
    """Pearson r of a paired sample."""
    xs, ys = np.asarray(x, dtype="float64"), np.asarray(y, dtype="float64")
    return lambda idx: rowwise_pearson(xs[idx], ys[idx])


def dense_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense rank codes 0..k-1 (ties share a code) and k."""
    uniques, codes = np.unique(np.asarray(values), return_inverse=True)
    return codes.astype(np.int64).ravel(), len(uniques)


def resample_midranks(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """Average (1-based) ranks within each row of a (B, m) matrix of dense codes, without sorting."""
    n_rows = codes.shape[0]
    cells = codes + (np.arange(n_rows, dtype=np.int64) * n_codes)[:, None]
    counts = np.bincount(cells.ravel(), minlength=n_rows * n_codes).reshape(n_rows, n_codes)
    midranks = np.cumsum(counts, axis=1) - (counts - 1) / 2.0  # last rank of the tie run - (count - 1) / 2
    return midranks.ravel()[cells]


def spearman_statistic(x: np.ndarray, y: np.ndarray) -> IndexStatistic:
    """Spearman rho (average ranks for ties) of a paired sample, without sorting any resample.

    Rows are coded once by their (x, y) value pair. A resample is then described by how often
    it holds each pair (one bincount); the marginal counts give the average ranks of each x and
    y value, and rho follows from sums over the distinct pairs only -- so rating data with few
    distinct values (1-5 scales) cost little more than drawing the indices. With mostly
    distinct values each variable is ranked from its own per-value counts instead.
    """
    cx, kx = dense_codes(x)
    cy, ky = dense_codes(y)
    joint, kj = dense_codes(cx * ky + cy)  # sorted by (x code, y code)
    if kj > len(joint) // 4:  # mostly distinct pairs: ranking each variable from its own counts is cheaper
        return lambda idx: rowwise_pearson(resample_midranks(cx[idx], kx), resample_midranks(cy[idx], ky))
    pair_x = np.zeros(kj, dtype=np.int64)
    pair_y = np.zeros(kj, dtype=np.int64)
    pair_x[joint], pair_y[joint] = cx, cy
    x_starts = np.flatnonzero(np.r_[True, np.diff(pair_x) > 0])  # pairs are grouped by x code
    by_y = np.argsort(pair_y, kind="stable")
    y_starts = np.flatnonzero(np.r_[True, np.diff(pair_y[by_y]) > 0])

    def stat(idx: np.ndarray) -> np.ndarray:
        n_rows, m = idx.shape
        cells = joint[idx] + (np.arange(n_rows, dtype=np.int64) * kj)[:, None]
        pair_counts = np.bincount(cells.ravel(), minlength=n_rows * kj).reshape(n_rows, kj).astype(float)
        count_x = np.add.reduceat(pair_counts, x_starts, axis=1)
        count_y = np.add.reduceat(pair_counts[:, by_y], y_starts, axis=1)
        rank_x = np.cumsum(count_x, axis=1) - (count_x - 1) / 2.0  # average rank of each x value
        rank_y = np.cumsum(count_y, axis=1) - (count_y - 1) / 2.0
        centre = m * ((m + 1) / 2.0) ** 2
        sxy = np.einsum("bj,bj,bj->b", pair_counts, rank_x[:, pair_x], rank_y[:, pair_y]) - centre
        sxx = np.einsum("bk,bk,bk->b", count_x, rank_x, rank_x) - centre
        syy = np.einsum("bk,bk,bk->b", count_y, rank_y, rank_y) - centre
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = sxy / np.sqrt(sxx * syy)
        rho[(sxx <= 1e-9 * centre) | (syy <= 1e-9 * centre)] = np.nan  # a constant side in this resample
        return np.clip(rho, -1.0, 1.0)

    return stat


def kendall_statistic(x: np.ndarray, y: np.ndarray, variant: Literal["b", "c"] = "b") -> IndexStatistic:
    """Kendall tau-b or tau-c; each resample is passed to scipy.stats.kendalltau (O(m log m) per resample)."""
    xs, ys = np.asarray(x, dtype="float64"), np.asarray(y, dtype="float64")

    def stat(idx: np.ndarray) -> np.ndarray:
        out = np.empty(idx.shape[0])
        for i, row in enumerate(idx):
            out[i] = stats.kendalltau(xs[row], ys[row], variant=variant).statistic
        return out

    return stat


# ---------------------------------------------------------------- resampling


def _chunk_rows(m: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(m, 1))


@dataclass(frozen=True)
class _Clusters:
    order: np.ndarray  # row indices sorted by cluster
    starts: np.ndarray  # first position of each cluster in ``order``
    sizes: np.ndarray

    @classmethod
    def from_labels(cls, labels: np.ndarray) -> _Clusters:
        codes, _ = pd.factorize(pd.Series(labels, dtype=object))
        if (codes < 0).any():
            raise StatsInputError("cluster labels must not be missing")
        order = np.argsort(codes, kind="stable")
        sizes = np.bincount(codes)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        return cls(order=order, starts=starts, sizes=sizes)


def _iid_batches(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    step = _chunk_rows(n)
    for start in range(0, n_resamples, step):
        yield rng.integers(0, n, size=(min(step, n_resamples - start), n))


def _cluster_batches(
    clusters: _Clusters, n_resamples: int, rng: np.random.Generator, how: ClusterResampling
) -> Iterator[np.ndarray | _Ragged]:
    """Yield, per chunk, an index matrix, or a ragged batch when clusters differ in size."""
    n_clusters = len(clusters.sizes)
    step = _chunk_rows(int(clusters.sizes.sum()))
    equal = bool((clusters.sizes == clusters.sizes[0]).all())
    for start in range(0, n_resamples, step):
        batch = min(step, n_resamples - start)
        chosen = rng.integers(0, n_clusters, size=(batch, n_clusters))
        if equal:
            size = int(clusters.sizes[0])
            if how == "clusters_then_rows":
                within = rng.integers(0, size, size=(batch, n_clusters, size))
            else:
                within = np.broadcast_to(np.arange(size), (batch, n_clusters, size))
            positions = clusters.starts[chosen][..., None] + within
            yield clusters.order[positions].reshape(batch, n_clusters * size)
            continue
        flat_clusters = chosen.ravel()
        reps = clusters.sizes[flat_clusters]
        cluster_of_row = np.repeat(flat_clusters, reps)
        if how == "clusters_then_rows":
            within = np.floor(rng.random(len(cluster_of_row)) * clusters.sizes[cluster_of_row]).astype(np.int64)
        else:
            block_starts = np.repeat(np.cumsum(reps) - reps, reps)
            within = np.arange(len(cluster_of_row)) - block_starts
        flat = clusters.order[clusters.starts[cluster_of_row] + within]
        lengths = reps.reshape(batch, n_clusters).sum(axis=1)
        pieces = np.split(flat, np.cumsum(lengths)[:-1])
        yield _Ragged(pieces, lengths)


class _Ragged:
    """Resamples of unequal length: evaluated in groups of equal length, results in draw order."""

    def __init__(self, pieces: list[np.ndarray], lengths: np.ndarray) -> None:
        self.pieces, self.lengths = pieces, lengths

    def evaluate(self, statistic: IndexStatistic) -> np.ndarray:
        out = np.empty(len(self.pieces))
        for length in np.unique(self.lengths):
            rows = np.flatnonzero(self.lengths == length)
            step = _chunk_rows(int(length))
            for s in range(0, len(rows), step):
                part = rows[s : s + step]
                out[part] = statistic(np.stack([self.pieces[i] for i in part]))
        return out


def _evaluate(statistic: IndexStatistic, batch: Any) -> np.ndarray:
    return batch.evaluate(statistic) if isinstance(batch, _Ragged) else np.asarray(statistic(batch), dtype="float64")


def _jackknife(statistic: IndexStatistic, n: int, clusters: _Clusters | None) -> np.ndarray:
    """Leave-one-out values (leave-one-cluster-out when clustered)."""
    if clusters is None:
        base = np.arange(n - 1)
        out = np.empty(n)
        step = _chunk_rows(n)
        for s in range(0, n, step):
            left_out = np.arange(s, min(n, s + step))
            idx = base[None, :] + (base[None, :] >= left_out[:, None])
            out[left_out] = statistic(idx)
        return out
    pieces = []
    for g in range(len(clusters.sizes)):
        keep = np.ones(n, dtype=bool)
        keep[clusters.order[clusters.starts[g] : clusters.starts[g] + clusters.sizes[g]]] = False
        pieces.append(np.flatnonzero(keep))
    return _Ragged(pieces, np.array([len(p) for p in pieces])).evaluate(statistic)


# ---------------------------------------------------------------- the engine


def bootstrap(
    statistic: IndexStatistic,
    n: int,
    *,
    cluster: Sequence[Any] | np.ndarray | None = None,
    cluster_name: str | None = None,
    cluster_resampling: ClusterResampling = "clusters_then_rows",
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    interval: Interval = "percentile",
    seed: Seed = 0,
    return_distribution: bool = True,
) -> BootstrapResult:
    """Bootstrap ``statistic`` over ``n`` rows (an index statistic: see :func:`vectorized_statistic`).

    Resamples where the statistic is undefined (NaN, e.g. a constant resample) are excluded and
    counted in ``n_invalid``. BCa uses the jackknife (leave one cluster out when clustered) for
    the acceleration and the mid-count ``(#< + #=/2) / B`` for the bias correction, so that
    discrete statistics with many tied replicates keep a finite correction.
    """
    if not 0 < ci_level < 1:
        raise StatsInputError(f"ci_level must be between 0 and 1, got {ci_level}")
    if interval not in ("percentile", "bca"):
        raise StatsInputError(f"interval must be 'percentile' or 'bca', got {interval!r}")
    if n_resamples < 1:
        raise StatsInputError(f"n_resamples must be positive, got {n_resamples}")
    clusters = None
    if cluster is not None:
        labels = np.asarray(cluster, dtype=object)
        if len(labels) != n:
            raise StatsInputError(f"cluster has {len(labels)} labels for {n} rows")
        clusters = _Clusters.from_labels(labels)
    n_clusters = None if clusters is None else len(clusters.sizes)
    common = dict(ci_level=ci_level, interval=interval, n_resamples=n_resamples, n=n, n_clusters=n_clusters,
                  cluster_name=cluster_name, cluster_resampling=cluster_resampling if clusters else None)
    estimate = float(statistic(np.arange(n)[None, :])[0]) if n > 0 else np.nan
    units = n if clusters is None else n_clusters
    if units is None or units < 2 or not np.isfinite(estimate):
        why = "fewer than 2 resampling units" if (units or 0) < 2 else "statistic undefined on the full sample"
        return BootstrapResult(estimate=estimate, ci_low=np.nan, ci_high=np.nan, n_invalid=0, std_error=np.nan,
                               distribution=np.empty(0), note=f"no interval: {why}", **common)  # type: ignore[arg-type]
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if clusters is None:
        parts = [_evaluate(statistic, b) for b in _iid_batches(n, n_resamples, rng)]
    else:
        parts = [_evaluate(statistic, b) for b in _cluster_batches(clusters, n_resamples, rng, cluster_resampling)]
    distribution = np.concatenate(parts)
    valid = distribution[np.isfinite(distribution)]
    n_invalid = len(distribution) - len(valid)
    note = f"{n_invalid} of {n_resamples} resamples gave an undefined statistic and were excluded" if n_invalid else ""
    if len(valid) < 2:
        return BootstrapResult(estimate=estimate, ci_low=np.nan, ci_high=np.nan, n_invalid=n_invalid,
                               std_error=np.nan, distribution=distribution,
                               note=join_notes(note, "no interval: fewer than 2 valid resamples"), **common)  # type: ignore[arg-type]
    alpha = 1 - ci_level
    probs = np.array([alpha / 2, 1 - alpha / 2])
    if interval == "bca":
        probs, bca_note = _bca_probabilities(statistic, n, clusters, valid, estimate, probs)
        note = join_notes(note, bca_note)
    if np.isfinite(probs).all():
        low, high = np.quantile(valid, probs)
    else:
        low = high = np.nan
    return BootstrapResult(
        estimate=estimate, ci_low=float(low), ci_high=float(high), n_invalid=n_invalid,
        std_error=float(valid.std(ddof=1)), distribution=distribution if return_distribution else np.empty(0),
        note=note, **common,  # type: ignore[arg-type]
    )


def _bca_probabilities(
    statistic: IndexStatistic, n: int, clusters: _Clusters | None, valid: np.ndarray, estimate: float,
    probs: np.ndarray,
) -> tuple[np.ndarray, str]:
    share_below = (np.sum(valid < estimate) + 0.5 * np.sum(valid == estimate)) / len(valid)
    z0 = special.ndtri(share_below)
    jack = _jackknife(statistic, n, clusters)
    jack = jack[np.isfinite(jack)]
    if len(jack) < 2 or not np.isfinite(z0):
        return np.full(2, np.nan), "no BCa interval: bias correction or jackknife undefined"
    d = jack.mean() - jack
    denom = 6.0 * np.sum(d**2) ** 1.5
    accel = float(np.sum(d**3) / denom) if denom > 0 else 0.0
    z = special.ndtri(probs)
    adjusted = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    return adjusted, ""


# ---------------------------------------------------------------- tidy convenience

_NAMED: dict[str, Callable[..., IndexStatistic]] = {
    "mean": mean_statistic,
    "mean_difference": lambda x, y: vectorized_statistic(lambda a, b: (a - b).mean(axis=-1), x, y),
    "pearson": pearson_statistic,
    "spearman": spearman_statistic,
    "kendall": kendall_statistic,
}


def bootstrap_ci(
    x: Any,
    y: Any = None,
    *,
    data: pd.DataFrame | None = None,
    statistic: str | Callable[..., np.ndarray] = "mean",
    cluster: Any = None,
    cluster_resampling: ClusterResampling = "clusters_then_rows",
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    interval: Interval = "percentile",
    seed: Seed = 0,
) -> pd.DataFrame:
    """Tidy bootstrap CI of a statistic of one sample (``x``) or a paired sample (``x``, ``y``).

    ``statistic``: "mean", "mean_difference" (x - y), "pearson", "spearman", "kendall", or a
    function of one or two arrays vectorised along the last axis (e.g. ``lambda a: a.std(axis=-1)``).
    """
    variables = {"x": x} if y is None else {"x": x, "y": y}
    res = resolve(data, variables, cluster=cluster)
    arrays = list(res.values.values())
    if callable(statistic):
        stat, name = vectorized_statistic(statistic, *arrays), getattr(statistic, "__name__", "statistic")
    elif statistic in _NAMED:
        stat, name = _NAMED[statistic](*arrays), statistic
    else:
        raise StatsInputError(f"unknown statistic {statistic!r}; use one of {sorted(_NAMED)} or a function")
    boot = bootstrap(stat, res.n, cluster=res.cluster, cluster_name=res.cluster_name,
                     cluster_resampling=cluster_resampling, n_resamples=n_resamples, ci_level=ci_level,
                     interval=interval, seed=seed, return_distribution=False)
    row = result_row(name, boot.estimate, n=res.n, method=boot.method, note=boot.note, **boot.fields(),
                     **res.context())
    return tidy_frame([row])
