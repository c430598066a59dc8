"""Is pairwise judge A more accurate than judge B? A paired comparison over both presentation orders.

Each judge gives a verdict on every item in both orders (conditions "original" and "swapped"), so the
unit of independent evidence is the item, carrying two verdicts. :func:`compare_pairwise_judges` scores
each (item, order) cell against the item's gold label under a ``policy`` (as
:func:`judgelab.stats.pairwise_accuracy`), keeps the cells both judges can be scored on, and reports:

- each judge's accuracy pooled over both orders (``accuracy_mean``) and the difference A - B, with
  percentile (or BCa) bootstrap intervals that resample items -- the same resamples for all three rows, so
  the difference is paired -- and the difference's bootstrap p-value;
- McNemar's test on "correct in both orders" per item (``correct_both``): items where exactly one judge is
  right in both orders decide it (exact binomial when fewer than 25 do).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.judgments import distinct_text
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, Interval, Seed, TableStatistic, bootstrap
from judgelab.stats.flips import mcnemar_test
from judgelab.stats.pairwise import PairwiseInputError, _gold_labels, _rows_present, _verdict_matrix
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["COMPARE_POLICIES", "compare_pairwise_judges"]

ComparePolicy = Literal["exclude", "tie", "wrong"]
COMPARE_POLICIES: tuple[str, ...] = ("exclude", "tie", "wrong")


def _cells(verdicts: np.ndarray, gold: np.ndarray, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(correct, usable) per item x order, under ``policy`` (pairwise_accuracy's rules)."""
    unscored = np.vectorize(lambda v: v is None, otypes=[bool])(verdicts)
    v = np.where(unscored, "TIE", verdicts) if policy == "tie" else verdicts
    is_tie = v == "TIE"
    gold_col = gold[:, None]
    if policy == "exclude":
        usable = ~unscored & ~is_tie & (gold_col != "TIE")
        return usable & (v == gold_col), usable
    usable = np.ones(v.shape, dtype=bool)
    if policy == "tie":
        return v == gold_col, usable
    return ~unscored & (v == gold_col) & (~is_tie | (gold_col == "TIE")), usable


