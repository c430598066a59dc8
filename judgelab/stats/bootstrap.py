"""Vectorised, seeded bootstrap: percentile and BCa intervals for one or paired samples, optionally clustered.

The engine works on *index matrices*: a statistic is a function from an integer matrix of shape
(n_batch, m) -- each row one resample, as indices into the original rows -- to n_batch values.
Paired samples share the same index matrix, so pairing is automatic. Resamples are generated
in chunks (bounded memory) from one ``numpy.random.Generator``, so a seed fixes every result.

Clustered resampling (``cluster=``) is two-stage: draw clusters with replacement, then rows
with replacement within each drawn cluster (``cluster_resampling="clusters_then_rows"``), or
keep each drawn cluster whole (``"clusters"``). When clusters differ in size, resamples differ
in length; they are evaluated in batches of equal length. Clustered draws come from
:mod:`judgelab.stats.two_stage`, in blocks each seeded in order from the caller's generator.

Rank statistics are fast because resamples are never sorted: the data are coded once into dense
ranks, and a resample's average ranks follow from per-code counts (a bincount + cumsum per row).

Discrete data go further: a :class:`TableStatistic` (Spearman, Kendall, Cohen's kappa, the error
metrics and percent agreement of a paired sample with few distinct value pairs) depends on the rows
only through their K x L joint table, so the engine resamples tables instead of rows -- multinomial
counts over the table's cells for an i.i.d. bootstrap, and a sum of per-cluster tables weighted by
how often each cluster is drawn (multinomial over clusters) for whole-cluster resampling. A
resample then costs O(K L), not O(n). The table path is used when the grid has at most
:data:`TABLE_MAX_CELLS` cells and at most half as many cells as rows (:func:`table_statistic`); continuous data
(many distinct values) keep the index path. Two-stage clustered resampling
(``"clusters_then_rows"``) draws rows within clusters, so it keeps the row draws, but a table
statistic maps each drawn row straight to its cell and evaluates each resample from its bincounted table
(no index matrix, the same draws). Table resamples are drawn in
blocks of fixed size, each from its own generator seeded in order from the caller's, on a thread pool
(``JUDGELAB_STATS_THREADS``, default the usable CPUs, at most 8; numpy's draws release the GIL): a
seed gives the same intervals whatever the number of threads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from judgelab.stats._inputs import StatsInputError, judge_names, per_group, resolve
from judgelab.stats.contingency import kendall_from_table, spearman_from_table
from judgelab.stats.tidy import join_notes, result_row, tidy_frame
from judgelab.stats.two_stage import (
    KERNEL_MIN_DRAWS,
    ClusterResampling,
    Clusters,
    blocks,
    cell_counts,
    draw_block,
    iter_positions,
)

__all__ = [
    "DEFAULT_RESAMPLES", "TABLE_MAX_CELLS", "BootstrapResult", "ClusterResampling", "IndexStatistic", "Interval",
    "Seed", "TableStatistic", "bootstrap", "bootstrap_ci", "dense_codes", "difference_statistic", "kendall_statistic",
    "mean_statistic",
    "paired_tables", "pearson_statistic", "resample_midranks", "rowwise_pearson", "spearman_statistic",
    "table_statistic", "vectorized_statistic",
]

IndexStatistic = Callable[[np.ndarray], np.ndarray]
Interval = Literal["percentile", "bca"]
Seed = int | np.random.Generator | None

DEFAULT_RESAMPLES = 10_000  # the default of every n_resamples in judgelab (stats, probes, ensembles, studies)
_CHUNK_ELEMENTS = 2_000_000  # index-matrix elements per batch: bounds memory at ~16 MB per array
TABLE_MAX_CELLS = 4096  # the largest K x L joint table resampled as a table (e.g. a 0-63 scale against itself)


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
        if self.interval == "bca":  # R's boot counts strictly below: with many tied resamples the two differ
            text += " (bias correction counts resamples equal to the estimate as half below)"
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


def _floats(values: Any, name: str) -> np.ndarray:
    """``values`` as a float array, or one StatsInputError naming the argument."""
    try:
        return np.asarray(values, dtype="float64")
    except (TypeError, ValueError) as exc:
        raise StatsInputError(f"{name} must hold numbers ({exc})") from None


def mean_statistic(x: np.ndarray) -> IndexStatistic:
    """Mean of one sample."""
    values = _floats(x, "x")
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
    xs, ys = _floats(x, "x"), _floats(y, "y")
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


class TableStatistic:
    """An index statistic that depends on the rows only through their joint table.

    ``cells`` codes each row by its cell (0..n_cells-1) and ``func`` maps a (B, n_cells) matrix of
    float cell counts to B values. Called on an index matrix it bincounts each resample's cells,
    so it works wherever an index statistic does; :func:`bootstrap` instead draws the counts
    directly (multinomially, or as weighted sums of per-cluster tables).
    """

    def __init__(self, cells: np.ndarray, n_cells: int, func: Callable[[np.ndarray], np.ndarray]) -> None:
        self.cells, self.n_cells, self.func = np.asarray(cells, dtype=np.int64), int(n_cells), func

    def __call__(self, idx: np.ndarray) -> np.ndarray:
        n_rows = idx.shape[0]
        flat = (self.cells[idx] + (np.arange(n_rows, dtype=np.int64) * self.n_cells)[:, None]).ravel()
        counts = np.bincount(flat, minlength=n_rows * self.n_cells).reshape(n_rows, self.n_cells)
        return np.asarray(self.func(counts.astype(float)), dtype="float64")

    def table(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Cell counts of the given rows (all rows by default)."""
        cells = self.cells if rows is None else self.cells[rows]
        return np.bincount(cells, minlength=self.n_cells).astype(float)


