"""Which items to label next: a seeded selection that records each chosen item's inclusion probability.

:func:`select_for_labelling` draws ``budget`` of a judge's items under one of four strategies:

================  ==========================================================================================
``random``        a simple random sample: every item has probability budget / N; corrected means stay
                  unbiased with or without ``weights=``
``stratified``    proportional allocation over ``strata`` (default: the judge's own value, so each verdict
                  or score level is labelled in proportion), at least two labels per stratum; probability
                  n_h / N_h in stratum h
``active``        active statistical inference (Zrnic & Candès 2024): probabilities proportional to the
                  judge's uncertainty on the item, mixed with a ``uniform_share`` of the uniform probability so
                  that none is zero, capped at 1; drawn by systematic sampling in a random order, which draws
                  exactly ``budget`` items with exactly these probabilities. Pass the result as
                  ``corrected_mean(..., weights=selection)`` to reweight each label by 1 / π.
``disagreement``  the items where the other raters of the table (judges, annotators) disagree most with each
                  other and with the judge: for review and adjudication, not for estimates --
                  ``corrected_mean`` refuses it
================  ==========================================================================================

The judge's uncertainty for "active" is ``uncertainty=``: a column of the judge's rows or a mapping
item_id -> value (any non-negative scale: what matters is the ratio between items; the ideal is the expected
size of the judge's error on the item, |gold − judge|). Without it, a ``confidence`` column gives sqrt(1 −
confidence), the error size of a verdict that is right with that probability.

The result has one row per chosen item, in the order to label them (``position``), with ``inclusion_probability``
and the ``strategy`` and ``seed`` that drew it (the strategy travels with the rows, so a statistic can tell).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.judgments import distinct_text, is_scored
from judgelab.stats.corrected.ppi import CorrectionError

__all__ = ["STRATEGIES", "Strategy", "inclusion_probabilities", "select_for_labelling", "stratified_allocation", "systematic_sample"]

Strategy = Literal["random", "stratified", "active", "disagreement"]
STRATEGIES: tuple[str, ...] = ("random", "stratified", "active", "disagreement")


def inclusion_probabilities(uncertainty: np.ndarray, budget: int, uniform_share: float = 0.2) -> np.ndarray:
    """π_i proportional to ``uncertainty`` mixed with the uniform budget / N, capped at 1, summing to ``budget``.

    Items whose π would pass 1 are taken with certainty and the rest of the budget is spread again over the
    others (the usual capping of probability-proportional-to-size designs).
    """
    u = np.asarray(uncertainty, dtype=float)
    n_items = len(u)
    if not 0 < budget <= n_items:
        raise CorrectionError(f"budget must be between 1 and the {n_items} items, not {budget}")
    if not np.all(np.isfinite(u) & (u >= 0)):
        raise CorrectionError("the judge's uncertainty must be a finite non-negative number for every item")
    if not 0 < uniform_share <= 1:
        raise CorrectionError(f"uniform_share must be in (0, 1] so that no item has probability 0, not {uniform_share}")
    size = u / u.sum() if u.sum() > 0 else np.full(n_items, 1.0 / n_items)
    size = (1 - uniform_share) * size + uniform_share / n_items
    pi = np.zeros(n_items)
    certain = np.zeros(n_items, dtype=bool)
    for _ in range(n_items):
        left = budget - certain.sum()
        pi[~certain] = left * size[~certain] / size[~certain].sum()
        pi[certain] = 1.0
        over = ~certain & (pi >= 1)
        if not over.any():
            break
        certain |= over
    return np.minimum(pi, 1.0)


def systematic_sample(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices drawn by systematic sampling in a random order: item i is drawn with probability exactly π_i,
    and exactly sum(π) items are drawn (sum(π) an integer)."""
    order = rng.permutation(len(pi))
    edges = np.concatenate([[0.0], np.cumsum(pi[order])])
    start = rng.random()
    points = start + np.arange(int(round(edges[-1])))
    hit = np.searchsorted(edges, points, side="right") - 1
    return np.sort(order[hit])


