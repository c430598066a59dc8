"""Benchmark: judgelab's table bootstrap vs scipy.stats.bootstrap, per statistic, plain and clustered, one run.

    python -m benchmarks.bench_bootstrap                      # 10,000 items x 10,000 resamples, every statistic
    python -m benchmarks.bench_bootstrap --items 2000 --statistics spearman mae --interval bca
    python -m benchmarks.bench_bootstrap --continuous --statistics spearman   # distinct values: the index path

Data: judge and human scores on a 1-5 scale (many ties, like real judge data), in clusters of
``--cluster-size`` items whose scores share a cluster-level shift.

Plain: judgelab resamples the 5 x 5 joint table (multinomial counts); scipy.stats.bootstrap gets its
fastest fair setup: ``paired=True`` and a statistic vectorised over resamples where one exists
(ranks by ``scipy.stats.rankdata(axis=-1)`` for Spearman; kappa from per-level shares and a
weight lookup; MAE and agreement as means), else (Kendall: scipy has no vectorised tau) one
``scipy.stats.kendalltau`` call per resample.

Clustered (whole clusters resampled with replacement): scipy has no clustered mode, so the scipy
reference is scipy.stats.bootstrap over the cluster ids, with a vectorised statistic that gathers the
drawn clusters' rows and applies the statistic above (how one bootstraps clusters with scipy). Also
shown: a hand-vectorised numpy cluster bootstrap (the same gather without scipy's machinery) and
judgelab's previous clustered path (index matrices of rows, each resample's table counted by bincount).

judgelab's table path draws its resamples in fixed blocks on a thread pool (JUDGELAB_STATS_THREADS,
default: the usable CPUs); ``--threads 1`` measures it on one core. scipy runs on one.
Prints wall times, the ratios and the intervals (equal within Monte Carlo error).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats

from judgelab.stats.agreement import agreement_statistic, kappa_statistic
from judgelab.stats.bootstrap import (
    TableStatistic,
    _stats_threads,
    bootstrap,
    kendall_statistic,
    rowwise_pearson,
    spearman_statistic,
)
from judgelab.stats.errors import error_statistic

STATISTICS = ("spearman", "kendall", "kappa", "kappa_linear", "kappa_quadratic", "mae", "agreement")
LEVELS = np.arange(1, 6)


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    return rowwise_pearson(stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1))


def _kendall(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    return np.array([stats.kendalltau(a, b).statistic for a, b in zip(x, y, strict=True)])


def _kappa(weight: np.ndarray) -> Callable[..., np.ndarray]:
    def stat(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        x, y = np.atleast_2d(x).astype(np.int64), np.atleast_2d(y).astype(np.int64)
        observed = weight[x - 1, y - 1].mean(axis=-1)
        px = np.stack([(x == v).mean(axis=-1) for v in LEVELS], axis=-1)
        py = np.stack([(y == v).mean(axis=-1) for v in LEVELS], axis=-1)
        return 1 - observed / np.einsum("bi,ij,bj->b", px, weight, py)

    return stat


def _mae(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.abs(x - y).mean(axis=-1)


def _agreement(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return (x == y).mean(axis=-1)


def _pairs(name: str, judge: np.ndarray, human: np.ndarray) -> tuple[Callable, Callable]:
    """(judgelab statistic, scipy-style vectorised statistic) for one metric."""
    i, j = np.indices((5, 5))
    weights = {"kappa": (i != j).astype(float), "kappa_linear": np.abs(i - j).astype(float),
               "kappa_quadratic": ((i - j) ** 2).astype(float)}
    if name == "spearman":
        return spearman_statistic(judge, human), _spearman
    if name == "kendall":
        return kendall_statistic(judge, human), _kendall
    if name == "mae":
        return error_statistic("mae", judge, human), _mae
    codes_j, codes_h = judge.astype(np.int64) - 1, human.astype(np.int64) - 1
    if name == "agreement":
        return agreement_statistic(codes_j, codes_h), _agreement
    kind = {"kappa": None, "kappa_linear": "linear", "kappa_quadratic": "quadratic"}[name]
    return kappa_statistic(codes_j, codes_h, 5, kind), _kappa(weights[name])  # type: ignore[arg-type]


def _numpy_cluster_bootstrap(func: Callable, judge: np.ndarray, human: np.ndarray, size: int, n_resamples: int,
                             seed: int, level: float) -> tuple[float, float]:
    """Hand-vectorised whole-cluster percentile bootstrap (equal cluster sizes: rows are reshaped)."""
    rng = np.random.default_rng(seed)
    jc, hc = judge.reshape(-1, size), human.reshape(-1, size)
    n_clusters = jc.shape[0]
    step = max(1, 2_000_000 // judge.size)
    values = []
    for start in range(0, n_resamples, step):
        chosen = rng.integers(0, n_clusters, size=(min(step, n_resamples - start), n_clusters))
        values.append(func(jc[chosen].reshape(len(chosen), -1), hc[chosen].reshape(len(chosen), -1)))
    dist = np.concatenate(values)
    return tuple(np.quantile(dist, [(1 - level) / 2, (1 + level) / 2]))  # type: ignore[return-value]


def _scipy_cluster_bootstrap(func: Callable, judge: np.ndarray, human: np.ndarray, size: int, n_resamples: int,
                             seed: int, method: str) -> tuple[float, float]:
    """scipy.stats.bootstrap over cluster ids; the statistic gathers the drawn clusters' rows."""
    jc, hc = judge.reshape(-1, size), human.reshape(-1, size)

    def statistic(ids: np.ndarray, axis: int = -1) -> np.ndarray:
        ids = np.atleast_2d(ids)
        return func(jc[ids].reshape(len(ids), -1), hc[ids].reshape(len(ids), -1))

    res = stats.bootstrap((np.arange(len(jc)),), statistic, vectorized=True, n_resamples=n_resamples,
                          batch=max(1, 2_000_000 // judge.size), method=method, random_state=seed)
    return res.confidence_interval.low, res.confidence_interval.high


def _timed(func: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    out = func()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--cluster-size", type=int, default=20)
    parser.add_argument("--interval", choices=["percentile", "bca"], default="percentile")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--statistics", nargs="+", choices=STATISTICS, default=list(STATISTICS))
    parser.add_argument("--no-clustered", action="store_true", help="plain bootstraps only")
    parser.add_argument("--continuous", action="store_true", help="distinct continuous scores (Spearman, MAE only)")
    parser.add_argument("--threads", type=int, help="threads of judgelab's table path (default: the usable CPUs)")
    args = parser.parse_args()
    if args.threads is not None:
        os.environ["JUDGELAB_STATS_THREADS"] = str(args.threads)
    if args.items % args.cluster_size:
        parser.error("--items must be a multiple of --cluster-size")

    rng = np.random.default_rng(args.seed)
    n_clusters = args.items // args.cluster_size
    shift = np.repeat(rng.normal(0, 0.7, n_clusters), args.cluster_size)
    if args.continuous:
        human = rng.normal(size=args.items) + shift
        judge = human + rng.normal(0, 1.0, args.items)
        args.statistics = [s for s in args.statistics if s in ("spearman", "mae")]
        kind = "distinct continuous scores"
    else:
        human = np.clip(np.round(3 + shift + rng.normal(0, 1.0, args.items)), 1, 5)
        judge = np.clip(np.round(human + rng.normal(0, 1.0, args.items)), 1, 5)
        kind = "1-5 scores with ties"
    clusters = np.repeat(np.arange(n_clusters), args.cluster_size)
    method = "BCa" if args.interval == "bca" else "percentile"
    print(f"data: {args.items} items ({kind}) in {n_clusters} clusters of {args.cluster_size}; "
          f"{args.resamples} resamples, {args.interval} 95% intervals; judgelab's table path on "
          f"{_stats_threads()} thread(s), scipy on 1")
    floor_s = np.nan
    if not args.no_clustered:
        # every exact whole-cluster bootstrap draws n_clusters indices per resample (scipy over clusters too)
        draw_rng = np.random.default_rng(args.seed)
        _, floor_s = _timed(lambda: [draw_rng.integers(0, n_clusters, size=(1000, n_clusters),
                                                          dtype=np.uint16 if n_clusters <= 65536 else np.int64)
                                     for _ in range(0, args.resamples, 1000)])
        print(f"clustered floor: drawing the {args.resamples} x {n_clusters} cluster indices alone (numpy, "
              f"one thread) takes {floor_s:.3f} s; on one thread no clustered bootstrap beats scipy by more than "
              f"scipy's time / that (the ceiling column)")
    rows = []
    for name in args.statistics:
        ours_stat, ref_stat = _pairs(name, judge, human)
        path = "table" if isinstance(ours_stat, TableStatistic) else "index"
        # warm-up, untimed, on both sides (imports, thread pool, first allocations): 20 resamples each
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bootstrap(ours_stat, args.items, n_resamples=20, cluster=None if args.no_clustered else clusters,
                      cluster_resampling="clusters")
            stats.bootstrap((judge, human), ref_stat, paired=True, vectorized=True, n_resamples=20, method=method)
        ours, ours_s = _timed(lambda s=ours_stat: bootstrap(s, args.items, n_resamples=args.resamples,
                                                            interval=args.interval, seed=args.seed,
                                                            return_distribution=False))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, ref_s = _timed(lambda f=ref_stat: stats.bootstrap(
                (judge, human), f, paired=True, vectorized=True, n_resamples=args.resamples,
                batch=max(1, 2_000_000 // args.items), method=method, random_state=args.seed))
        ci = ref.confidence_interval  # type: ignore[attr-defined]
        print(f"\n{name} ({path} path), plain")
        print(f"  judgelab            {ours_s:8.3f} s  CI [{ours.ci_low:.4f}, {ours.ci_high:.4f}]")  # type: ignore[attr-defined]
        print(f"  scipy.stats.bootstrap {ref_s:6.3f} s  CI [{ci.low:.4f}, {ci.high:.4f}]   ratio {ref_s / ours_s:7.1f}x")
        row = [name, path, ref_s / ours_s]
        if not args.no_clustered:
            common = dict(cluster=clusters, cluster_resampling="clusters", n_resamples=args.resamples,
                          seed=args.seed, return_distribution=False)
            ours_c, ours_c_s = _timed(lambda s=ours_stat, c=common: bootstrap(s, args.items, **c))  # type: ignore[arg-type]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scipy_ci, scipy_s = _timed(lambda f=ref_stat: _scipy_cluster_bootstrap(
                    f, judge, human, args.cluster_size, args.resamples, args.seed, method))
                numpy_ci, numpy_s = _timed(lambda f=ref_stat: _numpy_cluster_bootstrap(
                    f, judge, human, args.cluster_size, args.resamples, args.seed, 0.95))
            prev, prev_s = _timed(lambda s=ours_stat, c=common: bootstrap(lambda idx: s(idx), args.items, **c))  # type: ignore[arg-type]
            print(f"{name}, clustered (whole clusters)")
            print(f"  judgelab            {ours_c_s:8.3f} s  CI [{ours_c.ci_low:.4f}, {ours_c.ci_high:.4f}]")  # type: ignore[attr-defined]
            print(f"  scipy over clusters {scipy_s:8.3f} s  CI [{scipy_ci[0]:.4f}, {scipy_ci[1]:.4f}]"  # type: ignore[index]
                  f"   ratio {scipy_s / ours_c_s:7.1f}x")
            print(f"  numpy cluster boot. {numpy_s:8.3f} s  CI [{numpy_ci[0]:.4f}, {numpy_ci[1]:.4f}]"  # type: ignore[index]
                  f"   ratio {numpy_s / ours_c_s:7.1f}x")
            print(f"  judgelab index path {prev_s:8.3f} s  CI [{prev.ci_low:.4f}, {prev.ci_high:.4f}]"  # type: ignore[attr-defined]
                  f"   ratio {prev_s / ours_c_s:7.1f}x")
            row += [scipy_s / ours_c_s, numpy_s / ours_c_s, prev_s / ours_c_s, scipy_s / floor_s]
        rows.append(row)
    print("\nratios (other / judgelab), measured in this run:")
    header = f"  {'statistic':16s} {'path':6s} {'vs scipy':>9s}"
    if not args.no_clustered:
        header += f" {'clustered vs scipy':>19s} {'vs numpy':>9s} {'vs index path':>14s} {'ceiling':>10s}"
    print(header)
    for row in rows:
        line = f"  {row[0]:16s} {row[1]:6s} {row[2]:8.1f}x"
        if len(row) > 3:
            line += f" {row[3]:18.1f}x {row[4]:8.1f}x {row[5]:13.1f}x {row[6]:9.0f}x"
        print(line)


if __name__ == "__main__":
    main()
