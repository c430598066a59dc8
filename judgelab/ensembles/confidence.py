"""Confidence for every verdict, from four sources, and consolidated verdict rows that carry it.

* position consistency (the swap-consistency rule): both presentation orders agree -> that winner with
  the mean of the two stated confidences; they disagree -> "TIE" with confidence 0.5
  (:func:`judgelab.rubrics.combine_swapped_passes`). A pass whose judge states no confidence
  counts as ``stated_default`` (1.0), so a judge without stated confidences gets 1.0 when
  consistent and 0.5 when not;
* member agreement: the panel aggregate's share of members voting for it (:mod:`judgelab.ensembles.panels`);
* repeat spread: the share of repeats that give the modal verdict (scores: within ``tolerance``
  of the median);
* logprob mass: the probability of the chosen score value among the valid values at the score
  token, read from the cached reply's logprobs (the table keeps only the expected score).

Consolidated rows keep the judge and get condition ``"position_consolidated"`` (swap) or keep the
condition with ``repeat`` NA (repeats), so they can be appended to the table they came from.
Calibration against gold or human labels is in :mod:`judgelab.stats.calibration`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.engine.cache import RequestCache
from judgelab.engine.logprobs import score_probabilities  # the same score token as the expected score
from judgelab.rubrics import combine_swapped_passes

__all__ = ["POSITION_CONDITION", "chosen_score_probability", "key_groups", "logprob_confidence",
           "position_consistency", "repeat_agreement"]

POSITION_CONDITION = "position_consolidated"


def key_groups(rows: pd.DataFrame, keys: Sequence[str]) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """(the key values as a dict, None where missing; the rows) per group, in order of first appearance.

    A missing key value (e.g. ``side`` of a whole-answer row, ``repeat`` of a consolidated one) forms
    its own group instead of dropping the rows.
    """
    for key, group in rows.groupby(list(keys), sort=False, dropna=False):
        yield {k: None if pd.isna(v) else v for k, v in zip(keys, key, strict=True)}, group


def position_consistency(table: pd.DataFrame, *, judges: Sequence[str] | None = None,
                         conditions: tuple[str, str] = ("original", "swapped"),
                         stated_default: float = 1.0) -> pd.DataFrame:
    """One consolidated pairwise row per judge x item x criterion x repeat from the two orders.

    Rows with a winner in both ``conditions`` are combined by the swap-consistency rule; an item with an
    unscored pass (or a missing one) gets an unscored consolidated row saying which pass failed.
    ``detail`` keeps both pass winners and ``consistent``.
    """
    rows = table[table["condition"].isin(conditions) & table["side"].isna()]
    if judges is not None:
        rows = rows[rows["judge"].isin(list(judges))]
    rows = rows[rows["winner"].notna() | ~judgments.is_scored(rows)]
    if rows.empty:
        raise ValueError(f"no pairwise verdict rows with condition in {conditions} to consolidate")
    keys = ["run_id", "judge", "item_id", "criterion", "repeat"]
    rows = rows.reset_index(drop=True)
    group = rows.groupby(keys, sort=False, dropna=False, observed=True).ngroup().to_numpy()  # order of appearance
    n_groups = int(group.max()) + 1
    keyed = rows.assign(_group=group)
    firsts = keyed.drop_duplicates("_group")  # one row per group, already in group order (numbered as they appear)
    passes = [_pass_rows(rows, group, n_groups, c) for c in conditions]  # row of each group's pass, -1: none
    billed = keyed.drop_duplicates(["_group", "call_id"])  # a call's cost counts once
    cost = billed["cost_usd"].astype(float).groupby(billed["_group"]).sum(min_count=1).reindex(range(n_groups))
    status, reason = rows["status"].to_numpy(), rows["unscored_reason"].to_numpy()
    winner, confidence = rows["winner"].to_numpy(), rows["confidence"].to_numpy()
    now = pd.Timestamp.now(tz="UTC")
    out = []
    for g, first in enumerate(firsts.itertuples(index=False)):
        base = {k: None if pd.isna(v) else v for k, v in zip(keys, (getattr(first, k) for k in keys), strict=True)}
        base.update(condition=POSITION_CONDITION, rubric=first.rubric, rubric_version=first.rubric_version,
                    created_at=now, cost_usd=float(cost.iloc[g]))
        problem = (_pass_problem(status, reason, passes[0][g], conditions[0])
                   or _pass_problem(status, reason, passes[1][g], conditions[1]))
        if problem:
            out.append({**base, "status": problem[0], "unscored_reason": problem[1]})
            continue
        i, j = passes[0][g], passes[1][g]
        combined = combine_swapped_passes(
            {"winner": winner[i], "confidence": _stated(confidence[i], stated_default)},
            {"winner": winner[j], "confidence": _stated(confidence[j], stated_default)},
        )
        detail = {"consistent": combined["consistent"], "first_pass_winner": combined["first_pass_winner"],
                  "second_pass_winner": combined["second_pass_winner"], "confidence_source": "position_consistency"}
        out.append({**base, "status": judgments.OK, "winner": combined["winner"], "verdict": combined["winner"],
                    "confidence": combined["confidence"], "detail": detail})
    return judgments.make_table(out)


def _pass_rows(rows: pd.DataFrame, group: np.ndarray, n_groups: int, condition: str) -> np.ndarray:
    """Per group, the position of its ``condition`` row (-1 where it has none); two such rows raise."""
    at = np.flatnonzero((rows["condition"] == condition).to_numpy())
    if (np.bincount(group[at], minlength=n_groups) > 1).any():
        raise ValueError(f"several {condition!r} rows for one judge/item/criterion/repeat")
    out = np.full(n_groups, -1)
    out[group[at]] = at
    return out


def _pass_problem(status: np.ndarray, reason: np.ndarray, row: int, condition: str) -> tuple[str, str] | None:
    if row < 0:
        return judgments.PARSE_ERROR, f"no {condition!r} pass to compare with"
    if status[row] != judgments.OK:
        return str(status[row]), f"the {condition!r} pass is unscored: {reason[row]}"
    return None


def _stated(value: Any, default: float) -> float:
    return default if value is None or pd.isna(value) else float(value)


def repeat_agreement(table: pd.DataFrame, *, tolerance: float = 0.5) -> pd.DataFrame:
    """One row per judge x item x criterion x side x condition over its repeats (``repeat`` NA).

    Winners: the modal winner (several modes -> "TIE"), confidence = share of scored repeats
    giving it. Scores: the median, confidence = share of scored repeats within ``tolerance`` of it.
    Unscored repeats count against agreement (they are in the denominator); all unscored -> unscored.
    """
    keys = ["run_id", "judge", "item_id", "criterion", "side", "condition"]
    out = []
    for base, group in key_groups(table, keys):
        if len(group) < 2:
            continue
        base.update(rubric=group["rubric"].iloc[0], rubric_version=group["rubric_version"].iloc[0],
                    created_at=pd.Timestamp.now(tz="UTC"))
        ok = judgments.scored(group)
        detail: dict[str, Any] = {"n_repeats": len(group), "n_scored": len(ok), "confidence_source": "repeat_spread"}
        if ok.empty:
            out.append({**base, "status": Counter(group["status"]).most_common(1)[0][0],
                        "unscored_reason": f"all {len(group)} repeats are unscored", "detail": detail})
        elif ok["winner"].notna().any():
            tally = Counter(w for w in ok["winner"] if isinstance(w, str))
            top = max(tally.values())
            modes = [w for w, c in tally.items() if c == top]
            winner = modes[0] if len(modes) == 1 else "TIE"
            detail["votes"] = dict(tally)
            out.append({**base, "status": judgments.OK, "winner": winner, "verdict": winner,
                        "confidence": tally.get(winner, top) / len(group), "detail": detail})
        else:
            scores = ok["score"].astype(float).to_numpy()
            median = float(np.median(scores))
            detail["scores"] = scores.tolist()
            out.append({**base, "status": judgments.OK, "score": median,
                        "confidence": float(np.sum(np.abs(scores - median) <= tolerance)) / len(group),
                        "detail": detail})
    return judgments.make_table(out) if out else judgments.empty_table()


def chosen_score_probability(tokens: list[dict[str, Any]] | None, scale: tuple[int, int],
                             chosen: float) -> tuple[float | None, str]:
    """P(chosen value) / P(any valid value) at the score token, or (None, why not)."""
    mass, how = score_probabilities(tokens, scale)
    total = sum((mass or {}).values())
    if not mass or total <= 0:
        return None, how
    return mass.get(int(chosen), 0.0) / total, "ok"


def logprob_confidence(table: pd.DataFrame, cache: RequestCache | str, scale: tuple[int, int]) -> pd.DataFrame:
    """A copy of ``table`` whose scored rows get ``confidence`` = the probability of their score.

    Each row's reply is read from the request cache by ``call_id`` (run with ``logprobs=True``);
    rows whose reply or logprobs are missing keep their confidence and get a ``confidence_note``
    in ``detail`` saying why.
    """
    own = not isinstance(cache, RequestCache)
    store = RequestCache(cache) if own else cache
    out = table.copy()
    try:
        conf = out["confidence"].astype("Float64").copy()
        details = out["detail"].astype(object).copy()
        for idx, row in out.iterrows():
            if row["status"] != judgments.OK or pd.isna(row["score"]):
                continue
            hit = store.get(str(row["call_id"])) if pd.notna(row["call_id"]) else None
            prob, why = (None, "reply not in the cache") if hit is None else chosen_score_probability(
                hit.get("logprobs"), scale, float(row["score"]))
            d = judgments.detail(row)
            if prob is None:
                d["confidence_note"] = f"no logprob confidence: {why}"
            else:
                conf[idx] = prob
                d["confidence_source"] = "logprob"
            details[idx] = json.dumps(d, sort_keys=True, default=str)
        out["confidence"], out["detail"] = conf, details
    finally:
        if own:
            store.close()
    return judgments.make_table(out)
