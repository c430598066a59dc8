"""What every probe shares: perturbed item copies, one run per condition, per-item values, paired shifts.

A probe keeps ``item_id`` unchanged across conditions, so each perturbed judgment pairs with its
original one; the original condition is an ordinary run, so its calls come from the cache when
the same items, rubric and model were judged before. Summary rows are built with
:func:`judgelab.stats.tidy.result_row` (plus the probe's ``condition`` and ``policy``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from judgelab import judgments
from judgelab.conversations.messages import looks_like_messages
from judgelab.engine.items import read_items
from judgelab.errors import ConfigError
from judgelab.probes.perturbations import Perturbation
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES, bootstrap_ci
from judgelab.stats.question import check_design, rater_role
from judgelab.stats.tidy import join_notes, result_row

__all__ = [
    "PAIR_POLICY", "POINTS", "PairedChanges", "PerturbedRun", "candidate_field", "change_metric", "check_one_run",
    "condition_values", "is_reference",
    "infer_mode", "item_values", "paired_changes", "paired_shift_rows", "perturb_items", "perturbed_conditions",
    "prepare", "proportion_row", "resolve_rubric", "run_conditions", "run_once", "run_perturbed", "shift_row",
    "verdict_values", "wilcoxon_p",
]

PAIR_POLICY = "pairs with an unscored side dropped"
POINTS = {"A": 1.0, "B": 0.0, "TIE": 0.5}  # side A's share of a pairwise verdict

Conditions = Mapping[str, tuple[pd.DataFrame, Rubric]]  # condition name -> (its items, its rubric)


def resolve_rubric(rubric: Rubric | str) -> Rubric:
    """The rubric object (a built-in or registered name is loaded)."""
    if isinstance(rubric, str):
        from judgelab.rubrics import load_rubric

        return load_rubric(rubric)
    return rubric


def prepare(items: Any, rubric: Rubric | str) -> tuple[pd.DataFrame, Rubric]:
    """The items as a frame (anything :func:`judgelab.run` reads) and the rubric as an object."""
    return read_items(items), resolve_rubric(rubric)


def candidate_field(rubric: Rubric, field: str | None, *, which: int = 0) -> str:
    """The item field holding the candidate text to perturb (the rubric's candidate field by default)."""
    if field is not None:
        return field
    fields = tuple(getattr(rubric, "candidate_fields", ()) or ())
    if len(fields) > which:
        return fields[which]
    raise ConfigError(f"rubric {rubric.name!r} names no candidate field; pass field=<the item column to perturb>")


def perturb_items(items: pd.DataFrame, field: str, perturbation: Perturbation | Callable[[str], str]) -> pd.DataFrame:
    """A copy of the items with ``field`` perturbed (item_id unchanged, so conditions pair by item)."""
    if field not in items.columns:
        raise ConfigError(f"items have no column {field!r} to perturb (columns: {', '.join(map(str, items.columns))})")
    if items[field].map(looks_like_messages).any():  # str() of a message list would be Python's repr, not text
        raise ConfigError(f"items' column {field!r} holds conversations (chat-message lists); this probe perturbs "
                          "text: use the conversation probes (turn_history, conversation_order, pushback)")
    out = items.copy()
    out[field] = [perturbation(str(v)) for v in items[field]]
    return out


def perturbed_conditions(items: pd.DataFrame, rubric: Rubric, field: str, perturbations: Iterable[Perturbation],
                         *, prefix: str = "") -> dict[str, tuple[pd.DataFrame, Rubric]]:
    """``{prefix}original`` and one ``{prefix}<name>`` condition per perturbation of ``field``."""
    conditions = {f"{prefix}original": (items, rubric)}
    for pert in perturbations:
        conditions[f"{prefix}{pert.name}"] = (perturb_items(items, field, pert), rubric)
    return conditions


def run_once(items: Any, rubric: Rubric, model: str, **run_kw: Any) -> pd.DataFrame:
    """One :func:`judgelab.run` with the probes' defaults: no progress bar unless asked, the table only."""
    import judgelab

    kw = {"progress": False, **run_kw}
    kw.pop("return_stats", None)
    return judgelab.run(items, rubric, model, **kw)


def run_conditions(conditions: Conditions, model: str, **run_kw: Any) -> pd.DataFrame:
    """Run the judge once per condition; one concatenated judgments table."""
    # one run per condition, in turn: each run already uses ``concurrency`` parallel calls, and running
    # conditions side by side would multiply the load a provider sees
    tables = [run_once(cond_items, cond_rubric, model, condition=name, **run_kw)
              for name, (cond_items, cond_rubric) in conditions.items()]
    return judgments.make_table(pd.concat(tables, ignore_index=True))


@dataclass(frozen=True)
class PerturbedRun:
    """A perturbation probe's run: the judgments table, the items, the rubric and the perturbed field."""

    table: pd.DataFrame
    items: pd.DataFrame
    rubric: Rubric
    field: str


def run_perturbed(items: Any, rubric: Rubric | str, model: str, perturbations: Iterable[Perturbation], *,
                  field: str | None = None, **run_kw: Any) -> PerturbedRun:
    """Judge the original items and one copy per perturbation of ``field`` (the rubric's candidate by default)."""
    item_df, rubric = prepare(items, rubric)
    target = candidate_field(rubric, field)
    table = run_conditions(perturbed_conditions(item_df, rubric, target, perturbations), model, **run_kw)
    return PerturbedRun(table, item_df, rubric, target)


def infer_mode(table: pd.DataFrame) -> str:
    """"pairwise" when whole-answer verdict rows (no side) carry winners and no scores, else "direct"."""
    ok = judgments.scored(table)
    ok = ok[ok["side"].isna()]
    return "pairwise" if ok["winner"].notna().any() and ok["score"].isna().all() else "direct"


def change_metric(mode: str) -> str:
    """The name of a paired change: of the score (direct rubrics) or of side A's points (pairwise)."""
    return "score_change" if mode == "direct" else "win_rate_A_change"


def condition_values(table: pd.DataFrame, *, criterion: str = "overall",
                     judge: str | None = None) -> tuple[pd.DataFrame, str]:
    """(:func:`item_values` of the judge under test, the mode) for one criterion; reference rows ("gold", "human")
    are left out (they are not the judge under test)."""
    rows = table[(table["criterion"] == criterion) & ~is_reference(table)]
    mode = infer_mode(rows)
    return item_values(rows, criterion=criterion, mode=mode, judge=judge), mode


@dataclass(frozen=True)
class PairedChanges:
    """Each perturbed condition's paired change against the baseline, and what it was computed from."""

    rows: list[dict[str, Any]]  # one summary row per condition
    wide: pd.DataFrame  # item x condition values (:func:`item_values`)
    mode: str  # "direct" or "pairwise"
    metric: str  # the rows' metric (:func:`change_metric`)
    conditions: list[str]  # the conditions compared, in row order


def paired_changes(table: pd.DataFrame, select: Callable[[list[str]], Sequence[str]], *, baseline: str = "original",
                   criterion: str = "overall", judge: str | None = None, seed: int = 0,
                   n_resamples: int = DEFAULT_RESAMPLES) -> PairedChanges:
    """Paired change vs ``baseline`` of each condition ``select(conditions in the table)`` keeps."""
    wide, mode = condition_values(table, criterion=criterion, judge=judge)
    conditions = list(select([str(c) for c in wide.columns]))
    metric = change_metric(mode)
    rows = paired_shift_rows(wide, baseline, conditions, metric=metric, seed=seed, n_resamples=n_resamples) \
        if conditions else []
    return PairedChanges(rows, wide, mode, metric, conditions)


def is_reference(table: pd.DataFrame) -> pd.Series:
    """Rows of reference raters ("gold", "human"): labels to compare with, never the judge a probe measures."""
    return table["judge"].map(lambda j: rater_role(j) == "reference").astype(bool)


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
    frame = pd.DataFrame({"item_id": rows["item_id"].astype(str), "condition": rows["condition"].astype(str),
                          "value": verdict_values(rows, mode, side=side)})
    return frame.pivot_table(index="item_id", columns="condition", values="value", aggfunc="mean", dropna=False)


def verdict_values(rows: pd.DataFrame, mode: str | None = None, *, side: str = "A") -> np.ndarray:
    """Each row's verdict as a number: the score (direct) or side ``side``'s points (pairwise); NaN if unscored."""
    mode = mode or infer_mode(rows)
    if mode == "pairwise":
        pts = rows["winner"].map(lambda w: POINTS.get(w, math.nan) if isinstance(w, str) else math.nan).astype(float)
        values = pts if side == "A" else 1.0 - pts
    else:
        values = rows["score"].astype(float)
    return values.where(judgments.is_scored(rows)).to_numpy(dtype=float, na_value=np.nan)


def _select(table: pd.DataFrame, criterion: str, judge: str | None) -> pd.DataFrame:
    # whole-answer rows only: per-candidate rows (side "A"/"B") of pairwise rubrics are not verdicts
    rows = table[(table["criterion"] == criterion) & table["side"].isna()]
    if judge is not None:
        rows = rows[rows["judge"] == judge]
    else:  # reference rows are labels to compare with, not a judge under test
        rows = rows[~is_reference(rows)]
    if rows.empty:
        have = sorted(judgments.distinct_text(table["criterion"]))
        raise ConfigError(f"the judgments table has no rows for criterion {criterion!r}"
                          + (f" and judge {judge!r}" if judge else "") + f" (criteria: {have})")
    judges = rows["judge"].dropna().unique()
    if len(judges) > 1:
        raise ConfigError(f"the table holds several judges {sorted(map(str, judges))}; pass judge=<one of them>")
    check_one_run(rows)
    return rows


def check_one_run(rows: pd.DataFrame) -> None:
    """Refuse rows that would be averaged across runs: within a condition one rubric and rubric version, and one
    row per item, condition and repeat (a probe averages an item's repeats, nothing else; rule 1 of
    :mod:`judgelab.stats.question`)."""
    check_design(rows, rater="condition", ignore=("condition", "repeat", "criterion", "side", "judge"),
                 fix="filter the table to one before the analysis (a condition's verdicts come from one rubric)",
                 statistic="the probe")
    keys = [c for c in ("item_id", "condition", "repeat") if c in rows.columns]
    dup = rows.duplicated(keys, keep=False)
    if dup.any():
        first = rows.loc[dup, keys].iloc[0].tolist()
        raise ConfigError(f"{int(dup.sum())} rows share an item, condition and repeat (first: {first}), e.g. two runs "
                          "of one judge: filter the table to one run_id")


def paired_shift_rows(
    wide: pd.DataFrame,
    baseline: str,
    conditions: Sequence[str],
    *,
    metric: str = "score_change",
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> list[dict[str, Any]]:
    """Per condition: mean paired change vs ``baseline`` (bootstrap CI) and a Wilcoxon signed-rank test."""
    if baseline not in wide.columns:
        raise ConfigError(f"the table has no {baseline!r} condition to compare against")
    rows = []
    for cond in conditions:
        if cond not in wide.columns:
            rows.append(result_row(metric, math.nan, n=0, method="mean paired difference", condition=cond,
                                   policy=PAIR_POLICY, note=f"condition {cond!r} is absent from the table"))
            continue
        pair = wide[[baseline, cond]]
        complete = pair.dropna()
        diffs = (complete[cond] - complete[baseline]).to_numpy(dtype=float)
        rows.append(shift_row(diffs, metric=metric, condition=cond, dropped=len(pair) - len(complete), seed=seed,
                              n_resamples=n_resamples))
    return rows


def shift_row(diffs: np.ndarray, *, metric: str, condition: str, dropped: int, seed: int = 0,
              n_resamples: int = DEFAULT_RESAMPLES, policy: str = PAIR_POLICY) -> dict[str, Any]:
    """Mean of paired differences, its percentile bootstrap CI and the Wilcoxon signed-rank p-value."""
    note = f"{dropped} item(s) dropped (unscored in a condition)" if dropped else ""
    n = len(diffs)
    if n == 0:
        return result_row(metric, math.nan, n=0, method="mean paired difference", condition=condition,
                          policy=policy, note=join_notes(note, "no complete pairs"))
    ci = bootstrap_ci(diffs, statistic="mean", n_resamples=n_resamples, seed=seed).iloc[0]
    p, test = wilcoxon_p(diffs)
    return result_row(metric, float(np.mean(diffs)), n=n, ci_low=ci["ci_low"], ci_high=ci["ci_high"], p_value=p,
                      method=f"mean paired difference, {ci['method']}; {test}", condition=condition, policy=policy,
                      note=note)


def wilcoxon_p(diffs: np.ndarray) -> tuple[float, str]:
    """Two-sided Wilcoxon signed-rank p (zeros split between signs); 1.0 when every difference is 0."""
    test = "Wilcoxon signed-rank test (two-sided, zero differences split)"
    if np.all(diffs == 0):
        return 1.0, test + "; every difference is 0"
    return float(sps.wilcoxon(diffs, zero_method="zsplit").pvalue), test


def proportion_row(metric: str, k: int, n: int, *, test_half: bool = False, policy: str = "",
                   note: str = "", condition: str = "", ci_level: float = 0.95) -> dict[str, Any]:
    """k/n with its exact (Clopper-Pearson) interval; with ``test_half``, the exact binomial test vs 0.5."""
    if n == 0:
        return result_row(metric, math.nan, n=0, method="proportion", condition=condition, policy=policy,
                          note=join_notes(note, "no eligible verdicts"))
    res = sps.binomtest(k, n, 0.5)
    ci = res.proportion_ci(confidence_level=ci_level, method="exact")
    method = f"proportion, exact Clopper-Pearson {ci_level:.0%} CI"
    if test_half:
        method += "; exact two-sided binomial test vs 0.5"
    return result_row(metric, k / n, n=n, ci_low=ci.low, ci_high=ci.high, p_value=res.pvalue if test_half else math.nan,
                      method=method, condition=condition, policy=policy, note=note)
