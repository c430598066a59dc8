"""Position bias (pairwise rubrics): judge every pair in both orders and compare.

Reported (each with n, an interval and the method):

* ``consistency_rate``: items whose verdict (original labels) is the same in both orders;
* ``flip_rate``: items whose verdict differs between the orders (judgelab.stats.flip_rate; a TIE in
  one order counts), and ``reversal_rate``: items whose verdict reverses (A in one order, B in the other);
* ``first_position_rate``: decisive verdicts that chose the candidate shown first, with the exact
  binomial test against 50% (two verdicts per item: the test treats them as independent);
* ``first_position_among_flips``: among reversed items, the share that followed the first position
  both times (vs the second both times), an exact binomial test on independent items;
* calibrated verdicts per inconsistency policy, as a sensitivity table: ``tie`` (the
  swap-consistency rule: agreeing passes keep their winner with the mean confidence, disagreeing
  ones become a TIE at 0.5), ``drop`` (inconsistent items leave the denominator), ``first`` (the verdict of the order
  shown first, the seeded per-item order), and ``average`` (FairEval's balanced position
  calibration: side A's preference, confidence-weighted, averaged over both orders). For each:
  side A's win rate (ties count half) and, when gold labels are present, accuracy; when the judge
  states confidences, ``swap_rule_confidence`` is their mean after the swap-consistency rule.

Unscored verdicts are handled the same way in EVERY row of the summary (an item with no row at all in
one order is an absent input, left out under both policies and counted in the note): ``unscored="exclude"`` leaves an item with an unscored order out (of the
consistency, flip and first-position rates and of every calibrated verdict, win rate and
accuracy), counted in each row's note; ``"tie"`` counts an unscored verdict as a TIE (LLMBar's
convention), so every item stays in. With ``unscored="tie"`` and no stated confidences, the
``average`` policy's accuracy is JudgeBench's metric on decisive gold labels (each order votes
+1 / -1 / 0, a pair is right when the sum is positive, every pair in the denominator), the same
number as ``stats.pairwise_accuracy(table, policy="net")``'s ``accuracy_net``.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.engine.runner import item_order_seed
from judgelab.errors import ConfigError
from judgelab.judgments import distinct_text, is_scored
from judgelab.probes.experiment import POINTS, proportion_row, resolve_rubric, run_once
from judgelab.probes.result import ProbeResult, plot_estimates, stats_rows, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES, bootstrap_ci, flip_rate
from judgelab.stats.bootstrap import TABLE_MAX_CELLS, TableStatistic, bootstrap
from judgelab.stats.question import check_design, describe_values
from judgelab.stats.tidy import join_notes, result_row

__all__ = ["INCONSISTENCY_POLICIES", "UNSCORED_POLICIES", "InconsistencyPolicy", "Unscored", "analyze",
           "apply_unscored", "both_orders", "calibrate", "consistency_rows", "first_position_rows", "plot_position",
           "position", "sensitivity_rows"]

# how a verdict is calibrated when the two presentation orders disagree (see the module docstring)
InconsistencyPolicy = Literal["tie", "drop", "first", "average"]
INCONSISTENCY_POLICIES: tuple[InconsistencyPolicy, ...] = ("tie", "drop", "first", "average")
Unscored = Literal["exclude", "tie"]
UNSCORED_POLICIES: tuple[Unscored, ...] = ("exclude", "tie")


def position(
    items: Any, rubric: Rubric | str, model: str,
    *,
    policy: InconsistencyPolicy = "tie",
    unscored: Unscored = "exclude",
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge every item in both orders (conditions "original" and "swapped") and analyse position bias."""
    rubric = resolve_rubric(rubric)
    if rubric.mode != "pairwise":
        raise ConfigError(f"the position probe needs a pairwise rubric; {rubric.name!r} is {rubric.mode!r}")
    table = run_once(items, rubric, model, swap=True, seed=seed, **run_kw)
    # with repeats the probe reads the first repeat of each order, said in the result's meta
    first = table["repeat"].min() if "repeat" in table and table["repeat"].nunique(dropna=True) > 1 else None
    result = analyze(table, policy=policy, unscored=unscored, criterion=criterion, seed=seed,
                     repeat=None if first is None else int(first))
    result.meta.update(model=model, rubric=rubric.name)
    return result


