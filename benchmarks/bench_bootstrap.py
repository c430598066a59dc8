"""Benchmark: judgelab's bootstrap vs scipy.stats.bootstrap for a Spearman CI, same data, one run.

    python -m benchmarks.bench_bootstrap                      # from the repo root; 10,000 items x 10,000 resamples
    python -m benchmarks.bench_bootstrap --items 2000 --interval bca
    python -m benchmarks.bench_bootstrap --continuous          # no ties: every value distinct

scipy gets its fastest fair setup: ``paired=True, vectorized=True`` with a statistic that ranks
each resample with ``scipy.stats.rankdata(axis=-1)`` and correlates the ranks, in batches.
judgelab ranks once (dense codes) and turns each resample's counts into average ranks.
Prints both wall times, their ratio and both intervals (they differ only by Monte Carlo error).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats

from judgelab.stats.bootstrap import bootstrap, rowwise_pearson, spearman_statistic


def scipy_spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman rho along the last axis, vectorised (what scipy.stats.bootstrap calls)."""
    rx = stats.rankdata(x, axis=-1)
    ry = stats.rankdata(y, axis=-1)
    return rowwise_pearson(np.atleast_2d(rx), np.atleast_2d(ry)).reshape(np.shape(x)[:-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--interval", choices=["percentile", "bca"], default="percentile")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--continuous", action="store_true", help="distinct continuous scores instead of 1-5 ratings")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    if args.continuous:
        human = rng.normal(size=args.items)
        judge = human + rng.normal(0, 1.0, args.items)
        kind = "distinct continuous scores"
    else:  # 1-5 ratings: many ties, like real judge data
        human = rng.integers(1, 6, args.items).astype(float)
        judge = np.clip(np.round(human + rng.normal(0, 1.2, args.items)), 1, 5)
        kind = "1-5 scores with ties"
    print(f"data: {args.items} items, {kind}; Spearman rho = {stats.spearmanr(judge, human).statistic:.4f}")
    print(f"{args.resamples} resamples, {args.interval} 95% interval")

    start = time.perf_counter()
    ours = bootstrap(spearman_statistic(judge, human), args.items, n_resamples=args.resamples,
                     interval=args.interval, seed=args.seed, return_distribution=False)  # type: ignore[arg-type]
    ours_s = time.perf_counter() - start

    start = time.perf_counter()
    ref = stats.bootstrap((judge, human), scipy_spearman, paired=True, vectorized=True, n_resamples=args.resamples,
                          batch=max(1, 2_000_000 // args.items), method="BCa" if args.interval == "bca" else "percentile",
                          random_state=args.seed)
    scipy_s = time.perf_counter() - start

    print(f"judgelab.stats.bootstrap : {ours_s:8.2f} s   CI [{ours.ci_low:.4f}, {ours.ci_high:.4f}]  ({ours.method})")
    print(f"scipy.stats.bootstrap    : {scipy_s:8.2f} s   CI [{ref.confidence_interval.low:.4f}, "
          f"{ref.confidence_interval.high:.4f}]")
    print(f"speed-up (scipy time / judgelab time): {scipy_s / ours_s:.1f}x")


if __name__ == "__main__":
    main()
