"""Cluster resampling draws: clusters with replacement, then (two-stage) rows with replacement within each.

Every clustered bootstrap reads its resamples here, so the index path (a statistic of row indices) and the
table path (a statistic of cell counts) see the same resamples for a seed. Resamples come in blocks of a
size fixed by the data (about ``BLOCK_ROWS`` drawn rows per block, never by the machine); each block has its
own generator, seeded in block order from the caller's, so blocks can be drawn and counted on a thread pool
and a seed gives the same resamples whatever the number of threads.

Within-cluster draws, when clusters are equal in size, are positions ``0..size-1``: for clusters of up to 256
rows read from the block generator's raw 64-bit words, four 16-bit draws each, kept by Lemire's
multiply-and-reject (:func:`_accepted`), and for larger ones drawn as 16-bit (or 64-bit) integers; when
clusters differ in size they are uniforms on [0, 1) (row ``floor(u * size)`` of the drawn cluster). A table statistic's resample is the bincount of its drawn rows'
cells; with many draws (``KERNEL_MIN_DRAWS``) the count runs in a compiled loop (numba, compiled once per
process), which gives the same counts as numpy's gather-and-bincount without the temporary index arrays.
The draws themselves are the floor: one random value per drawn row per resample.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.stats._inputs import StatsInputError

__all__ = ["BLOCK_ROWS", "KERNEL_MIN_DRAWS", "Block", "ClusterResampling", "Clusters", "blocks", "cell_counts",
           "draw_block", "iter_positions", "positions"]

ClusterResampling = Literal["clusters_then_rows", "clusters"]

BLOCK_ROWS = 2_000_000  # drawn rows per block (about 4 MB of 16-bit draws): fixed, so a seed fixes the resamples
KERNEL_MIN_DRAWS = 20_000_000  # drawn rows of a whole bootstrap from which the compiled count pays its compile
_SMALL = np.iinfo(np.uint16).max + 1
_CHUNK = 1 << 16  # raw words are read as four 16-bit draws
_RAW_MAX = 256  # cluster sizes drawn from raw words: at most 256 / 65536 of the draws are rejected
_RAW_MARGIN = 64  # draws beyond the expected rejections + 8 standard deviations


@dataclass(frozen=True)
class Clusters:
    """Rows grouped by cluster: ``order`` lists row indices cluster by cluster."""

    order: np.ndarray  # row indices sorted by cluster
    starts: np.ndarray  # first position of each cluster in ``order``
    sizes: np.ndarray

    @classmethod
    def from_labels(cls, labels: np.ndarray) -> Clusters:
        codes, _ = pd.factorize(pd.Series(labels, dtype=object))
        if (codes < 0).any():
            raise StatsInputError("cluster labels must not be missing")
        order = np.argsort(codes, kind="stable")
        sizes = np.bincount(codes)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        return cls(order=order, starts=starts, sizes=sizes)

    @property
    def equal(self) -> bool:
        return bool((self.sizes == self.sizes[0]).all())


@dataclass
class Block:
    """The draws of ``batch`` resamples: ``chosen`` (batch, n_clusters) cluster numbers; ``within`` the
    within-cluster draws -- equal sizes up to 256: raw 64-bit words of the block's generator, each four
    16-bit draws turned into positions by Lemire's multiply-and-reject (exact; see :func:`_accepted`);
    larger equal sizes: (batch, n_clusters, size) positions; unequal: one uniform on [0, 1) per drawn row,
    resample after resample; whole clusters: None. ``lengths``: rows per resample when unequal."""

    chosen: np.ndarray
    within: np.ndarray | None
    lengths: np.ndarray | None
    gen: np.random.Generator | None = None  # the block's generator, for more raw words

    @property
    def batch(self) -> int:
        return int(self.chosen.shape[0])

    @property
    def raw(self) -> bool:
        return self.gen is not None

    def more_words(self) -> None:
        """Append as many raw words again (on the rare block whose rejections outrun the margin)."""
        assert self.gen is not None and self.within is not None
        self.within = np.concatenate([self.within, self.gen.bit_generator.random_raw(len(self.within))])


def blocks(clusters: Clusters, n_resamples: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """(seed, resamples) of each block, seeds drawn from ``rng`` in block order."""
    per_block = max(1, BLOCK_ROWS // max(int(clusters.sizes.sum()), 1))
    sizes = [min(per_block, n_resamples - start) for start in range(0, n_resamples, per_block)]
    seeds = rng.integers(0, 2**63 - 1, size=len(sizes))
    return [(int(s), b) for s, b in zip(seeds, sizes, strict=True)]


def draw_block(clusters: Clusters, seed: int, batch: int, how: ClusterResampling) -> Block:
    """One block's draws (see :class:`Block`)."""
    gen = np.random.default_rng(seed)
    n_clusters = len(clusters.sizes)
    chosen = gen.integers(0, n_clusters, size=(batch, n_clusters),
                          dtype=np.uint32 if n_clusters < 2**32 else np.int64)
    if how == "clusters":
        return Block(chosen, None, None if clusters.equal else clusters.sizes[chosen].sum(axis=1))
    if clusters.equal:
        size = int(clusters.sizes[0])
        if size <= _RAW_MAX:
            need = batch * n_clusters * size
            rejected = need * (_CHUNK % size) / _CHUNK
            words = max(1, -(-(need + int(rejected + 8 * np.sqrt(rejected)) + _RAW_MARGIN) // 4))
            return Block(chosen, gen.bit_generator.random_raw(words), None, gen)
        within = gen.integers(0, size, size=(batch, n_clusters, size), dtype=np.uint16 if size <= _SMALL else np.int64)
        return Block(chosen, within, None)
    reps = clusters.sizes[chosen]
    return Block(chosen, gen.random(int(reps.sum())), reps.sum(axis=1))


def positions(clusters: Clusters, block: Block) -> np.ndarray:
    """Positions in ``clusters.order`` of every drawn row: (batch, rows) when every resample has the same
    length, else flat, resample after resample (split by ``block.lengths``)."""
    chosen = block.chosen.astype(np.intp)
    if block.within is None:
        if block.lengths is None:
            size = int(clusters.sizes[0])
            return (clusters.starts[chosen][..., None] + np.arange(size)).reshape(block.batch, -1)
        flat = chosen.ravel()
        reps = clusters.sizes[flat]
        block_starts = np.repeat(np.cumsum(reps) - reps, reps)
        return np.repeat(clusters.starts[flat], reps) + (np.arange(int(reps.sum())) - block_starts)
    if block.lengths is None:
        within = _within_positions(block, int(clusters.sizes[0])) if block.raw else block.within
        return (clusters.starts[chosen][..., None] + within).reshape(block.batch, -1)
    cluster_of_row = np.repeat(chosen.ravel(), clusters.sizes[chosen.ravel()])
    within = np.floor(block.within * clusters.sizes[cluster_of_row]).astype(np.intp)
    return clusters.starts[cluster_of_row] + within


def _accepted(words: np.ndarray, size: int) -> np.ndarray:
    """Uniform positions 0..size-1 from raw words, in order: each word is four 16-bit draws x (low bits
    first); m = x * size is kept when its low 16 bits are at least 2**16 mod size, and gives m >> 16
    (Lemire's method: every kept value is equally likely)."""
    chunks = np.stack([(words >> np.uint64(shift)) & np.uint64(0xFFFF) for shift in (0, 16, 32, 48)], axis=1)
    m = chunks.ravel().astype(np.uint32) * np.uint32(size)
    return (m[(m & np.uint32(0xFFFF)) >= np.uint32(_CHUNK % size)] >> np.uint32(16)).astype(np.uint16)


def _within_positions(block: Block, size: int) -> np.ndarray:
    """(batch, n_clusters, size) positions of a raw block, drawing more words while too few are kept."""
    need = block.chosen.size * size
    while len(kept := _accepted(block.within, size)) < need:  # type: ignore[arg-type]
        block.more_words()
    return kept[:need].reshape(block.batch, -1, size)


def iter_positions(
    clusters: Clusters, n_resamples: int, rng: np.random.Generator, how: ClusterResampling
) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """(positions, lengths) per block, in block order (the index path's resamples)."""
    for seed, batch in blocks(clusters, n_resamples, rng):
        block = draw_block(clusters, seed, batch, how)
        yield positions(clusters, block), block.lengths


def cell_counts(clusters: Clusters, block: Block, sorted_cells: np.ndarray, n_cells: int,
                compiled: bool) -> np.ndarray:
    """(batch, n_cells) float cell counts of a two-stage block; ``sorted_cells`` are the rows' cells in
    ``clusters.order``. ``compiled`` counts in the numba loop (same counts, no temporary arrays)."""
    kernels = _kernels() if compiled else None
    if block.within is None:
        raise StatsInputError("cell counts are drawn per row only for two-stage resampling")
    if kernels is not None:
        if block.lengths is None:
            table = sorted_cells.reshape(len(clusters.sizes), -1)
            if not block.raw:
                return kernels[0](table, block.chosen, block.within, n_cells)
            while True:  # the same words as _within_positions: more only when the kept ones run out
                counts, complete = kernels[2](table, block.chosen, block.within, n_cells)
                if complete:
                    return counts
                block.more_words()
        return kernels[1](sorted_cells, clusters.starts, clusters.sizes, block.chosen, block.within, n_cells)
    cells = sorted_cells[positions(clusters, block)].astype(np.int64)
    offsets = np.arange(block.batch, dtype=np.int64) * n_cells
    cells += offsets[:, None] if block.lengths is None else np.repeat(offsets, block.lengths)
    return np.bincount(cells.ravel(), minlength=block.batch * n_cells).reshape(block.batch, n_cells).astype(float)


@lru_cache(maxsize=1)
def _kernels() -> tuple[Callable[..., Any], ...] | None:
    """The compiled count loops (equal clusters from positions, unequal clusters, equal clusters from raw
    words), or None without numba (numpy then counts)."""
    try:
        import numba
    except ImportError:  # pragma: no cover - numba is a dependency; the numpy count gives the same numbers
        return None
    jit: Any = numba.njit(nogil=True, cache=False)

    @jit
    def equal(table: Any, chosen: Any, within: Any, n_cells: int) -> Any:  # pragma: no cover - compiled
        batch, n_clusters = chosen.shape
        size = within.shape[2]
        out = np.zeros((batch, n_cells))
        for b in range(batch):
            for j in range(n_clusters):
                row = table[chosen[b, j]]
                for k in range(size):
                    out[b, row[within[b, j, k]]] += 1.0
        return out

    @jit
    def ragged(cells: Any, starts: Any, sizes: Any, chosen: Any, uniforms: Any, n_cells: int) -> Any:  # pragma: no cover
        batch, n_clusters = chosen.shape
        out = np.zeros((batch, n_cells))
        at = 0
        for b in range(batch):
            for j in range(n_clusters):
                c = chosen[b, j]
                size, start = sizes[c], starts[c]
                for _ in range(size):
                    out[b, cells[start + int(np.floor(uniforms[at] * size))]] += 1.0
                    at += 1
        return out

    @jit
    def raw(table: Any, chosen: Any, words: Any, n_cells: int) -> Any:  # pragma: no cover - compiled
        batch, n_clusters = chosen.shape
        size = table.shape[1]
        floor = np.uint32(65536 % size)
        out = np.zeros((batch, n_cells))
        at, left, word = 0, 0, np.uint64(0)
        for b in range(batch):
            for j in range(n_clusters):
                row = table[chosen[b, j]]
                for _ in range(size):
                    while True:  # the next kept 16-bit draw, as _accepted keeps them
                        if left == 0:
                            if at == len(words):
                                return out, False
                            word, left = words[at], 4
                            at += 1
                        m = np.uint32(word & np.uint64(0xFFFF)) * np.uint32(size)
                        word >>= np.uint64(16)
                        left -= 1
                        if (m & np.uint32(0xFFFF)) >= floor:
                            break
                    out[b, row[m >> np.uint32(16)]] += 1.0
        return out, True

    return equal, ragged, raw