def analyze(
    table: pd.DataFrame,
    *,
    policy: InconsistencyPolicy = "tie",
    unscored: Unscored = "exclude",
    criterion: str = "overall",
    judge: str | None = None,
    gold: str = "gold",
    conditions: tuple[str, str] = ("original", "swapped"),
    repeat: int | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> ProbeResult:
    """Position-bias statistics from a table holding both orders (no calls).

    ``gold`` names the judge whose rows are gold labels (used for accuracy when present).
    ``seed`` decides, per item, which order counts as shown first (policy ``first``), exactly as
    the engine's ``order="random"`` does. The probe reads one verdict per order: a table with several
    repeats needs ``repeat=`` (which one to read; :mod:`judgelab.probes.repeats` measures their agreement).
    """
    if policy not in INCONSISTENCY_POLICIES:
        raise ConfigError(f"policy must be one of {INCONSISTENCY_POLICIES}, not {policy!r}")
    if unscored not in UNSCORED_POLICIES:
        raise ConfigError(f"unscored must be 'exclude' or 'tie', not {unscored!r}")
    pairs, gold_labels = both_orders(table, criterion=criterion, judge=judge, gold=gold, conditions=conditions,
                                     repeat=repeat)
    pairs["first_shown"] = [conditions[1] if item_order_seed(seed, i) else conditions[0] for i in pairs.index]
    used, unscored_note = apply_unscored(pairs, unscored)
    rows = consistency_rows(used, unscored, note=unscored_note)
    rows += first_position_rows(used, note=unscored_note)
    calibrated = calibrate(used, gold_labels)
    stated = bool(used[["confidence_original", "confidence_swapped"]].notna().to_numpy().any())
    rows += sensitivity_rows(calibrated, gold_labels, seed=seed, n_resamples=n_resamples, note=unscored_note,
                             stated_confidence=stated)
    summary = summary_frame(rows)
    return ProbeResult(
        "position", table, summary, plotter=plot_position,
        details={"pairs": pairs, "calibrated": calibrated,
                 "sensitivity": summary[summary["metric"].isin(["win_rate_A", "accuracy"])].reset_index(drop=True)},
        meta={"policy": policy, "unscored": unscored, "criterion": criterion, "n_items": len(pairs),
              "n_items_used": len(used), **({"repeat": repeat} if repeat is not None else {})},
    )


def apply_unscored(pairs: pd.DataFrame, unscored: Unscored) -> tuple[pd.DataFrame, str]:
    """The items and verdicts every statistic of the probe uses, and the note that says how.

    "tie": an unscored verdict becomes a TIE; "exclude": an item with one is left out. An item with no row in
    one order (an absent input, not an unscored verdict) is left out under both policies, and counted.
    """
    absent = ~pairs["row_original"] | ~pairs["row_swapped"] if "row_original" in pairs else \
        pd.Series(False, index=pairs.index)
    absent_note = (f"{int(absent.sum())} item(s) without a row in one order left out (an absent verdict is not an "
                   "unscored one)") if absent.any() else ""
    pairs = pairs[~absent]
    missing = pairs["winner_original"].isna() | pairs["winner_swapped"].isna()
    n = int(missing.sum())
    if unscored == "tie":
        used = pairs.assign(winner_original=pairs["winner_original"].astype(object).where(
            pairs["winner_original"].notna(), "TIE"), winner_swapped=pairs["winner_swapped"].astype(object).where(
            pairs["winner_swapped"].notna(), "TIE"))
        return used, join_notes(f"{n} item(s) with an unscored order: counted as TIE" if n else "", absent_note)
    return pairs[~missing], join_notes(f"{n} item(s) with an unscored order excluded" if n else "", absent_note)


# what both_orders reads: the question's columns, the design columns check_design looks at, the verdicts
_READ = frozenset({"item_id", "judge", "criterion", "side", "condition", "repeat", "status", "winner", "confidence",
                   "score", "verdict", "turn", "rubric", "rubric_version", "run_id"})


def _rows(mask: pd.Series) -> np.ndarray:
    """A row filter as numpy booleans (a missing comparison keeps no row, as a nullable mask does)."""
    return mask.to_numpy(dtype=bool, na_value=False)


def both_orders(table: pd.DataFrame, *, criterion: str, judge: str | None, gold: str,
                conditions: tuple[str, str], repeat: int | None = None) -> tuple[pd.DataFrame, pd.Series | None]:
    """One row per item: winner and confidence in each order (original labels; None when unscored)."""
    # only the columns read below, and one row filter at the end: a chain of filtered copies of a whole
    # ten-million-row table (text, tokens, times included) took 4 GB above the table itself
    table = table[[c for c in table.columns if c in _READ]]
    question = (table["criterion"] == criterion) & table["side"].isna()
    gold_rows = table[question & (table["judge"] == gold)]
    gold_rows = gold_rows[is_scored(gold_rows)]
    conflicting = gold_rows.groupby("item_id")["winner"].nunique()
    if (conflicting > 1).any():
        raise ConfigError(f"items with conflicting gold labels: {list(conflicting[conflicting > 1].index[:5])}")
    gold_labels = gold_rows.drop_duplicates("item_id").set_index("item_id")["winner"] if len(gold_rows) else None
    keep = _rows(question & (table["judge"] != gold))
    if judge is not None:
        keep &= _rows(table["judge"] == judge)
    judges = sorted(distinct_text(table["judge"][keep]))
    if len(judges) > 1:
        raise ConfigError(f"the table holds several judges {judges}; pass judge=<one of them>")
    missing = [c for c in conditions if c not in distinct_text(table["condition"][keep])]
    if missing:
        raise ConfigError(f"the position probe needs both orders; the table has no {missing} rows for "
                          f"criterion {criterion!r}")
    keep &= _rows(table["condition"].isin(conditions))
    if repeat is not None:
        if "repeat" not in table or not (table["repeat"][keep] == repeat).any():
            raise ConfigError(f"the table has no rows of repeat {repeat} for criterion {criterion!r}")
        keep &= _rows(table["repeat"] == repeat)
    elif "repeat" in table and table["repeat"][keep].nunique(dropna=False) > 1:
        repeats = table["repeat"][keep]
        found = sorted(repeats.dropna().astype(int).unique())
        raise ConfigError(f"the table has {repeats.nunique(dropna=False)} repeats ({describe_values(found)}) "
                          f"of each order: pass repeat=<one of them> (the position probe reads one verdict per order; "
                          "probes.repeats measures repeat agreement)")
    rows = table[keep]
    check_design(rows, rater="condition", ignore=("condition", "criterion", "side", "judge", "repeat"),
                 fix="filter the table to one before the analysis", statistic="the position probe")
    dup = rows.duplicated(["item_id", "condition"], keep=False)
    if dup.any():
        first = rows.loc[dup, ["item_id", "condition"]].iloc[0].tolist()
        raise ConfigError(f"{int(dup.sum())} rows share an item and order (first: {first}), e.g. two runs of one "
                          "judge; filter the table to one run_id")
    out = {}
    for name, key in (("original", conditions[0]), ("swapped", conditions[1])):
        part = rows[rows["condition"] == key].set_index("item_id")
        ok = is_scored(part)
        out[f"winner_{name}"] = part["winner"].where(ok).astype(object)
        out[f"confidence_{name}"] = part["confidence"].where(ok).astype(float)
        out[f"row_{name}"] = pd.Series(True, index=part.index)
    pairs = pd.DataFrame(out)  # an item missing an order gets a missing winner there, and row_<order> False
    for name in ("original", "swapped"):
        pairs[f"row_{name}"] = pairs[f"row_{name}"].notna()
    pairs.index = pairs.index.astype(str)
    return pairs, gold_labels


def consistency_rows(pairs: pd.DataFrame, unscored: Unscored, *, note: str | None = None) -> list[dict[str, Any]]:
    """Consistency, flip and reversal rates; ``pairs`` as :func:`apply_unscored` returns them (applied here
    when it was not, so the function also works on the raw pairs)."""
    if note is None:
        pairs, note = apply_unscored(pairs, unscored)
    wo, ws = pairs["winner_original"], pairs["winner_swapped"]
    policy = "unscored verdict counts as TIE" if unscored == "tie" else "items with an unscored order excluded"
    n = len(wo)
    consistent = int((wo == ws).sum())
    reversals = int((((wo == "A") & (ws == "B")) | ((wo == "B") & (ws == "A"))).sum())
    flips = stats_rows(lambda: flip_rate(wo.astype(object).to_numpy(), ws.astype(object).to_numpy()),
                       ["flip_rate"], policy=policy, note=note)
    return [
        proportion_row("consistency_rate", consistent, n, policy=policy, note=note),
        *flips,
        proportion_row("reversal_rate", reversals, n, policy=policy, note=note),
    ]


def first_position_rows(pairs: pd.DataFrame, *, note: str = "") -> list[dict[str, Any]]:
    # The candidate shown first is A in the original order and B in the swapped one (original labels).
    first_o = pairs["winner_original"].isin(["A", "B"])
    first_s = pairs["winner_swapped"].isin(["A", "B"])
    policy = "decisive (A/B) verdicts only; ties and unscored excluded"
    k = int((pairs.loc[first_o, "winner_original"] == "A").sum() + (pairs.loc[first_s, "winner_swapped"] == "B").sum())
    n = int(first_o.sum() + first_s.sum())
    rows = [proportion_row("first_position_rate", k, n, test_half=True, policy=policy,
                           note=join_notes("two verdicts per item, treated as independent by the test", note))]
    flipped = pairs[(pairs["winner_original"].isin(["A", "B"])) & (pairs["winner_swapped"].isin(["A", "B"]))
                    & (pairs["winner_original"] != pairs["winner_swapped"])]
    k_first = int((flipped["winner_original"] == "A").sum())  # A then B: the first position both times
    rows.append(proportion_row("first_position_among_flips", k_first, len(flipped), test_half=True,
                               policy="reversed items only", note=note))
    return rows


_CODES = {"A": 1, "B": 2, "TIE": 3}  # 0: no verdict (unscored, or not a label)
_LABELS = np.array([None, "A", "B", "TIE"], dtype=object)


def _label_codes(series: pd.Series) -> np.ndarray:
    """Winner codes per item: 1 A, 2 B, 3 TIE, 0 when missing or not a string (pandas may hold a missing
    label as NaN or NA). Another string is refused as combine_swapped_passes refuses it."""
    codes = np.zeros(len(series), dtype=np.int8)
    for label, code in _CODES.items():
        codes[(series == label).to_numpy(dtype=bool, na_value=False)] = code
    others = np.flatnonzero((codes == 0) & series.notna().to_numpy(dtype=bool))
    bad = [v for v in series.iloc[others] if isinstance(v, str)]
    if bad:
        raise ValueError(f"winner {bad[0]!r} must be 'A', 'B' or 'TIE' (original labels)")
    return codes


def _preference(codes: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """Side A's preference in [0, 1] from one pass: the confidence toward the winner (1 when absent)."""
    conf = np.where(np.isnan(confidence), 1.0, confidence)
    pref = np.where(codes == 1, 0.5 + conf / 2, np.where(codes == 2, 0.5 - conf / 2, 0.5))
    return np.where(codes == 0, np.nan, pref)


def calibrate(pairs: pd.DataFrame, gold_labels: pd.Series | None) -> pd.DataFrame:
    """Per item and policy: the calibrated winner (None when the policy drops or cannot score it).

    Column by column over winner codes (the swap rule of combine_swapped_passes, vectorized): passes that
    agree keep their winner and mean confidence, passes that disagree give TIE at 0.5, an unscored pass
    gives None."""
    out = pd.DataFrame(index=pairs.index)
    wo, ws = _label_codes(pairs["winner_original"]), _label_codes(pairs["winner_swapped"])
    co = pairs["confidence_original"].to_numpy(dtype=float, na_value=np.nan)
    cs = pairs["confidence_swapped"].to_numpy(dtype=float, na_value=np.nan)
    both, agree = (wo > 0) & (ws > 0), wo == ws
    out["tie"] = pd.Series(_LABELS[np.where(both, np.where(agree, wo, 3), 0)], index=pairs.index, dtype=object)
    tie_conf = np.where(agree, (co + cs) / 2, 0.5)  # NaN where an agreeing pass has no confidence: None
    if (both & ~np.isnan(tie_conf)).any() or not len(pairs):
        out["tie_confidence"] = np.where(both, tie_conf, np.nan)
    else:  # no confidence at all: the column holds None, as the per-item list of None made it
        out["tie_confidence"] = pd.Series(np.full(len(pairs), None, dtype=object), index=pairs.index, dtype=object)
    out["drop"] = pd.Series(_LABELS[np.where(both & agree, wo, 0)], index=pairs.index, dtype=object)
    shown_original = (pairs["first_shown"] == "original").to_numpy(dtype=bool, na_value=False)
    out["first"] = pd.Series(_LABELS[np.where(shown_original, wo, ws)], index=pairs.index, dtype=object)
    pref = (_preference(wo, co) + _preference(ws, cs)) / 2
    out["average_preference_A"] = pref
    average = np.where(np.isnan(pref), 0, np.where(pref > 0.5, 1, np.where(pref < 0.5, 2, 3)))
    out["average"] = pd.Series(_LABELS[average], index=pairs.index, dtype=object)
    if gold_labels is not None:
        out["gold"] = gold_labels.reindex(out.index.astype(str)).astype(object)
    return out


def sensitivity_rows(calibrated: pd.DataFrame, gold_labels: pd.Series | None, *, seed: int,
                     n_resamples: int, note: str = "", stated_confidence: bool = True) -> list[dict[str, Any]]:
    """Win rate of A and accuracy per inconsistency policy; ``swap_rule_confidence`` only when the judge
    stated confidences (without them the rule's 0.5 for a disagreeing pair is not a confidence)."""
    unscored_note = note
    rows = []
    for policy in INCONSISTENCY_POLICIES:
        verdicts = calibrated[policy]
        scored = verdicts.dropna()
        note = join_notes(unscored_note, f"{len(verdicts) - len(scored)} item(s) without a calibrated verdict"
                          if len(scored) < len(verdicts) else "")
        points = scored.map(POINTS).to_numpy(dtype=float)
        if len(points):
            ci = _mean_ci(points, n_resamples=n_resamples, seed=seed)
            rows.append(result_row("win_rate_A", float(points.mean()), n=len(points), ci_low=ci["ci_low"],
                                   ci_high=ci["ci_high"], method=f"mean points (tie = 0.5), {ci['method']}",
                                   policy=policy, note=note))
        else:
            rows.append(result_row("win_rate_A", math.nan, n=0, method="mean points (tie = 0.5)", policy=policy,
                                   note="no calibrated verdicts"))
        if gold_labels is not None:
            gold = calibrated.loc[scored.index, "gold"]
            has_gold = gold.notna()
            correct = int((scored[has_gold] == gold[has_gold]).sum())
            rows.append(proportion_row("accuracy", correct, int(has_gold.sum()), policy=policy, note=note))
    confidence = pd.to_numeric(calibrated["tie_confidence"], errors="coerce").dropna().to_numpy(float)
    if stated_confidence and len(confidence):  # the swap-consistency rule: agreeing passes keep their mean confidence, others 0.5
        ci = _mean_ci(confidence, n_resamples=n_resamples, seed=seed)
        rows.append(result_row("swap_rule_confidence", float(confidence.mean()), n=len(confidence),
                               ci_low=ci["ci_low"], ci_high=ci["ci_high"], policy="tie", note=unscored_note,
                               method=f"mean confidence after the swap-consistency rule, {ci['method']}"))
    return rows


def _mean_ci(values: np.ndarray, *, n_resamples: int, seed: int) -> dict[str, Any]:
    """Percentile bootstrap CI of a mean (ci_low, ci_high, method). Points take three values (0, 0.5, 1) and
    stated confidences a few: with at most one distinct value per two items the resamples are multinomial
    counts over the distinct values (the same distribution as drawing items, O(values) per resample instead
    of O(items)); otherwise stats.bootstrap_ci's mean."""
    distinct, codes = np.unique(values, return_inverse=True)
    if len(distinct) > min(TABLE_MAX_CELLS, len(values) // 2):
        return dict(bootstrap_ci(values, statistic="mean", n_resamples=n_resamples, seed=seed).iloc[0])
    stat = TableStatistic(codes.ravel(), len(distinct), lambda counts: counts @ distinct / counts.sum(axis=1))
    boot = bootstrap(stat, len(values), n_resamples=n_resamples, seed=seed, return_distribution=False)
    return {"ci_low": boot.ci_low, "ci_high": boot.ci_high, "method": boot.method}


def plot_position(result: ProbeResult, ax: Any = None) -> Any:
    """Two panels: the position rates against the 50% line, and side A's win rate per inconsistency
    policy (the sensitivity table). Returns the Figure (two panels, so ``ax`` is not used)."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.4), constrained_layout=True)
    plot_estimates(result, left, metrics=("consistency_rate", "flip_rate", "reversal_rate", "first_position_rate",
                                          "first_position_among_flips"))
    left.axvline(0.5, color="grey", linestyle="--", linewidth=1)
    left.set_title("position: rates (bars: exact 95% CI)")
    plot_estimates(result, right, metrics=("win_rate_A", "accuracy"))
    right.set_title("calibrated verdicts by inconsistency policy")
    return fig