def _judge_rows(table: pd.DataFrame, judge: str) -> pd.DataFrame:
    for col in ("item_id", "judge", "status"):
        if col not in table.columns:
            raise CorrectionError(f"a judgments table needs an {col!r} column; build it with judgelab.make_table")
    rows = table[table["judge"] == judge]
    if rows.empty:
        judges = sorted(distinct_text(table["judge"]))
        raise CorrectionError(f"judge {judge!r} has no rows in the table (judges: {', '.join(judges[:12])})")
    dup = rows["item_id"].duplicated()
    if dup.any():
        raise CorrectionError(f"judge {judge!r} has several rows for item {rows.loc[dup, 'item_id'].iloc[0]!r} "
                              "(criteria, conditions, repeats): filter the table to one row per item first")
    return rows.assign(item_id=rows["item_id"].astype(str)).reset_index(drop=True)


def _value(rows: pd.DataFrame, value: str | None) -> pd.Series:
    if value is not None:
        if value not in rows.columns:
            raise CorrectionError(f"value={value!r} is not a column of the table")
        return rows[value]
    for col in ("score", "verdict", "winner"):
        if col in rows.columns and rows.loc[is_scored(rows), col].notna().any():
            return rows[col]
    raise CorrectionError("the judge has no scored value (score, verdict or winner) to stratify or compare on")


def _per_item(rows: pd.DataFrame, source: Any, what: str) -> pd.Series:
    if isinstance(source, str):
        if source not in rows.columns:
            raise CorrectionError(f"{what}={source!r} is not a column of the judge's rows")
        return rows[source]
    if isinstance(source, Mapping):
        values = rows["item_id"].map({str(k): v for k, v in source.items()})
        if values.isna().any():
            raise CorrectionError(f"{what}= has no value for item {rows.loc[values.isna(), 'item_id'].iloc[0]!r}; "
                                  "give one for every item of the judge")
        return values
    raise CorrectionError(f"{what}= is a column name or a mapping item_id -> value, not {type(source).__name__}")


def _uncertainty(rows: pd.DataFrame, uncertainty: Any) -> np.ndarray:
    if uncertainty is None:
        if "confidence" not in rows.columns or rows["confidence"].isna().all():
            raise CorrectionError("'active' needs the judge's uncertainty per item: pass uncertainty= (a column or a "
                                  "mapping item_id -> value), or a table with the judge's confidence")
        conf = pd.to_numeric(rows["confidence"], errors="coerce").astype(float)
        if conf.isna().any() or ((conf < 0) | (conf > 1)).any():
            raise CorrectionError("the judge's confidence must be in [0, 1] on every row for 'active'; pass "
                                  "uncertainty= to say how unsure the judge is where it gave none")
        return np.sqrt(1.0 - conf.to_numpy())
    values = pd.to_numeric(_per_item(rows, uncertainty, "uncertainty"), errors="coerce").astype(float).to_numpy()
    if not np.all(np.isfinite(values) & (values >= 0)):
        raise CorrectionError("uncertainty= must be a finite non-negative number for every item of the judge")
    return values


