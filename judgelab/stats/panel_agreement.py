"""How much do panel members agree, and does the panel agree with gold (or human) labels better than its best member?

Both take the judgments table a panel run returns (or any table holding the members' rows).
Units are item x criterion x side x condition x repeat; intervals resample items (a unit's
original and swapped verdicts stay together) where the underlying statistic allows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd

from judgelab.judgments import distinct_text, is_scored
from judgelab.stats._inputs import By, StatsInputError, per_group
from judgelab.stats.agreement import cohen_kappa
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap
from judgelab.stats.krippendorff import krippendorff_alpha
from judgelab.stats.question import check_design, rows_read

__all__ = ["member_agreement", "panel_vs_best_member"]
from judgelab.stats.tidy import result_row, tidy_frame

Metric = Literal["match", "abs_error"]


def _value_column(rows: pd.DataFrame) -> str:
    return "winner" if rows.loc[is_scored(rows), "winner"].notna().any() else "score"


def _units(table: pd.DataFrame, judges: Sequence[str]) -> pd.DataFrame:
    """Members' rows with one ``unit`` id per item x criterion x side x condition x repeat."""
    rows = table[table["judge"].isin(list(judges))].copy()
    parts = [rows[c].astype(str).where(rows[c].notna(), "-") for c in ("criterion", "side", "condition", "repeat")]
    rows["item"] = rows["item_id"]
    rows["item_id"] = rows["item_id"].astype(str).str.cat(parts, sep="|")
    return rows


