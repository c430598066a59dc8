"""Pairwise judges against gold labels: accuracy in each presentation order, their mean,
correct in both orders, and position consistency, each with n and an interval.

Input is a judgments table holding pairwise verdict rows (``winner`` "A"/"B"/"TIE" in ORIGINAL
labels; condition "original" and "swapped") and gold rows (by default ``judge == "gold"``).
How a judge's ties and unscored rows (status other than "ok") count is the ``policy``:

``"exclude"``
    Ties and unscored verdicts leave the denominator. Per-order accuracy uses the items with
    a scored A/B verdict in that order; correct-in-both and position consistency use items
    with one in both orders; the mean pools every remaining verdict of both orders. Items
    whose gold label is a tie are excluded too (a judge tie can never be counted).
``"tie"``
    An unscored verdict counts as a tie. A tie is correct only when the gold label is a tie,
    and an item is position-consistent when both orders give the same verdict (two ties
    included). All items stay in every denominator. This is LLMBar's published convention.
``"wrong"``
    Every tie and unscored verdict is a failure: never correct (unless the gold label is a
    tie and the judge said tie) and never position-consistent. All items stay in.
``"net"``
    JudgeBench's rule (Tan et al. 2025, ``utils/metrics.py``): each order votes +1 when its verdict
    is the gold label, -1 when it is the other candidate, 0 for a tie or an unscored verdict; a
    pair is correct when the sum of its two votes is positive; the denominator is every pair.
    This adds the metric ``accuracy_net``; the five other metrics are computed as under "wrong".

Which policy reproduces which publisher's numbers is tabulated in ``docs/publisher_conventions.md``
(LLMBar: "tie"; JudgeBench: "net"). :func:`pairwise_agreement` is the agreement of a pairwise
judge with (several) human votes, with and without ties, as MT-Bench reports it.

Intervals: per-order accuracy, correct-in-both and consistency are proportions of
independent items, so their default interval is the exact Clopper-Pearson binomial one;
the mean of the two orders uses both verdicts of the same item, so its interval is a
percentile bootstrap that resamples items (clusters), seeded. ``ci="bootstrap"`` uses the
item bootstrap for every row. ``p_value`` is the exact two-sided binomial test of the
per-order accuracy against chance (0.5); other rows have no natural null and carry NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from judgelab.judgments import is_scored
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap
from judgelab.stats.pairing import StatsInputError, describe_duplicates
from judgelab.stats.question import check_design, rows_read
from judgelab.stats.tidy import join_notes, result_row, tidy_frame

__all__ = ["METRICS", "POLICIES", "PairwiseInputError", "Policy", "pairwise_accuracy", "pairwise_agreement",
           "pairwise_policy_sensitivity"]

Policy = Literal["exclude", "tie", "wrong", "net"]
POLICIES: tuple[Policy, ...] = ("exclude", "tie", "wrong", "net")
METRICS: tuple[str, ...] = (
    "accuracy_original",
    "accuracy_swapped",
    "accuracy_mean",
    "correct_both",
    "position_consistency",
    "accuracy_net",  # policy "net" only
)
_VALID = ("A", "B", "TIE")
_OTHER = {"A": "B", "B": "A", "TIE": "TIE"}


class PairwiseInputError(StatsInputError):
    """A pairwise table or option that cannot be scored as given; the message says what to change."""


def pairwise_accuracy(
    table: pd.DataFrame,
    policy: Policy = "exclude",
    gold: str | Mapping[str, str] | pd.Series = "gold",
    *,
    by: Sequence[str] = ("run_id", "judge"),
    conditions: tuple[str, str] = ("original", "swapped"),
    ci: Literal["exact", "bootstrap"] = "exact",
    ci_level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Accuracy against gold per order, their mean, correct-in-both and position consistency.

    ``gold`` is the judge name of the gold rows in ``table`` or a mapping item_id -> "A"/"B"/"TIE".
    Returns one row per group of ``by`` and metric, with estimate, ci_low, ci_high, p_value, n,
    method, n_correct, n_items, n_excluded, policy.
    """
    if policy not in POLICIES:
        raise PairwiseInputError(f"policy must be one of {POLICIES}, not {policy!r}")
    if ci not in ("exact", "bootstrap"):
        raise PairwiseInputError(f"ci must be 'exact' or 'bootstrap', not {ci!r}")
    missing = [
        c for c in ("item_id", "judge", "condition", "status", "winner", *by) if c not in table.columns
    ]
    if missing:
        raise PairwiseInputError(f"pairwise table is missing columns: {', '.join(missing)}")
    gold_judge = gold if isinstance(gold, str) else None
    judged = table[table["judge"] != gold_judge] if gold_judge else table
    judged = judged[judged["condition"].isin(conditions)]
    if judged.empty:
        raise PairwiseInputError(f"no judge rows with condition in {conditions} to score")
    # one design cell per group besides the two orders (rule 1 of judgelab.stats.question)
    check_design(rows_read(judged, "winner"), rater=None, split=by, ignore=("condition",), by_hint=by,
                 statistic="pairwise_accuracy")
    out = []
    groups = judged.groupby(list(by), sort=True, dropna=False) if by else [((), judged)]  # by=(): one group
    for key, group in groups:
        keys = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        verdicts = _verdict_matrix(group, conditions)
        has_row = _rows_present(group, verdicts.index, conditions)
        # gold per item, of the group's criterion when the gold rows are per criterion
        gold_rows = table if "criterion" not in keys else table[table["criterion"] == keys["criterion"]]
        gold_by_item, _ = _gold_labels(gold_rows if gold_judge else table, gold)
        labels = gold_by_item.reindex(verdicts.index)
        if labels.isna().any():
            lacking = list(verdicts.index[labels.isna()][:5])
            raise PairwiseInputError(f"{int(labels.isna().sum())} judged items have no gold label (first: {lacking})")
        frame = _score(verdicts, has_row, labels.to_numpy(dtype=object), policy, ci, ci_level, n_resamples, seed,
                       conditions)
        for col, value in keys.items():
            frame.insert(0, col, value)
        out.append(frame)
    return pd.concat(out, ignore_index=True)