def stratified_allocation(groups: np.ndarray, budget: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(chosen indices, π per item): proportional allocation over the groups, at least two per group (largest
    remainders first), a simple random sample within each; π = n_h / N_h."""
    labels, codes = np.unique(np.asarray(groups), return_inverse=True)
    sizes = np.bincount(codes).astype(int)
    if budget < 2 * len(sizes):
        raise CorrectionError(f"{len(sizes)} strata need a budget of at least {2 * len(sizes)} (two labels each), "
                              f"not {budget}; merge strata or raise the budget")
    share = sizes / sizes.sum() * budget
    take = np.minimum(np.maximum(np.floor(share).astype(int), 2), sizes)
    while take.sum() > budget:  # the minimum of two may overshoot: take back from the largest allocations
        take[np.argmax(take - share)] -= 1
    while take.sum() < budget:  # largest remainders first
        take[np.argmax(np.where(take < sizes, share - take, -np.inf))] += 1
    chosen = np.concatenate([rng.choice(np.flatnonzero(codes == h), int(k), replace=False)
                             for h, k in enumerate(take) if k])
    return np.sort(chosen), (take / sizes)[codes]


def _disagreement(table: pd.DataFrame, rows: pd.DataFrame, judge: str, raters: Sequence[str] | None,
                  value: str | None) -> np.ndarray:
    values = _value(rows, value)
    column = values.name
    others = table[table["item_id"].astype(str).isin(set(rows["item_id"])) & (table["judge"] != judge)]
    if raters is not None:
        others = others[others["judge"].isin(list(raters))]
    others = others[is_scored(others) & others[column].notna()]
    if others.empty:
        raise CorrectionError(f"'disagreement' needs other raters' {column} on the judge's items (other judges or "
                              "annotators in the table); none were found")
    every = pd.concat([rows.loc[is_scored(rows), ["item_id", column]], others[["item_id", column]].assign(
        item_id=others["item_id"].astype(str))])
    numeric = pd.api.types.is_numeric_dtype(every[column])
    spread = every.groupby("item_id")[column].agg(
        (lambda s: float(np.ptp(s.astype(float)))) if numeric else (lambda s: float(s.nunique() - 1)))
    return rows["item_id"].map(spread).fillna(0.0).to_numpy(dtype=float)


def select_for_labelling(table: pd.DataFrame, *, judge: str, budget: int, strategy: Strategy = "random",
                         uncertainty: Any = None, strata: Any = None, raters: Sequence[str] | None = None,
                         value: str | None = None, uniform_share: float = 0.2, seed: int = 0) -> pd.DataFrame:
    """``budget`` of the judge's items to label, each with its inclusion probability (see the module).

    ``table``: a judgments table with one row per item of ``judge`` (filter it to one criterion and
    condition). ``uncertainty`` ("active"), ``strata`` ("stratified"): a column of the judge's rows or a
    mapping item_id -> value. ``raters`` ("disagreement"): the other raters compared (default: every other
    judge of the table). ``value``: the compared column (default score, else verdict, else winner).
    ``uniform_share``: the share of uniform probability mixed into "active". ``seed`` fixes the draw.

    Returns one row per chosen item, in labelling order: ``position``, ``item_id``, ``inclusion_probability``,
    ``strategy``, ``seed``, and the strategy's own column (``uncertainty``, ``stratum`` or ``disagreement``).
    """
    if strategy not in STRATEGIES:
        raise CorrectionError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer):
        raise CorrectionError(f"budget is a number of items to label, not {budget!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise CorrectionError(f"seed must be a non-negative integer, not {seed!r}")
    if not isinstance(table, pd.DataFrame):
        raise CorrectionError(f"table must be a judgments table, not {type(table).__name__}")
    rows = _judge_rows(table, judge)
    n_items = len(rows)
    if not 0 < budget <= n_items:
        raise CorrectionError(f"budget must be between 1 and the judge's {n_items} items, not {budget}")
    rng = np.random.default_rng(seed)
    extra: dict[str, Any] = {}
    if strategy == "random":
        chosen = np.sort(rng.choice(n_items, budget, replace=False))
        pi = np.full(n_items, budget / n_items)
    elif strategy == "stratified":
        groups = (_value(rows, value) if strata is None else _per_item(rows, strata, "strata")).astype("string")
        groups = groups.fillna("(unscored)").to_numpy(dtype=object)
        chosen, pi = stratified_allocation(groups, budget, rng)
        extra["stratum"] = groups
    elif strategy == "active":
        u = _uncertainty(rows, uncertainty)
        pi = inclusion_probabilities(u, budget, uniform_share)
        chosen = systematic_sample(pi, rng)
        extra["uncertainty"] = u
    else:
        spread = _disagreement(table, rows, judge, raters, value)
        tiebreak = rng.random(n_items)
        chosen = np.lexsort((tiebreak, -spread))[:budget]
        pi = np.ones(n_items)  # chosen for certain: a review list, not a probability sample
        extra["disagreement"] = spread
    labelling_order = chosen if strategy == "disagreement" else rng.permutation(chosen)
    out = pd.DataFrame({"position": np.arange(len(labelling_order)),
                        "item_id": rows["item_id"].to_numpy()[labelling_order],
                        "inclusion_probability": pi[labelling_order], "strategy": strategy, "seed": int(seed)})
    for name, values in extra.items():
        out[name] = np.asarray(values)[labelling_order]
    return out