def member_agreement(table: pd.DataFrame, judges: Sequence[str], *, level: str | None = None, by: By = None,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """Krippendorff's alpha over all members and Cohen's kappa for every pair, each with a bootstrap CI.

    ``level``: alpha's level ("nominal" for winners by default, "interval" for scores). Kappa rows
    carry ``judge_x`` and ``judge_y``; kappa CIs resample items (clusters of units). ``by``: one block of
    rows per group (``by="criterion"``, ``by="condition"``); the members' rows must otherwise hold one
    criterion, side, condition and repeat (rule 1 of :mod:`judgelab.stats.question`).
    """
    judges = list(judges)
    if len(judges) < 2:
        raise StatsInputError("member agreement needs at least two judges")
    if by is not None:
        return per_group(lambda part: member_agreement(part, judges, level=level, n_resamples=n_resamples,
                                                       seed=seed), table, by, rows_of=judges)
    members = table[table["judge"].isin(judges)]
    missing = [j for j in judges if j not in set(members["judge"])]
    if missing:
        raise StatsInputError(f"judge(s) {missing} have no rows in the table")
    value = _value_column(members)
    check_design(rows_read(members, value), statistic="member agreement")
    rows = _units(table, judges)
    level = level or ("nominal" if value == "winner" else "interval")
    alpha = krippendorff_alpha(data=rows, item="item_id", rater="judge", value=value, level=level,  # type: ignore[arg-type]
                               n_resamples=n_resamples, seed=seed)
    alpha.insert(0, "judge_y", "")
    alpha.insert(0, "judge_x", "all members")
    frames = [alpha]
    for a, b in combinations(judges, 2):
        kappa = cohen_kappa(a, b, data=rows, value=value, cluster="item", n_resamples=n_resamples, seed=seed)
        kappa.insert(0, "judge_y", b)
        kappa.insert(0, "judge_x", a)
        frames.append(kappa)
    return pd.concat(frames, ignore_index=True)


def panel_vs_best_member(table: pd.DataFrame, *, gold: str = "human", members: Sequence[str] | None = None,
                         panel_judge: str | None = None, condition: str | None = "original",
                         metric: Metric = "match", by: By = None, n_resamples: int = DEFAULT_RESAMPLES,
                         ci_level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Agreement with ``gold`` (the judge whose rows are the reference labels, human or gold) of each member
    and of the panel, and panel minus best member (paired CI).

    ``metric="match"``: share of units where the verdict equals the gold label (an unscored verdict
    counts as no match); ``"abs_error"``: mean absolute score difference, reported negated so that a
    positive difference always means the panel agrees better. The best member is chosen on the same
    units (which favours it; the test is conservative for the panel). The difference's interval is a
    paired percentile bootstrap over items; its p-value is the two-sided bootstrap share of the
    resampled differences on the other side of 0. A gold label with no verdict row of a judge (an item the
    judge never saw) leaves the unit out of every comparison (``n_missing_dropped``). ``by``: one block of
    rows per group (``by="criterion"``); the compared rows must otherwise hold one criterion, side, condition
    and repeat per judge, and gold one label per unit.
    """
    if by is not None:
        return per_group(lambda part: panel_vs_best_member(
            part, gold=gold, members=members, panel_judge=panel_judge, condition=condition, metric=metric,
            n_resamples=n_resamples, ci_level=ci_level, seed=seed), table, by)
    judges = distinct_text(table["judge"])
    if gold not in judges:
        raise StatsInputError(f"no rows of gold judge {gold!r} in the table")
    panel_judge = panel_judge or next((j for j in sorted(judges) if j.startswith("panel:")), None)
    if panel_judge is None or panel_judge not in judges:
        raise StatsInputError("no panel rows in the table; name them with panel_judge=")
    members = list(members) if members is not None else sorted(
        j for j in judges if j not in (gold, panel_judge) and not j.startswith(("panel:", "human", "gold")))
    if not members:
        raise StatsInputError("no member judges to compare with")
    rows = table if condition is None else table[table["condition"].isin([condition])]
    gold_rows = table[(table["judge"] == gold) & is_scored(table)]
    value = _value_column(gold_rows)
    keys = ["item_id", "criterion", "side"]
    compared = rows[rows["judge"].isin([*members, panel_judge])]
    check_design(rows_read(compared, value), statistic="panel_vs_best_member")
    labels = gold_rows[[*keys, value]].astype(object).drop_duplicates()
    conflicting = labels.duplicated(keys, keep=False)
    if conflicting.any():
        first = labels.loc[conflicting, keys].iloc[0].tolist()
        raise StatsInputError(f"gold judge {gold!r} gives {int(labels.loc[conflicting].groupby(keys, dropna=False).ngroups)}"
                              f" unit(s) several different labels (first: {first}); filter its rows to one condition "
                              "and repeat")
    truth = gold_rows.drop_duplicates(keys).set_index(keys)[value]
    truth = truth[truth.index.isin(compared.set_index(keys).index)]  # units some compared judge has a row for
    if truth.empty:
        raise StatsInputError(f"gold judge {gold!r} has no scored labels for the units the judges rated")
    scores: dict[str, np.ndarray] = {}
    for judge in [*members, panel_judge]:
        part = rows[rows["judge"] == judge]
        if part.duplicated(keys).any():
            raise StatsInputError(f"judge {judge!r} has several rows per item; pick one condition and repeat")
        mine = part.set_index(keys)
        verdict = mine[value].where(is_scored(mine)).reindex(truth.index)
        has_row = truth.index.isin(mine.index)  # no row at all: an absent input, not an unscored verdict
        if metric == "match":
            scores[judge] = np.array([np.nan if not present else float(v == t) if isinstance(v, str) or pd.notna(v)
                                      else 0.0 for v, t, present in zip(verdict, truth, has_row, strict=True)])
        elif metric == "abs_error":
            diff = -np.abs(verdict.astype(float).to_numpy() - truth.astype(float).to_numpy())
            scores[judge] = diff
        else:
            raise StatsInputError(f"metric must be 'match' or 'abs_error', not {metric!r}")
    usable = np.all([np.isfinite(s) for s in scores.values()], axis=0)
    n_dropped = int((~usable).sum())
    scores = {j: s[usable] for j, s in scores.items()}
    items = truth.index.get_level_values("item_id").to_numpy(dtype=object)[usable]
    clustered = len(set(items)) < len(items)
    boot_kw = dict(cluster=items if clustered else None, cluster_name="item_id" if clustered else None,
                   n_resamples=n_resamples, ci_level=ci_level, seed=seed)
    label = f"agreement (share matching the {gold} label)" if metric == "match" else "negated mean absolute error"
    out = []
    for judge, s in scores.items():
        b = bootstrap(lambda idx, s=s: s[idx].mean(axis=1), len(s), return_distribution=False, **boot_kw)
        out.append(result_row(f"agreement_with_{gold}", b.estimate, n=len(s), method=f"{label}; CI: {b.method}",
                              judge=judge, n_missing_dropped=n_dropped, **b.fields()))
    best = max(members, key=lambda j: scores[j].mean())
    diff = scores[panel_judge] - scores[best]
    b = bootstrap(lambda idx: diff[idx].mean(axis=1), len(diff), **boot_kw)
    dist = b.distribution[np.isfinite(b.distribution)]
    p = float(min(1.0, 2 * min(np.mean(dist <= 0), np.mean(dist >= 0)))) if len(dist) else np.nan
    out.append(result_row("panel_minus_best_member", b.estimate, n=len(diff), p_value=p,
                          method=f"paired difference in {label}, panel {panel_judge!r} minus best member {best!r} "
                          f"(chosen on the same units); CI: paired {b.method}", judge=panel_judge, best_member=best,
                          n_missing_dropped=n_dropped, **b.fields()))
    frame = tidy_frame(out)
    return frame[["judge"] + [c for c in frame.columns if c != "judge"]]