def table_statistic(
    x: np.ndarray, y: np.ndarray, from_counts: Callable[..., np.ndarray], *, codes: bool = False,
    shape: tuple[int, int] | None = None,
) -> TableStatistic | None:
    """A :class:`TableStatistic` of a paired sample, or None when its values are too many for a table.

    ``from_counts`` receives (B, K, L) counts, K the sorted distinct values of ``x`` and L those of
    ``y`` -- or, with ``codes=True``, integer codes 0..K-1 / 0..L-1 and ``shape=(K, L)``. The table
    path is used when K x L <= min(TABLE_MAX_CELLS, n // 2): at most one cell per two rows, so resampling a
    table never costs more than resampling rows.
    """
    if codes:
        cx, cy = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
        kx, ky = shape if shape is not None else (int(cx.max(initial=-1)) + 1, int(cy.max(initial=-1)) + 1)
    else:
        (cx, kx), (cy, ky) = dense_codes(x), dense_codes(y)
    n = len(cx)
    if kx * ky > min(TABLE_MAX_CELLS, n // 2) or kx * ky == 0:
        return None
    return TableStatistic(cx * ky + cy, kx * ky, lambda counts: from_counts(counts.reshape(-1, kx, ky)))


def paired_tables(*statistics: IndexStatistic) -> list[IndexStatistic]:
    """The same statistics over one shared cell coding (the joint cells of all of them), when possible.

    Statistics of the same rows bootstrapped with one seed are paired -- drawn from the same
    resamples -- only if they resample the same thing: table statistics must share their cells.
    Returns them recoded on their joint cells, or unchanged (index path) when one is not a table
    statistic or the joint cells are more than min(TABLE_MAX_CELLS, n // 2).
    """
    if not statistics or not all(isinstance(s, TableStatistic) for s in statistics):
        return list(statistics)
    tables: list[TableStatistic] = list(statistics)  # type: ignore[arg-type]
    uniques, joint = np.unique(np.stack([s.cells for s in tables], axis=1), axis=0, return_inverse=True)
    joint, n_joint = joint.ravel().astype(np.int64), len(uniques)
    if n_joint > min(TABLE_MAX_CELLS, len(joint) // 2):
        return [lambda idx, s=s: s(idx) for s in tables]  # index path for all: still paired
    out: list[IndexStatistic] = []
    for s in tables:
        project = np.zeros((n_joint, s.n_cells))
        project[joint, s.cells] = 1.0  # joint cell -> this statistic's cell
        out.append(TableStatistic(joint, n_joint, lambda counts, s=s, project=project: s.func(counts @ project)))
    return out


def difference_statistic(a: IndexStatistic, b: IndexStatistic) -> IndexStatistic:
    """``a - b`` on the same resamples; a table statistic when ``a`` and ``b`` share their cells
    (see :func:`paired_tables`)."""
    if isinstance(a, TableStatistic) and isinstance(b, TableStatistic) and a.n_cells == b.n_cells \
            and np.array_equal(a.cells, b.cells):
        return TableStatistic(a.cells, a.n_cells, lambda counts: a.func(counts) - b.func(counts))
    return lambda idx: a(idx) - b(idx)


def spearman_statistic(x: np.ndarray, y: np.ndarray) -> IndexStatistic:
    """Spearman rho (average ranks for ties) of a paired sample, without sorting any resample.

    Discrete data (few distinct value pairs) give a :class:`TableStatistic`: rho follows from the
    joint table's marginal counts (average ranks) and cell counts. With mostly distinct values each
    variable is ranked from its own per-value counts in each resample instead.
    """
    table = table_statistic(x, y, spearman_from_table)
    if table is not None:
        return table
    cx, kx = dense_codes(x)
    cy, ky = dense_codes(y)
    return lambda idx: rowwise_pearson(resample_midranks(cx[idx], kx), resample_midranks(cy[idx], ky))


def kendall_statistic(x: np.ndarray, y: np.ndarray, variant: Literal["b", "c"] = "b") -> IndexStatistic:
    """Kendall tau-b or tau-c: from the joint table for discrete data (concordant minus discordant
    pairs by cumulative sums, O(K L) per resample), else scipy.stats.kendalltau per resample."""
    if variant not in ("b", "c"):
        raise StatsInputError(f"variant must be 'b' or 'c', got {variant!r}")
    x, y = _floats(x, "x"), _floats(y, "y")
    table = table_statistic(x, y, lambda counts: kendall_from_table(counts, variant))
    if table is not None:
        return table
    xs, ys = x, y

    def stat(idx: np.ndarray) -> np.ndarray:
        out = np.empty(idx.shape[0])
        for i, row in enumerate(idx):
            out[i] = stats.kendalltau(xs[row], ys[row], variant=variant).statistic
        return out

    return stat


# ---------------------------------------------------------------- resampling


def _chunk_rows(m: int) -> int:
    return max(1, _CHUNK_ELEMENTS // max(m, 1))


def _iid_batches(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    step = _chunk_rows(n)
    for start in range(0, n_resamples, step):
        yield rng.integers(0, n, size=(min(step, n_resamples - start), n))


def _cluster_batches(
    clusters: Clusters, n_resamples: int, rng: np.random.Generator, how: ClusterResampling
) -> Iterator[np.ndarray | _Ragged]:
    """Yield, per block of :mod:`~judgelab.stats.two_stage` draws, an index matrix, or a ragged batch when
    clusters differ in size."""
    for positions, lengths in iter_positions(clusters, n_resamples, rng, how):
        rows = clusters.order[positions]
        yield rows if lengths is None else _Ragged(np.split(rows, np.cumsum(lengths)[:-1]), lengths)


def _two_stage_table_values(
    statistic: TableStatistic, clusters: Clusters, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Two-stage (clusters, then rows within) resamples of a table statistic: the draws of
    :func:`_cluster_batches` (so the same resamples for a seed), but each drawn row goes straight to its cell
    and each resample's table is a bincount -- no index matrix of rows and no grouping of unequal-length
    resamples. Blocks are drawn and counted on the thread pool (each has its own generator)."""
    n_cells = statistic.n_cells
    sorted_cells = statistic.cells[clusters.order].astype(np.int32)  # small: stays in cache for the gathers
    plan = blocks(clusters, n_resamples, rng)
    compiled = n_resamples * int(clusters.sizes.sum()) >= KERNEL_MIN_DRAWS

    def one(i: int) -> np.ndarray:
        block = draw_block(clusters, *plan[i], "clusters_then_rows")
        counts = cell_counts(clusters, block, sorted_cells, n_cells, compiled)
        return np.asarray(statistic.func(counts), dtype="float64")

    return _on_threads(one, len(plan))


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


# resamples per block on the table path: at most 1,000 and ~250,000 random values (2 MB of indices, cache-sized).
# Fixed by the data, never by the machine, so a seed gives the same draws on any machine.
_TABLE_BLOCK, _BLOCK_ELEMENTS = 1000, 250_000


def _stats_threads() -> int:
    """Threads for the table path: JUDGELAB_STATS_THREADS, else the usable CPUs (at most 8)."""
    configured = os.environ.get("JUDGELAB_STATS_THREADS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            raise StatsInputError(f"JUDGELAB_STATS_THREADS must be a whole number, got {configured!r}") from None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(8, usable)


def _table_distribution(
    statistic: TableStatistic, clusters: Clusters | None, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """The statistic on ``n_resamples`` resampled tables, drawn in fixed blocks of resamples.

    Each block has its own generator, seeded from ``rng`` in block order, and blocks run on a thread
    pool (numpy's random draws and matrix products release the GIL), so the result depends on the seed
    only -- not on the number of threads.
    """
    draw, width = _table_drawer(statistic, clusters)
    block = max(1, min(_TABLE_BLOCK, _BLOCK_ELEMENTS // max(width, 1)))
    sizes = [min(block, n_resamples - start) for start in range(0, n_resamples, block)]
    seeds = rng.integers(0, 2**63 - 1, size=len(sizes))

    def one(i: int) -> np.ndarray:
        counts = draw(np.random.default_rng(int(seeds[i])), sizes[i])
        return np.asarray(statistic.func(counts), dtype="float64")

    return _on_threads(one, len(sizes))


def _on_threads(one: Callable[[int], np.ndarray], n_blocks: int) -> np.ndarray:
    """``one(0) ... one(n_blocks - 1)`` concatenated in block order, run on the stats thread pool."""
    threads = min(_stats_threads(), n_blocks)
    # one BLAS thread per block: the products are small, and BLAS's own threads would compete with the
    # pool's (and with anything else running: spinning BLAS threads make a loaded machine far slower)
    with _blas_controller().limit(limits=1, user_api="blas"):
        if threads <= 1:
            return np.concatenate([one(i) for i in range(n_blocks)])
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return np.concatenate(list(pool.map(one, range(n_blocks))))


@lru_cache(maxsize=1)
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController  # imported on first use: it inspects the loaded libraries

    return ThreadpoolController()


def _table_drawer(
    statistic: TableStatistic, clusters: Clusters | None
) -> tuple[Callable[[np.random.Generator, int], np.ndarray], int]:
    """A function (generator, batch) -> resampled cell counts (batch, n_cells), and the random values per
    resample it draws: multinomial over the table's occupied cells (i.i.d.), or per-cluster tables
    weighted by how often each cluster is drawn (whole clusters)."""
    n_cells = statistic.n_cells
    if clusters is None:
        full = statistic.table()
        occupied = np.flatnonzero(full)
        n = int(full.sum())
        shares = full[occupied] / n

        def iid(gen: np.random.Generator, batch: int) -> np.ndarray:
            counts = np.zeros((batch, n_cells))
            counts[:, occupied] = gen.multinomial(n, shares, size=batch)
            return counts

        return iid, max(len(occupied), 1)
    per_cluster = _cluster_tables(statistic, clusters)
    n_clusters = len(clusters.sizes)
    # Weights and per-cluster counts are whole numbers: their products summed in float32 are exact while
    # every total stays below 2**24 (a resample has at most n_clusters x the largest cluster count in a
    # cell), and float32 products are about twice as fast.
    exact32 = n_clusters * float(per_cluster.max(initial=0.0)) < 2**24
    dtype = np.float32 if exact32 else np.float64
    # clusters with identical tables are interchangeable: when they are few kinds, draw how often each
    # kind is drawn (multinomial over kinds, probability = share of clusters) -- the same distribution.
    # A binomial costs about as much as drawing and counting 10 cluster indices, hence the factor.
    kinds, kind_counts = np.unique(per_cluster, axis=0, return_counts=True)
    if 10 * len(kinds) <= n_clusters:
        kinds_t, shares = kinds.astype(dtype), kind_counts / n_clusters

        def by_kind(gen: np.random.Generator, batch: int) -> np.ndarray:
            return (gen.multinomial(n_clusters, shares, size=batch).astype(dtype) @ kinds_t).astype(float)

        return by_kind, len(kinds)
    tables = per_cluster.astype(dtype)
    index_type = np.uint16 if n_clusters <= np.iinfo(np.uint16).max + 1 else np.int64

    def whole_clusters(gen: np.random.Generator, batch: int) -> np.ndarray:
        chosen = gen.integers(0, n_clusters, size=(batch, n_clusters), dtype=index_type).astype(np.intp)
        chosen += (np.arange(batch, dtype=np.intp) * n_clusters)[:, None]
        weights = np.bincount(chosen.ravel(), minlength=batch * n_clusters).reshape(batch, n_clusters)
        return (weights.astype(dtype) @ tables).astype(float)

    return whole_clusters, n_clusters


def _cluster_tables(statistic: TableStatistic, clusters: Clusters) -> np.ndarray:
    """(n_clusters, n_cells) cell counts of each cluster."""
    cluster_of = np.repeat(np.arange(len(clusters.sizes)), clusters.sizes)
    flat = cluster_of * statistic.n_cells + statistic.cells[clusters.order]
    return np.bincount(flat, minlength=len(clusters.sizes) * statistic.n_cells).reshape(
        len(clusters.sizes), statistic.n_cells).astype(float)


def _uses_tables(statistic: IndexStatistic, clusters: Clusters | None, how: ClusterResampling) -> bool:
    """Tables for i.i.d. and whole-cluster resampling of a table statistic (and for two-stage
    resampling when every cluster is one row, where it is the same thing); per-cluster tables
    are held in memory, so at most _CHUNK_ELEMENTS cluster x cell entries."""
    if not isinstance(statistic, TableStatistic):
        return False
    if clusters is None:
        return True
    whole = how == "clusters" or bool((clusters.sizes == 1).all())
    return whole and len(clusters.sizes) * statistic.n_cells <= _CHUNK_ELEMENTS


def _table_jackknife(statistic: TableStatistic, clusters: Clusters | None) -> np.ndarray:
    """Leave-one-out values from tables: the full table minus one row's cell (or one cluster's table)."""
    full = statistic.table()
    if clusters is None:
        occupied = np.flatnonzero(full)
        without = np.repeat(full[None, :], len(occupied), axis=0)
        without[np.arange(len(occupied)), occupied] -= 1.0
        values = np.empty(statistic.n_cells)
        values[occupied] = statistic.func(without)
        return values[statistic.cells]
    return np.asarray(statistic.func(full[None, :] - _cluster_tables(statistic, clusters)), dtype="float64")


def _evaluate(statistic: IndexStatistic, batch: Any) -> np.ndarray:
    return batch.evaluate(statistic) if isinstance(batch, _Ragged) else np.asarray(statistic(batch), dtype="float64")


def _jackknife(statistic: IndexStatistic, n: int, clusters: Clusters | None) -> np.ndarray:
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
    if isinstance(seed, int) and not isinstance(seed, bool) and seed < 0:
        raise StatsInputError(f"seed must be a whole number >= 0, got {seed}")
    if not callable(statistic):
        raise StatsInputError(f"statistic must be a function of an index matrix (e.g. mean_statistic(x)), "
                              f"got {type(statistic).__name__}")
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
        clusters = Clusters.from_labels(labels)
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
    if _uses_tables(statistic, clusters, cluster_resampling):
        parts = [_table_distribution(statistic, clusters, n_resamples, rng)]  # type: ignore[arg-type]
    elif clusters is None:
        parts = [_evaluate(statistic, b) for b in _iid_batches(n, n_resamples, rng)]
    elif isinstance(statistic, TableStatistic) and cluster_resampling == "clusters_then_rows":
        parts = [_two_stage_table_values(statistic, clusters, n_resamples, rng)]
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
    statistic: IndexStatistic, n: int, clusters: Clusters | None, valid: np.ndarray, estimate: float,
    probs: np.ndarray,
) -> tuple[np.ndarray, str]:
    share_below = (np.sum(valid < estimate) + 0.5 * np.sum(valid == estimate)) / len(valid)
    z0 = special.ndtri(share_below)
    if isinstance(statistic, TableStatistic) and (clusters is None or
                                                  len(clusters.sizes) * statistic.n_cells <= _CHUNK_ELEMENTS):
        jack = _table_jackknife(statistic, clusters)
    else:
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
    value: str = "score",
    by: Any = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    ci_level: float = 0.95,
    interval: Interval = "percentile",
    seed: Seed = 0,
) -> pd.DataFrame:
    """Tidy bootstrap CI of a statistic of one sample (``x``) or a paired sample (``x``, ``y``).

    ``statistic``: "mean", "mean_difference" (x - y), "pearson", "spearman", "kendall", or a
    function of one or two arrays vectorised along the last axis (e.g. ``lambda a: a.std(axis=-1)``).
    ``value``: the judgments-table column read when ``x``/``y`` name judges. ``by``: one row per group
    (``by="criterion"``); a judgments table with several criteria, conditions or repeats needs it (or a filter).
    """
    variables = {"x": x} if y is None else {"x": x, "y": y}
    if by is not None:
        return per_group(lambda part: bootstrap_ci(
            x, y, data=part, statistic=statistic, cluster=cluster, cluster_resampling=cluster_resampling,
            value=value, n_resamples=n_resamples, ci_level=ci_level, interval=interval, seed=seed), data, by,
            rows_of=judge_names(data, variables))
    res = resolve(data, variables, cluster=cluster, table_value=value, statistic="bootstrap_ci")
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