def compare_pairwise_judges(
    table: pd.DataFrame,
    a: str,
    b: str,
    gold: str | Mapping[str, str] | pd.Series = "gold",
    *,
    policy: ComparePolicy = "exclude",
    conditions: tuple[str, str] = ("original", "swapped"),
    interval: Interval = "percentile", n_resamples: int = DEFAULT_RESAMPLES, ci_level: float = 0.95, seed: Seed = 0,
) -> pd.DataFrame:
    """Accuracy of pairwise judges ``a`` and ``b`` against gold over both orders, their paired difference, and
    McNemar's test on correct-in-both-orders.

    ``table``: a judgments table with both judges' winners ("A"/"B"/"TIE", original labels) in both
    ``conditions`` and gold rows (``gold``: the gold judge's name, or a mapping item_id -> winner). ``policy``:
    how ties and unscored verdicts count -- "exclude" (left out), "tie" (an unscored verdict is a tie; LLMBar's
    convention) or "wrong" (see :func:`judgelab.stats.pairwise_accuracy`). Only items both judges judged are
    compared (the others are counted in ``n_items_unshared``; items either judge has in one order only are left
    out and counted in ``n_items_one_order``, as pairwise_accuracy leaves them out), and only (item, order)
    cells usable for both judges (``n_cells_excluded`` counts the rest), so under "tie" or "wrong" each judge's row equals its
    ``accuracy_mean`` from pairwise_accuracy on the shared items.

    Rows (``part``): "a", "b" (``accuracy_mean``, ``n`` = cells), "difference" (A - B, bootstrap p = 2 x (the
    smaller count of resampled differences on one side of 0, + 1) / (B + 1)), "correct_both" (share of items
    right in both orders, A - B, McNemar p; ``n`` = items usable in both orders for both judges).
    """
    if policy not in COMPARE_POLICIES:
        raise PairwiseInputError(f"policy must be one of {COMPARE_POLICIES}, not {policy!r} (JudgeBench's 'net' "
                                 "rule scores pairs, not cells: compare pairwise_accuracy(policy='net') rows instead)")
    if a == b:
        raise PairwiseInputError(f"compare two different judges, not {a!r} with itself")
    missing = [c for c in ("item_id", "judge", "condition", "status", "winner") if c not in table.columns]
    if missing:
        raise PairwiseInputError(f"pairwise table is missing columns: {', '.join(missing)}")
    gold_by_item, _ = _gold_labels(table, gold)
    matrices, rows_of = {}, {}
    for name in (a, b):
        rows = table[(table["judge"] == name) & table["condition"].isin(conditions)]
        lacking = [c for c in conditions if not (rows["condition"] == c).any()]
        if lacking:
            judges = sorted(distinct_text(table["judge"]))
            raise PairwiseInputError(
                f"judge {name!r} has no rows in condition(s) {lacking} (judges in the table: {judges[:10]}); "
                "comparing over both orders needs both -- for one order, filter the table to it and use "
                "compare_judges(a, b, gold, data=..., metric='accuracy', value='winner')")
        matrices[name], rows_of[name] = _verdict_matrix(rows, conditions), rows
    shared = matrices[a].index.intersection(matrices[b].index, sort=False)
    n_unshared = len(matrices[a].index.union(matrices[b].index)) - len(shared)
    # an item without a row in one order (for either judge) has no verdict there to count as a tie or a miss:
    # it is left out, as pairwise_accuracy leaves it out, and counted
    complete = np.ones(len(shared), dtype=bool)
    for name in (a, b):
        complete &= _rows_present(rows_of[name], shared, conditions).all(axis=1)
    n_incomplete = int((~complete).sum())
    shared = shared[complete]
    if len(shared) == 0:
        raise PairwiseInputError(f"judges {a!r} and {b!r} have no item in common with rows in both orders "
                                 f"{list(conditions)}")
    labels = gold_by_item.reindex(shared)
    if labels.isna().any():
        lacking_items = list(shared[labels.isna()][:5])
        raise PairwiseInputError(f"{int(labels.isna().sum())} judged items have no gold label (first: {lacking_items})")
    gold_arr = labels.to_numpy(dtype=object)
    correct_a, usable_a = _cells(matrices[a].loc[shared].to_numpy(dtype=object), gold_arr, policy)
    correct_b, usable_b = _cells(matrices[b].loc[shared].to_numpy(dtype=object), gold_arr, policy)
    usable = usable_a & usable_b
    count_a, count_b = (correct_a & usable).sum(axis=1), (correct_b & usable).sum(axis=1)
    cells_per_item = usable.sum(axis=1)
    n_cells = int(cells_per_item.sum())
    context: dict[str, Any] = {"n_items": len(shared), "n_items_unshared": n_unshared,
                               "n_items_one_order": n_incomplete,
                               "n_cells_excluded": int(usable.size - n_cells), "policy": policy}
    if n_cells == 0:
        raise PairwiseInputError(f"no (item, order) cell can be scored for both judges under policy {policy!r} "
                                 "(every verdict a tie or unscored, or every gold label a tie)")
    # each item is one of 27 cells (A's correct count, B's, usable count, each 0-2): resample tables, not rows
    codes = count_a * 9 + count_b * 3 + cells_per_item
    grid = np.indices((3, 3, 3)).reshape(3, -1).astype(float)  # per cell code: A's count, B's count, usable

    def pooled(counts: np.ndarray, numerator: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return counts @ numerator / (counts @ grid[2])

    statistics = {"a": TableStatistic(codes, 27, lambda c: pooled(c, grid[0])),
                  "b": TableStatistic(codes, 27, lambda c: pooled(c, grid[1])),
                  "difference": TableStatistic(codes, 27, lambda c: pooled(c, grid[0] - grid[1]))}
    shared_seed = seed if isinstance(seed, int) else int(np.random.default_rng(seed).integers(2**63 - 1))
    rows = []
    unit = f"items resampled ({len(shared)} items, each carrying both orders)"
    for part, statistic in statistics.items():
        boot = bootstrap(statistic, len(shared), interval=interval, n_resamples=n_resamples, ci_level=ci_level,
                         seed=shared_seed, return_distribution=part == "difference")
        p_value, p_text = np.nan, ""
        if part == "difference":
            dist = boot.distribution[np.isfinite(boot.distribution)]
            if len(dist):
                tail = min(np.sum(dist <= 0), np.sum(dist >= 0))
                p_value = float(min(1.0, 2 * (tail + 1) / (len(dist) + 1)))
                p_text = "; p: paired bootstrap, 2 x (resampled differences on the far side of 0 + 1) / (B + 1)"
        metric = f"accuracy_mean ({a if part == 'a' else b} vs gold)" if part != "difference" else \
            f"accuracy_mean difference ({a} - {b})"
        rows.append(result_row(metric, boot.estimate, n=n_cells, p_value=p_value,
                               method=f"correct verdicts / verdicts over both orders, on the {n_cells} (item, order) "
                               f"cells both judges can be scored on{p_text}; CI: {boot.method}, {unit}",
                               note=boot.note, **boot.fields(), part=part, **context))
    both = cells_per_item == 2
    if both.any():
        test = mcnemar_test((count_b[both] == 2).astype(float), (count_a[both] == 2).astype(float),
                            ci_level=ci_level).iloc[0]
        rows.append(result_row(
            f"correct_both difference ({a} - {b})", test["estimate"], n=int(both.sum()), ci_low=test["ci_low"],
            ci_high=test["ci_high"], p_value=test["p_value"],
            method=f"share of items right in both orders, {a} - {b}; {test['method'].split('; ', 1)[1]}",
            note=join_notes(test["note"], f"{int(test['n_wrong_to_correct'])} items only {a} gets right in both "
                            f"orders, {int(test['n_correct_to_wrong'])} only {b}"),
            ci_level=ci_level, part="correct_both", **context))
    else:
        rows.append(result_row(f"correct_both difference ({a} - {b})", np.nan, n=0, method="McNemar test",
                               note="no item is usable in both orders for both judges", part="correct_both",
                               **context))
    return tidy_frame(rows)