def pairwise_policy_sensitivity(table: pd.DataFrame, **kwargs: object) -> pd.DataFrame:
    """:func:`pairwise_accuracy` under every policy, side by side (one column block per policy)."""
    by = list(kwargs.get("by", ("run_id", "judge")))  # type: ignore[call-overload]
    wide = None
    for policy in POLICIES:
        res = pairwise_accuracy(table, policy=policy, **kwargs)  # type: ignore[arg-type]
        block = res[[*by, "metric", "estimate", "ci_low", "ci_high", "n"]].rename(
            columns={c: f"{c}_{policy}" for c in ("estimate", "ci_low", "ci_high", "n")}
        )
        wide = block if wide is None else wide.merge(block, on=[*by, "metric"], how="outer")
    assert wide is not None
    wide["metric"] = pd.Categorical(wide["metric"], categories=METRICS, ordered=True)  # accuracy_net: "net" only
    estimates = wide[[f"estimate_{p}" for p in POLICIES]]
    spread = estimates.max(axis=1) - estimates.min(axis=1)
    wide["spread"] = spread.where(estimates.notna().sum(axis=1) > 1)  # NaN for a metric only one policy defines
    return wide.sort_values([*by, "metric"]).reset_index(drop=True)


def pairwise_agreement(
    table: pd.DataFrame,
    judge: str,
    gold: str | Sequence[str],
    *,
    ties: Literal["include", "exclude", "both"] = "both",
    unscored: Literal["exclude", "tie"] = "exclude",
    condition: str | None = "original",
    by: Sequence[str] = ("criterion",),
    ci_level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Agreement of a pairwise judge's winners with every gold (human) vote, with and without ties.

    MT-Bench's convention (Zheng et al. 2023, FastChat ``compute_agreement.py``): the judge's one
    verdict on an item is paired with EACH gold vote on it (``gold``: one judge name, or several,
    e.g. the annotators "human:e1", "human:e2"; several votes per item are expected); agreement is the
    share of those pairs with the same winner. ``ties="include"`` keeps every pair (two ties agree);
    ``"exclude"`` leaves out the pairs where either vote is a tie (MT-Bench's "w/o tie");
    ``"both"`` returns both rows. An unscored judge verdict leaves the item out (``unscored="exclude"``,
    counted) or counts as a tie (``"tie"``). ``condition`` picks the judge's rows (None: all rows; the
    judge must then have one verdict per item, e.g. both orders already combined).

    One row per group of ``by`` and tie policy: ``estimate`` = agreeing pairs / ``n`` pairs, with a
    percentile bootstrap interval that resamples items (an item's gold votes move together);
    ``n_items``, ``n_unscored_excluded`` and ``n_ties_excluded`` account for every vote.
    """
    policies = {"include": ("include",), "exclude": ("exclude",), "both": ("include", "exclude")}.get(ties)
    if policies is None:
        raise PairwiseInputError(f"ties must be 'include', 'exclude' or 'both', not {ties!r}")
    if unscored not in ("exclude", "tie"):
        raise PairwiseInputError(f"unscored must be 'exclude' or 'tie', not {unscored!r}")
    gold_names = [gold] if isinstance(gold, str) else list(gold)
    missing = [c for c in ("item_id", "judge", "condition", "status", "winner", *by) if c not in table.columns]
    if missing:
        raise PairwiseInputError(f"pairwise table is missing columns: {', '.join(missing)}")
    judged = table[table["judge"] == judge]
    if condition is not None:
        judged = judged[judged["condition"] == condition]
    votes = table[table["judge"].isin(gold_names) & is_scored(table)]
    for name, rows in ((f"judge {judge!r}" + (f" in condition {condition!r}" if condition else ""), judged),
                       (f"gold {gold_names}", votes)):
        if rows.empty:
            raise PairwiseInputError(f"no rows of {name} in the table")
    check_design(rows_read(judged, "winner"), rater=None, split=by, ignore=() if condition is None else ("condition",),
                 by_hint=by, statistic="pairwise_agreement")
    out = []
    groups = judged.groupby(list(by), sort=True, dropna=False) if by else [((), judged)]  # by=(): one group
    for key, group in groups:
        keys = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        dup = group["item_id"].duplicated()
        if dup.any():
            raise PairwiseInputError(
                f"judge {judge!r} has several verdicts for {int(dup.sum())} items (first: "
                f"{list(group.loc[dup, 'item_id'][:3])}); pick one condition (condition='original') or combine the "
                "two orders first")
        ok = is_scored(group)
        winners = group["winner"].astype(object).where(ok, "TIE" if unscored == "tie" else None)
        verdict = pd.Series(winners.to_numpy(), index=group["item_id"].to_numpy())
        n_unscored = int(verdict.isna().sum())
        verdict = verdict.dropna()
        bad = ~verdict.isin(_VALID)
        if bad.any():
            raise PairwiseInputError(f"judge winners must be 'A', 'B' or 'TIE'; found {sorted(set(verdict[bad]))}")
        gold_votes = votes
        for col, value in keys.items():
            gold_votes = gold_votes[gold_votes[col].isna()] if pd.isna(value) else gold_votes[gold_votes[col] == value]
        twice = gold_votes.duplicated(["item_id", "judge"], keep=False)
        if twice.any():  # a rater's one vote counted twice would invent agreement
            raise PairwiseInputError(
                f"gold raters need one vote per item: {describe_duplicates(gold_votes[twice], ['item_id', 'judge'])}"
                "; filter the gold rows to one condition and repeat")
        paired = gold_votes[["item_id", "winner"]].rename(columns={"winner": "gold"})
        paired = paired[paired["item_id"].isin(verdict.index)]
        paired = paired.assign(judge=verdict.reindex(paired["item_id"]).to_numpy())
        for policy in policies:
            frame = paired
            n_ties = 0
            if policy == "exclude":
                tie = (frame["judge"] == "TIE") | (frame["gold"] == "TIE")
                n_ties, frame = int(tie.sum()), frame[~tie]
            row = _agreement_row(frame, policy, ci_level, n_resamples, seed)
            row.update(n_unscored_excluded=n_unscored, n_ties_excluded=n_ties)
            out.append({**keys, **row})
    return tidy_frame(out)


def _agreement_row(pairs: pd.DataFrame, policy: str, ci_level: float, n_resamples: int,
                   seed: int) -> dict[str, object]:
    """Share of (judge, gold vote) pairs that agree, items resampled."""
    per_item = pairs.assign(agree=(pairs["judge"] == pairs["gold"]).astype(float)).groupby("item_id")["agree"]
    num, den = per_item.sum().to_numpy(float), per_item.size().to_numpy(float)
    n, k = int(den.sum()), float(num.sum())
    label = "ties included" if policy == "include" else "ties excluded"
    if n == 0:
        return result_row("pairwise_agreement", np.nan, n=0, method="share of (judge, gold vote) pairs that agree",
                          policy=label, n_items=0, note="no (judge, gold vote) pairs to compare")
    boot = bootstrap(_ratio_statistic(num, den), len(num), n_resamples=n_resamples, ci_level=ci_level, seed=seed,
                     return_distribution=False)
    return result_row("pairwise_agreement", k / n, n=n, ci_low=boot.ci_low, ci_high=boot.ci_high,
                      method=f"share of (judge, gold vote) pairs that agree ({label}); CI: {boot.method}, items "
                      f"resampled ({len(num)} items)", policy=label, n_items=len(num), note=boot.note)


def _gold_labels(
    table: pd.DataFrame, gold: str | Mapping[str, str] | pd.Series
) -> tuple[pd.Series, str | None]:
    if isinstance(gold, str):
        rows = table[(table["judge"] == gold) & is_scored(table)]
        if rows.empty:
            raise PairwiseInputError(f"no scored gold rows with judge == {gold!r} in the table")
        # gold labels are read per item: several criteria (or sides) would give an item several questions' labels
        check_design(rows_read(rows, "winner"), rater=None,
                     ignore=("judge", "condition", "repeat", "run_id", "rubric", "rubric_version"),
                     fix="filter the table to one (or split it with by= where the statistic takes it)",
                     statistic="a pairwise statistic")
        pairs = rows[["item_id", "winner"]].drop_duplicates()
        if pairs["item_id"].duplicated().any():
            dup = list(pairs.loc[pairs["item_id"].duplicated(), "item_id"][:5])
            raise PairwiseInputError(f"items with conflicting gold labels: {dup}")
        series, judge_name = pd.Series(pairs["winner"].to_numpy(), index=pairs["item_id"].to_numpy()), gold
    else:
        series, judge_name = pd.Series(dict(gold) if not isinstance(gold, pd.Series) else gold), None
    bad = ~series.isin(_VALID)
    if bad.any():
        raise PairwiseInputError(f"gold labels must be 'A', 'B' or 'TIE'; found {sorted(set(map(str, series[bad])))}")
    return series.astype(object), judge_name


def _verdict_matrix(group: pd.DataFrame, conditions: tuple[str, str]) -> pd.DataFrame:
    """Item x condition verdicts: "A"/"B"/"TIE", or None for an unscored or absent verdict (:func:`_rows_present`
    tells them apart). The group's rows must hold one criterion, repeat and rubric (rule 1 of
    :mod:`judgelab.stats.question`) and one verdict per item and condition."""
    check_design(rows_read(group, "winner"), rater=None, ignore=("condition", "judge", "run_id"),
                 fix="filter the table to one (or split it with by= where the statistic takes it)",
                 statistic="a pairwise statistic")
    dup = group.duplicated(subset=["item_id", "condition"], keep=False)
    if dup.any():
        raise PairwiseInputError(
            f"judge rows need one verdict per item and order: {describe_duplicates(group[dup], ['item_id', 'condition'])}"
            "; filter the table to one run, or add the column that tells them apart to by=")
    scored = is_scored(group)
    bad = scored & ~group["winner"].isin(_VALID)
    if bad.any():
        raise PairwiseInputError(
            f"scored rows must have winner 'A', 'B' or 'TIE'; found {sorted(set(map(str, group.loc[bad, 'winner'])))}"
        )
    verdict = group["winner"].astype(object).where(scored, None)
    wide = pd.DataFrame(
        {
            "item_id": group["item_id"].to_numpy(),
            "condition": group["condition"].to_numpy(),
            "verdict": verdict.to_numpy(),
        }
    )
    matrix = wide.pivot(index="item_id", columns="condition", values="verdict").reindex(columns=list(conditions))
    return matrix.astype(object).where(matrix.notna(), None)


def _rows_present(group: pd.DataFrame, index: pd.Index, conditions: tuple[str, str]) -> np.ndarray:
    """Items (``index``) x conditions: whether the item has a row in that condition (unscored or not)."""
    present = pd.crosstab(group["item_id"], group["condition"]).reindex(index=index, columns=list(conditions))
    return present.fillna(0).to_numpy() > 0


def _score(
    verdicts: pd.DataFrame,
    has_row: np.ndarray,
    gold: np.ndarray,
    policy: Policy,
    ci: str,
    ci_level: float,
    n_resamples: int,
    seed: int,
    conditions: tuple[str, str] = ("original", "swapped"),
) -> pd.DataFrame:
    v = verdicts.to_numpy(dtype=object)
    unscored = np.vectorize(lambda x: x is None, otypes=[bool])(v) & has_row
    if policy == "tie":
        v = np.where(unscored, "TIE", v)
    is_tie = v == "TIE"
    gold_col = gold[:, None]
    if policy == "exclude":
        usable = ~unscored & ~is_tie & (gold_col != "TIE")
        correct = usable & (v == gold_col)
    elif policy == "tie":
        usable = np.ones_like(unscored)
        correct = v == gold_col
    else:  # wrong, net
        usable = np.ones_like(unscored)
        correct = ~unscored & (v == gold_col) & (~is_tie | (gold_col == "TIE"))
    # an order with no row for an item is an absent input: never a verdict, under any policy
    usable = usable & has_row
    correct = correct & has_row
    both_rows = has_row.all(axis=1)
    both_usable = usable.all(axis=1)
    if policy in ("wrong", "net"):
        consistent = both_rows & ~unscored.any(axis=1) & ~is_tie.any(axis=1) & (v[:, 0] == v[:, 1])
        both_usable = both_rows
    else:
        consistent = both_usable & (v[:, 0] == v[:, 1])

    # per-metric numerator/denominator per item, so the bootstrap can resample items
    parts = {
        "accuracy_original": (correct[:, 0], usable[:, 0]),
        "accuracy_swapped": (correct[:, 1], usable[:, 1]),
        "accuracy_mean": (correct.sum(axis=1), usable.sum(axis=1)),
        "correct_both": (correct.all(axis=1) & both_usable, both_usable),
        "position_consistency": (consistent, both_usable),
    }
    notes = dict.fromkeys(parts, "")
    if policy == "net":
        votes = _net_votes(v, gold)
        parts["accuracy_net"] = (votes > 0, both_rows)
        notes["accuracy_net"] = (f"net vote > 0: {int((votes[both_rows] > 0).sum())} pairs, = 0: "
                                 f"{int((votes[both_rows] == 0).sum())}, < 0: {int((votes[both_rows] < 0).sum())}; "
                                 "no test (chance depends on the tie rate)")
    # which inputs each metric needs: an order absent from the group leaves its metrics undefined
    needs = {"accuracy_original": (0,), "accuracy_swapped": (1,), "accuracy_mean": (0, 1), "correct_both": (0, 1),
             "position_consistency": (0, 1), "accuracy_net": (0, 1)}
    absent = [k for k in (0, 1) if not has_row[:, k].any()]
    partial = {k: int((~has_row[:, k]).sum()) for k in (0, 1) if k not in absent and not has_row[:, k].all()}
    rows = []
    for metric, (num, den) in parts.items():
        missing = [conditions[k] for k in needs[metric] if k in absent]
        if missing:
            other = " and ".join(repr(c) for c in missing)
            rows.append(result_row(metric, np.nan, n=0, method="not computed: an order it needs is absent",
                                   n_correct=0, n_items=len(v), n_excluded=0, policy=policy,
                                   note=f"the table has no rows in condition {other}: {metric} needs "
                                   f"{'both orders' if len(needs[metric]) > 1 else 'that order'}"))
            continue
        num, den = num.astype(float), den.astype(float)
        k, n = num.sum(), den.sum()
        estimate = k / n if n else np.nan
        if ci == "exact" and metric != "accuracy_mean":
            low, high = _clopper_pearson(int(k), int(n), ci_level)
            method = f"exact binomial (Clopper-Pearson) {ci_level:.0%} CI"
        else:
            boot = bootstrap(
                _ratio_statistic(num, den),
                len(num),
                n_resamples=n_resamples,
                ci_level=ci_level,
                seed=seed,
                return_distribution=False,
            )
            low, high = boot.ci_low, boot.ci_high
            method = f"{boot.method}, items resampled (each item carries both orders)"
        p_value = (
            stats.binomtest(int(k), int(n), 0.5).pvalue
            if metric.startswith("accuracy_") and metric not in ("accuracy_mean", "accuracy_net") and n
            else np.nan
        )
        # n counts verdicts for accuracy_mean, items otherwise
        note = notes[metric] or (f"no item is usable under policy {policy!r} (every verdict a tie or unscored)"
                                 if n == 0 else "")
        lacking = [f"{partial[i]} item(s) have no row in condition {conditions[i]!r} (left out, not counted as "
                   "unscored)" for i in needs[metric] if i in partial]
        rows.append(result_row(metric, estimate, n=int(n), ci_low=low, ci_high=high, p_value=p_value, method=method,
                               n_correct=int(k), n_items=len(v),
                               n_excluded=int(len(v) * (2 if metric == "accuracy_mean" else 1) - n), policy=policy,
                               note=join_notes(note, *lacking)))
    return tidy_frame(rows)


def _net_votes(verdicts: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """JudgeBench's per-pair vote sum: each order +1 when it names the gold label, -1 when it names the
    other candidate, 0 otherwise (a tie, an unscored verdict). ``verdicts``: items x orders, None = unscored."""
    gold_col = np.asarray(gold, dtype=object)[:, None]
    other = np.vectorize(lambda g: _OTHER.get(g), otypes=[object])(gold_col)
    right = verdicts == gold_col
    wrong = (verdicts == other) & ~right  # with a TIE gold, the "other" label is TIE too: only +1 applies
    return right.sum(axis=1).astype(int) - wrong.sum(axis=1).astype(int)


def _clopper_pearson(k: int, n: int, ci_level: float) -> tuple[float, float]:
    if n == 0:
        return np.nan, np.nan
    alpha = 1 - ci_level  # Clopper-Pearson bounds are beta quantiles (same as binomtest's "exact")
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def _ratio_statistic(num: np.ndarray, den: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Pooled ratio sum(num) / sum(den) over a resample of items (rows of an index matrix)."""

    def statistic(idx: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return num[idx].sum(axis=1) / den[idx].sum(axis=1)

    return statistic
