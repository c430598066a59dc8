"""What every probe shares: perturbed item copies, one run per condition, per-item values, paired shifts.

A probe keeps ``item_id`` unchanged across conditions, so each perturbed judgment pairs with its
original one; the original condition is an ordinary run, so its calls come from the cache when
the same items, rubric and model were judged before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab import judgments
from judgelab.engine.items import read_items
from judgelab.probes.perturbations import Perturbation
from judgelab.probes.result import summary_row
from judgelab.rubrics.base import Rubric
from judgelab.stats import bootstrap_ci

PAIR_POLICY = "pairs with an unscored side dropped"
POINTS = {"A": 1.0, "B": 0.0, "TIE": 0.5}  # side A's share of a pairwise verdict


def resolve_rubric(rubric: Rubric | str) -> Rubric:
    if isinstance(rubric, str):
        from judgelab.rubrics import load_rubric

        return load_rubric(rubric)
    return rubric


def candidate_field(rubric: Rubric, field: str | None, *, which: int = 0) -> str:
    """The item field holding the candidate text to perturb (the rubric's candidate field by default)."""
    if field is not None:
        return field
    fields = tuple(getattr(rubric, "candidate_fields", ()) or ())
    if len(fields) > which:
        return fields[which]
    raise ValueError(f"rubric {rubric.name!r} names no candidate field; pass field=<the item column to perturb>")


def perturb_items(items: pd.DataFrame, field: str, perturbation: Perturbation | Callable[[str], str]) -> pd.DataFrame:
    """A copy of the items with ``field`` perturbed (item_id unchanged, so conditions pair by item)."""
    if field not in items.columns:
        raise ValueError(f"items have no column {field!r} to perturb (columns: {', '.join(map(str, items.columns))})")
    out = items.copy()
    out[field] = [perturbation(str(v)) for v in items[field]]
    return out


def run_conditions(
    items: Any,
    rubric: Rubric,
    model: str,
    conditions: Mapping[str, tuple[pd.DataFrame, Rubric]],
    *,
    swap: bool = False,
    **run_kw: Any,
) -> pd.DataFrame:
    """Run the judge once per condition (name -> (items, rubric)); one concatenated judgments table."""
    import judgelab

    run_kw.pop("return_stats", None)
    run_kw.setdefault("progress", False)
    tables = []
    # one run per condition, in turn: each run already uses ``concurrency`` parallel calls, and running
    # conditions side by side would multiply the load a provider sees
    for name, (cond_items, cond_rubric) in conditions.items():
        tables.append(judgelab.run(cond_items, cond_rubric, model, condition=name, swap=swap, **run_kw))
    return judgments.make_table(pd.concat(tables, ignore_index=True))


def items_frame(items: Any) -> pd.DataFrame:
    return read_items(items)


def infer_mode(table: pd.DataFrame) -> str:
    """"pairwise" when whole-answer verdict rows (no side) carry winners and no scores, else "direct"."""
    ok = table[(table["status"] == "ok") & table["side"].isna()]
    return "pairwise" if ok["winner"].notna().any() and ok["score"].isna().all() else "direct"


def item_values(
    table: pd.DataFrame,
    *,
    criterion: str = "overall",
    mode: str | None = None,
    side: str = "A",
    judge: str | None = None,
) -> pd.DataFrame:
    """Per item x condition numeric value: the score (direct) or side ``side``'s points (pairwise:
    win 1, tie 0.5, loss 0). Unscored rows give NaN; repeats are averaged over their scored rows.

    Returns a wide frame (index item_id, one column per condition).
    """
    rows = _select(table, criterion, judge)
    mode = mode or infer_mode(rows)
    if mode == "pairwise":
        pts = rows["winner"].map(lambda w: POINTS.get(w, math.nan) if isinstance(w, str) else math.nan)
        values = pts.astype(float) if side == "A" else 1.0 - pts.astype(float)
    else:
        values = rows["score"].astype(float)
    values = values.where(rows["status"] == "ok")
    frame = pd.DataFrame({"item_id": rows["item_id"].astype(str), "condition": rows["condition"].astype(str),
                          "value": values.to_numpy(dtype=float, na_value=np.nan)})
    return frame.pivot_table(index="item_id", columns="condition", values="value", aggfunc="mean", dropna=False)


def _select(table: pd.DataFrame, criterion: str, judge: str | None) -> pd.DataFrame:
    # whole-answer rows only: per-candidate rows (side "A"/"B") of pairwise rubrics are not verdicts
    rows = table[(table["criterion"] == criterion) & table["side"].isna()]
    if judge is not None:
        rows = rows[rows["judge"] == judge]
    if rows.empty:
        have = sorted(set(table["criterion"].dropna().astype(str)))
        raise ValueError(f"the judgments table has no rows for criterion {criterion!r}"
                         + (f" and judge {judge!r}" if judge else "") + f" (criteria: {have})")
    judges = rows["judge"].dropna().unique()
    if len(judges) > 1:
        raise ValueError(f"the table holds several judges {sorted(map(str, judges))}; pass judge=<one of them>")
    return rows


def paired_shift_rows(
    wide: pd.DataFrame,
    baseline: str,
    conditions: Sequence[str],
    *,
    statistic: str = "score_change",
    seed: int = 0,
    n_resamples: int = 2000,
) -> list[dict[str, Any]]:
    """Per condition: mean paired change vs ``baseline`` (bootstrap CI) and a Wilcoxon signed-rank test."""
    if baseline not in wide.columns:
        raise ValueError(f"the table has no {baseline!r} condition to compare against")
    rows = []
    for cond in conditions:
        if cond not in wide.columns:
            rows.append(summary_row(statistic, math.nan, n=0, method="mean paired difference", condition=cond,
                                    policy=PAIR_POLICY, note=f"condition {cond!r} is absent from the table"))
            continue
        pair = wide[[baseline, cond]]
        complete = pair.dropna()
        dropped = len(pair) - len(complete)
        diffs = (complete[cond] - complete[baseline]).to_numpy(dtype=float)
        rows.append(shift_row(diffs, statistic=statistic, condition=cond, dropped=dropped, seed=seed,
                              n_resamples=n_resamples))
    return rows


def shift_row(diffs: np.ndarray, *, statistic: str, condition: str, dropped: int, seed: int = 0,
              n_resamples: int = 2000, policy: str = PAIR_POLICY) -> dict[str, Any]:
    """Mean of paired differences, its percentile bootstrap CI and the Wilcoxon signed-rank p-value."""
    note = f"{dropped} item(s) dropped (unscored in a condition)" if dropped else ""
    n = len(diffs)
    if n == 0:
        return summary_row(statistic, math.nan, n=0, method="mean paired difference", condition=condition,
                           policy=policy, note="; ".join(x for x in (note, "no complete pairs") if x))
    ci = bootstrap_ci(diffs, statistic="mean", n_resamples=n_resamples, seed=seed).iloc[0]
    p, test = wilcoxon_p(diffs)
    return summary_row(statistic, float(np.mean(diffs)), n=n, condition=condition, ci_low=ci["ci_low"],
                       ci_high=ci["ci_high"], p_value=p, method=f"mean paired difference, {ci['method']}; {test}",
                       policy=policy, note=note)


def wilcoxon_p(diffs: np.ndarray) -> tuple[float, str]:
    """Two-sided Wilcoxon signed-rank p (zeros split between signs); 1.0 when every difference is 0."""
    test = "Wilcoxon signed-rank test (two-sided, zero differences split)"
    if np.all(diffs == 0):
        return 1.0, test + "; every difference is 0"
    return float(sps.wilcoxon(diffs, zero_method="zsplit").pvalue), test


def proportion_row(statistic: str, k: int, n: int, *, test_half: bool = False, policy: str = "",
                   note: str = "", condition: str = "") -> dict[str, Any]:
    """k/n with its exact (Clopper-Pearson) interval; with ``test_half``, the exact binomial test vs 0.5."""
    if n == 0:
        return summary_row(statistic, math.nan, n=0, method="proportion", policy=policy, condition=condition,
                           note="; ".join(x for x in (note, "no eligible verdicts") if x))
    res = sps.binomtest(k, n, 0.5)
    ci = res.proportion_ci(confidence_level=0.95, method="exact")
    method = "proportion, exact Clopper-Pearson 95% CI"
    if test_half:
        method += "; exact two-sided binomial test vs 0.5"
    return summary_row(statistic, k / n, n=n, method=method, ci_low=ci.low, ci_high=ci.high,
                       p_value=res.pvalue if test_half else math.nan, policy=policy, note=note,
                       condition=condition)
