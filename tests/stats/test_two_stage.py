"""Two-stage cluster draws (judgelab.stats.two_stage): the compiled count, the numpy count and the index path
agree on every resample; the draws depend on the seed only; and the resamples follow the same distribution as
the previous draw scheme (kept below as the reference: int64 draws from one sequential generator)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from judgelab.stats import two_stage
from judgelab.stats.bootstrap import TableStatistic, bootstrap, spearman_statistic
from judgelab.stats.two_stage import Clusters, blocks, cell_counts, draw_block, positions


@st.composite
def clustered_cells(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    """Cluster labels (shuffled: a cluster's rows need not be adjacent; equal or unequal sizes, some of one
    row) and each row's cell code out of ``n_cells``."""
    n_clusters = draw(st.integers(1, 30))
    if draw(st.booleans()):
        sizes = np.full(n_clusters, draw(st.integers(1, 12)))
    else:
        sizes = np.array(draw(st.lists(st.integers(1, 12), min_size=n_clusters, max_size=n_clusters)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(n_clusters), sizes)
    rng.shuffle(labels)
    n_cells = draw(st.integers(1, 30))
    return labels, rng.integers(0, n_cells, len(labels)), n_cells


@settings(max_examples=60, deadline=None)
@given(case=clustered_cells(), n_resamples=st.integers(1, 400), seed=st.integers(0, 2**32 - 1))
def test_compiled_and_numpy_counts_equal_the_index_path_on_every_resample(
    case: tuple[np.ndarray, np.ndarray, int], n_resamples: int, seed: int
) -> None:
    """Invariant (generated clusterings, cells and seeds): for every block, the compiled count, the numpy
    count and the bincount of the cells of the rows the index path draws are the same table; each resample
    holds as many rows as its drawn clusters; every drawn row lies in the cluster drawn for it."""
    labels, cells, n_cells = case
    clusters = Clusters.from_labels(labels)
    sorted_cells = cells[clusters.order].astype(np.int32)
    plan = blocks(clusters, n_resamples, np.random.default_rng(seed))
    assert sum(batch for _, batch in plan) == n_resamples
    for block_seed, batch in plan:
        block = draw_block(clusters, block_seed, batch, "clusters_then_rows")
        numpy_counts = cell_counts(clusters, block, sorted_cells, n_cells, compiled=False)
        compiled_counts = cell_counts(clusters, block, sorted_cells, n_cells, compiled=True)
        pos = positions(clusters, block)
        rows = clusters.order[pos]
        drawn_sizes = clusters.sizes[block.chosen].sum(axis=1)
        if block.lengths is None:
            index_counts = np.stack([np.bincount(cells[r], minlength=n_cells) for r in rows])
            per_row_cluster = np.repeat(block.chosen, clusters.sizes[0], axis=1)
        else:
            pieces = np.split(rows, np.cumsum(block.lengths)[:-1])
            index_counts = np.stack([np.bincount(cells[r], minlength=n_cells) for r in pieces])
            per_row_cluster = np.repeat(block.chosen.ravel(), clusters.sizes[block.chosen.ravel()])
            np.testing.assert_array_equal(block.lengths, drawn_sizes)
        np.testing.assert_array_equal(numpy_counts, index_counts)
        np.testing.assert_array_equal(compiled_counts, index_counts)
        np.testing.assert_array_equal(numpy_counts.sum(axis=1), drawn_sizes)
        codes = pd.factorize(labels)[0]  # the cluster numbers draw_block draws
        np.testing.assert_array_equal(codes[rows].ravel(), per_row_cluster.ravel())


def _scores(seed: int, n_clusters: int, equal: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = np.full(n_clusters, 8) if equal else rng.integers(1, 15, n_clusters)
    labels = np.repeat(np.arange(n_clusters), sizes)
    shift = rng.normal(0, 1, n_clusters)[labels]
    x = np.clip(np.round(3 + shift + rng.normal(0, 0.9, len(labels))), 1, 5)
    y = np.clip(np.round(3 + shift + rng.normal(0, 0.9, len(labels))), 1, 5)
    return x, y, labels


@pytest.mark.parametrize("equal", [True, False])
def test_two_stage_draws_depend_on_the_seed_only_not_on_threads_or_the_compiled_count(equal: bool,
                                                                                       monkeypatch) -> None:
    """Invariant: a two-stage clustered table bootstrap gives the same resampled values for 1, 2 or 3
    threads, and with the compiled count forced on or off."""
    x, y, labels = _scores(3, 200, equal)
    stat = spearman_statistic(x, y)
    assert isinstance(stat, TableStatistic)
    runs = {}
    for threads, kernel_from in (("1", 10**12), ("2", 10**12), ("3", 0), ("1", 0)):
        monkeypatch.setenv("JUDGELAB_STATS_THREADS", threads)
        monkeypatch.setattr(two_stage, "KERNEL_MIN_DRAWS", kernel_from)
        monkeypatch.setattr(two_stage, "BLOCK_ROWS", 50_000)  # several blocks, the last one short
        runs[threads, kernel_from] = bootstrap(stat, len(x), cluster=labels, n_resamples=1500, seed=8).distribution
    first = runs["1", 10**12]
    assert len(first) == 1500 and np.unique(first).size > 100
    for other in runs.values():
        np.testing.assert_array_equal(first, other)


def _previous_two_stage(cells: np.ndarray, labels: np.ndarray, n_cells: int, n_resamples: int,
                        seed: int) -> np.ndarray:
    """The draw scheme before the block draws (reference): one sequential generator, clusters then rows as
    int64 (equal sizes) or floor(uniform * size) (unequal), counted by bincount."""
    clusters = Clusters.from_labels(labels)
    rng = np.random.default_rng(seed)
    n_clusters = len(clusters.sizes)
    out = []
    for _ in range(n_resamples):
        chosen = rng.integers(0, n_clusters, size=n_clusters)
        if clusters.equal:
            size = int(clusters.sizes[0])
            pos = (rng.integers(0, size, size=(n_clusters, size)) + clusters.starts[chosen][:, None]).ravel()
        else:
            of_row = np.repeat(chosen, clusters.sizes[chosen])
            pos = clusters.starts[of_row] + np.floor(rng.random(len(of_row)) * clusters.sizes[of_row]).astype(int)
        out.append(np.bincount(cells[clusters.order[pos]], minlength=n_cells))
    return np.array(out, dtype=float)


@pytest.mark.parametrize("equal", [True, False])
def test_block_draws_follow_the_same_distribution_as_the_previous_scheme(equal: bool) -> None:
    """Invariant: the resampled Spearman correlations of the block draws and of the previous scheme are two
    samples of one distribution (two-sample Kolmogorov-Smirnov p > 0.001; standard errors within 8%), on
    clustered 1-5 scores with equal and unequal clusters."""
    x, y, labels = _scores(5, 120, equal)
    stat = spearman_statistic(x, y)
    assert isinstance(stat, TableStatistic)
    new = bootstrap(stat, len(x), cluster=labels, n_resamples=3000, seed=1).distribution
    old = stat.func(_previous_two_stage(stat.cells, labels, stat.n_cells, 3000, seed=2))
    assert sps.ks_2samp(new, old).pvalue > 0.001
    assert abs(new.std() / old.std() - 1) < 0.08


@pytest.mark.parametrize("size", [1, 2, 3, 7, 10, 100, 255, 256])
def test_raw_words_give_exactly_uniform_positions(size: int) -> None:
    """Invariant (exhaustive over every 16-bit draw): the kept draws map to each position 0..size-1 equally
    often, so a within-cluster position is exactly uniform."""
    chunks = np.arange(1 << 16, dtype=np.uint64).reshape(-1, 4)
    words = chunks[:, 0] | (chunks[:, 1] << np.uint64(16)) | (chunks[:, 2] << np.uint64(32)) | (chunks[:, 3] << np.uint64(48))
    kept = two_stage._accepted(words, size)
    counts = np.bincount(kept, minlength=size)
    assert len(counts) == size and (counts == counts[0]).all() and counts.sum() == (1 << 16) - (1 << 16) % size


@settings(max_examples=25, deadline=None)
@given(case=clustered_cells(), n_resamples=st.integers(1, 60), seed=st.integers(0, 2**32 - 1),
       short=st.integers(1, 5000))
def test_blocks_short_of_raw_words_draw_more_the_same_way_in_every_path(
    case: tuple[np.ndarray, np.ndarray, int], n_resamples: int, seed: int, short: int
) -> None:
    """Invariant (generated clusterings; the raw-word margin forced short so blocks run out of kept draws):
    the compiled count and the numpy count draw the same extra words and equal the index path's table."""
    labels, cells, n_cells = case
    clusters = Clusters.from_labels(labels)
    sorted_cells = cells[clusters.order].astype(np.int32)
    old = two_stage._RAW_MARGIN
    two_stage._RAW_MARGIN = -short
    try:
        for block_seed, batch in blocks(clusters, n_resamples, np.random.default_rng(seed)):
            a = draw_block(clusters, block_seed, batch, "clusters_then_rows")
            b = draw_block(clusters, block_seed, batch, "clusters_then_rows")
            compiled = cell_counts(clusters, a, sorted_cells, n_cells, compiled=True)
            numpy_counts = cell_counts(clusters, b, sorted_cells, n_cells, compiled=False)
            rows = clusters.order[positions(clusters, b)]
            index = np.stack([np.bincount(cells[r], minlength=n_cells) for r in
                              (rows if b.lengths is None else np.split(rows, np.cumsum(b.lengths)[:-1]))])
            np.testing.assert_array_equal(compiled, numpy_counts)
            np.testing.assert_array_equal(compiled, index)
    finally:
        two_stage._RAW_MARGIN = old
