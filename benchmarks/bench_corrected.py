"""Benchmark: ``stats.corrected_mean`` with 10,000 judged and 500 labelled items, wall time per method.

    python -m benchmarks.bench_corrected                  # from the repo root
    python -m benchmarks.bench_corrected --items 50000 --labelled 2000 --cluster

Two inputs per method: a judgments table (judge rows for every item, gold rows for the labelled ones;
what a user passes) and the same data as arrays (``table=None``: the estimator alone). Continuous
1-5-like scores for classical / PPI / PPI++ / calibrated; pass/fail for Rogan-Gladen. ``--cluster``
adds 10 items per document and cluster-robust intervals. Each timing is the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.stats import corrected_mean
from judgelab.stats.corrected.means import METHODS


def _table(judge: np.ndarray, gold: np.ndarray, docs: np.ndarray) -> pd.DataFrame:
    n = len(judge)
    base = {"run_id": "bench", "rubric": "bench", "criterion": "overall", "condition": "original", "repeat": 0,
            "status": judgments.OK}
    ids = np.array([f"i{k}" for k in range(n)])
    labelled = ~np.isnan(gold)
    j = pd.DataFrame({**base, "item_id": ids, "judge": "judge", "score": judge, "document_id": docs})
    g = pd.DataFrame({**base, "item_id": ids[labelled], "judge": "gold", "score": gold[labelled],
                      "document_id": docs[labelled]})
    return judgments.make_table(pd.concat([j, g], ignore_index=True))


def _best(repeat: int, *args: Any, **kwargs: Any) -> tuple[float, pd.DataFrame]:
    """The best wall time of ``repeat`` calls of corrected_mean(*args, **kwargs), and its result."""
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = corrected_mean(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    assert out is not None
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--labelled", type=int, default=500)
    parser.add_argument("--cluster", action="store_true", help="10 items per document, cluster-robust intervals")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    docs = np.arange(args.items) // 10
    gold_score = np.clip(rng.normal(3.2, 1.0, args.items), 1, 5)
    judge_score = np.clip(gold_score + rng.normal(0.3, 0.7, args.items), 1, 5)
    gold_pass = (rng.random(args.items) < 0.3).astype(float)
    judge_pass = np.where(gold_pass == 1, rng.random(args.items) < 0.85, rng.random(args.items) > 0.9).astype(float)
    hidden = np.ones(args.items, dtype=bool)
    hidden[rng.permutation(args.items)[:args.labelled]] = False
    data = {"score": (judge_score, np.where(hidden, np.nan, gold_score)),
            "pass/fail": (judge_pass, np.where(hidden, np.nan, gold_pass))}
    truth = {"score": gold_score, "pass/fail": gold_pass}
    tables = {kind: _table(j, g, docs) for kind, (j, g) in data.items()}
    cluster = "document_id" if args.cluster else None
    print(f"{args.items} judged items, {args.labelled} labelled; "
          f"{'cluster-robust by document (10 items each)' if args.cluster else 'independent items'}; "
          f"best of {args.repeat}")
    rows = []
    for method in METHODS:
        kind = "pass/fail" if method == "rogan_gladen" else "score"
        j, g = data[kind]
        t_table, out = _best(args.repeat, tables[kind], judge="judge", gold="gold", method=method, cluster=cluster)
        t_array, _ = _best(args.repeat, judge=j, gold=g, method=method, cluster=docs if args.cluster else None)
        est = out[out["metric"] == "mean"].iloc[0]
        rows.append({"method": method, "data": kind, "table_s": round(t_table, 4), "arrays_s": round(t_array, 4),
                     "estimate": round(float(est["estimate"]), 4),
                     "ci": f"[{est['ci_low']:.4f}, {est['ci_high']:.4f}]",
                     "mean_gold_all_items": round(float(truth[kind].mean()), 4)})
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
