"""Reading a judgments table for the ranking statistics: the rows of one judge (and one design cell) per ranking.

A pairwise judgments table (:mod:`judgelab.judgments`) keeps one row per item, judge and order
(``condition`` "original" or "swapped") with ``winner`` "A", "B" or "TIE" in the ORIGINAL candidate labels:
in a swapped row the runner has already mapped the shown labels back, so "A" always means the candidate the
item names first. The caller names the columns holding the systems of candidates A and B (as the item names
them, in the original order); each (item, order) verdict is then one battle between those two systems.

A score table keeps one row per item and judge with a numeric ``score``; the caller names the column of the
item's system.

Rules (the project's one-question rule, :mod:`judgelab.stats.question`): several judges need ``judge=``
(or ``by="judge"``); several criteria, repeats, rubrics or sides are refused unless ``by=`` splits on them;
orders other than "original" / "swapped" are refused for battles. Unscored rows (status other than "ok")
are never dropped silently: without ``unscored=`` they are refused, counted by status; ``unscored="drop"``
leaves them out and ``unscored="tie"`` (battles only) counts them as ties, and the count is in the result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from judgelab.judgments import is_scored
from judgelab.stats.pairing import AmbiguousQuestionError, EmptyInputError, StatsInputError
from judgelab.stats.question import check_design, describe_values, rows_read

__all__ = ["ORDERS", "TableRows", "UnscoredPolicy", "by_columns", "frame_groups", "group_rows", "stack_blocks",
           "table_battles", "table_scores"]

UnscoredPolicy = Literal["tie", "drop"]
ORDERS: tuple[str, ...] = ("original", "swapped")


@dataclass(frozen=True)
class TableRows:
    """One ranking's input read from a judgments table: a plain frame and what was done to get it."""

    frame: pd.DataFrame
    n_unscored: int
    note: str


def by_columns(by: str | Sequence[str] | None) -> list[str]:
    """``by=`` as a list of column names (none, one or several)."""
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def frame_groups(frame: pd.DataFrame, by: str | Sequence[str] | None,
                 what: str = "the frame") -> list[tuple[dict[str, object], pd.DataFrame]]:
    """A plain frame split into one block per ``by`` group: (group keys, rows) in sorted order of the keys, the
    whole frame as one block with no keys when ``by`` is None; a ``by`` column ``what`` lacks is refused."""
    by_cols = by_columns(by)
    missing = [c for c in by_cols if c not in getattr(frame, "columns", [])]
    if missing:
        raise StatsInputError(f"by= names column {missing[0]!r}, which {what} does not have")
    if not by_cols:
        return [({}, frame)]
    return [(dict(zip(by_cols, key if isinstance(key, tuple) else (key,), strict=True)), part)
            for key, part in frame.groupby(by_cols, sort=True, dropna=False)]


def stack_blocks(blocks: Sequence[tuple[dict[str, object], pd.DataFrame]]) -> pd.DataFrame:
    """The blocks one under another, each block's group keys as leading columns."""
    frames = []
    for keys, frame in blocks:
        for position, (column, value) in enumerate(keys.items()):
            frame.insert(position, column, value)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _check_columns(table: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        shown = ", ".join(map(str, list(table.columns)[:16]))
        raise StatsInputError(f"the judgments table has no column {missing[0]!r} (its columns: {shown}); {what}")


def group_rows(table: pd.DataFrame, *, judge: str | None, by: str | Sequence[str] | None,
               value: str) -> list[tuple[dict[str, object], pd.DataFrame]]:
    """The table's rows split into one ranking per ``by`` group, after the judge and design checks.

    ``judge``: the judge whose rows are read (None: the table must hold one judge, or ``by`` must name
    ``judge``). Returns (group keys, rows) pairs in sorted order of the keys.
    """
    by_cols = by_columns(by)
    _check_columns(table, ["item_id", "judge", "status", value, *by_cols],
                   "a judgments table needs item_id, judge, status and the value column; name by= columns it has")
    if judge is not None:
        if "judge" in by_cols:
            raise StatsInputError("judge= and by='judge' both name the judge: pass one of them")
        known = pd.unique(table["judge"].astype(object))
        if judge not in set(known):
            raise StatsInputError(f"judge {judge!r} is not in the table (its judges: {describe_values(known, 8)})")
        table = table[table["judge"].astype(object) == judge]
    elif "judge" not in by_cols:
        judges = pd.unique(table["judge"].astype(object))
        if len(judges) == 1:
            judge = judges[0]  # named in the result, as if judge= had named it
        elif len(judges) > 1:
            raise AmbiguousQuestionError(
                f"this table has {len(judges)} judges ({describe_values(judges)}): pass judge=... for one judge's "
                f"ranking, or by='judge' for one ranking per judge side by side")
    rows = rows_read(table, value)
    if rows.empty:
        raise EmptyInputError(f"no row of the judgments table carries a {value!r} value or is unscored")
    # the battles' two orders are one question (each order is a battle); every other design column: one value
    ignore = ("condition",) if value == "winner" else ()
    groups = rows.groupby(by_cols, sort=True, dropna=False) if by_cols else [((), rows)]
    out = []
    for key, part in groups:
        keys = dict(zip(by_cols, key if isinstance(key, tuple) else (key,), strict=True))
        # checked per ranking (one judge's rows): judges may differ in rubric, not within one ranking
        check_design(part, rater=None, split=by_cols, ignore=("judge", *ignore), by_hint=by_cols or None)
        out.append(({"judge": judge, **keys} if judge is not None else keys, part))
    return out


def _unscored(rows: pd.DataFrame, unscored: UnscoredPolicy | None, allowed: Sequence[str]) -> tuple[pd.Series, str]:
    """The mask of unscored rows, after checking the policy; a refusal when some exist and no policy is named."""
    if unscored is not None and unscored not in allowed:
        raise StatsInputError(f"unscored must be {' or '.join(map(repr, allowed))} (or None to refuse unscored "
                              f"rows), got {unscored!r}")
    mask = ~is_scored(rows)
    if mask.any() and unscored is None:
        counts = rows.loc[mask, "status"].astype(object).fillna("<NA>").value_counts()
        shown = ", ".join(f"{s} {c}" for s, c in counts.items())
        options = " or ".join(f"unscored={p!r}" for p in allowed)
        raise StatsInputError(f"{int(mask.sum())} of {len(rows)} rows are unscored ({shown}): pass {options} to say "
                              f"how to count them (the count is reported), or fill them in first")
    return mask, "" if not mask.any() else (
        f"{int(mask.sum())} unscored rows " + ("counted as ties" if unscored == "tie" else "dropped")
        + f" (unscored={unscored!r})")


def _system_per_item(rows: pd.DataFrame, columns: Sequence[str]) -> None:
    """Refuse an item whose rows name different systems: the system columns describe the item, not the row."""
    for column in columns:
        several = rows.groupby("item_id", sort=False)[column].nunique(dropna=False)
        if (several > 1).any():
            item = several.index[several > 1][0]
            raise StatsInputError(f"item {item!r} names {int(several.max())} different systems in column {column!r} "
                                  f"across its rows; the system columns must describe the item (in the original "
                                  f"order) in every row")


def table_battles(rows: pd.DataFrame, *, system_a: str, system_b: str, unscored: UnscoredPolicy | None,
                  carry: Sequence[str] = ()) -> TableRows:
    """A battles frame (``system_a``, ``system_b``, ``winner``, ``item_id`` and ``carry`` columns): one battle per
    (item, order) verdict of one judge, winners in the original labels as the table stores them."""
    _check_columns(rows, [system_a, system_b, "condition", *carry],
                   "name the columns holding candidate A's and B's systems (original order) with system_a=, "
                   "system_b=")
    if system_a == system_b:
        raise StatsInputError(f"system_a and system_b both name column {system_a!r}: name the column of candidate "
                              f"A's system and the column of candidate B's system")
    other = sorted(set(rows["condition"].astype(object).dropna().astype(str)) - set(ORDERS))
    if other or rows["condition"].isna().any():
        raise AmbiguousQuestionError(
            f"this table has rows in condition(s) {describe_values(other or ['<NA>'])} besides 'original' / 'swapped'"
            f": filter it to the presentation orders (a perturbation's verdicts are not battles of the plain items)")
    keys = rows.groupby(["item_id", "condition"], sort=False).size()
    if (keys > 1).any():
        item, order = keys.index[keys > 1][0]
        raise StatsInputError(f"item {item!r} has {int(keys.max())} rows in condition {order!r} for one judge: one "
                              f"verdict per item and order is one battle (merge repeats first)")
    _system_per_item(rows, [system_a, system_b])
    mask, note = _unscored(rows, unscored, ("tie", "drop"))
    winner = rows["winner"].astype(object)
    if unscored == "tie":
        winner = winner.where(~mask, "TIE")
    frame = pd.DataFrame({system_a: rows[system_a].to_numpy(), system_b: rows[system_b].to_numpy(),
                          "winner": winner.to_numpy(), "item_id": rows["item_id"].astype(str).to_numpy()},
                         index=rows.index)
    for column in carry:
        if column not in frame.columns:
            frame[column] = rows[column].to_numpy()
    if unscored == "drop":
        frame = frame[~mask.to_numpy()]
        if frame.empty:
            raise EmptyInputError(f"all {len(rows)} rows are unscored and unscored='drop' drops them: nothing to rank")
    return TableRows(frame=frame, n_unscored=int(mask.sum()), note=note)


def table_scores(rows: pd.DataFrame, *, system: str, score: str, unscored: Literal["drop"] | None,
                 carry: Sequence[str] = ()) -> TableRows:
    """A frame of (``system``, ``score``, ``item_id`` and ``carry`` columns): one score per item of one judge."""
    _check_columns(rows, [system, score, *carry], "name the column holding each item's system with system= and the "
                   "score column with score=")
    per_item = rows.groupby("item_id", sort=False).size()
    if (per_item > 1).any():
        item = per_item.index[per_item > 1][0]
        raise StatsInputError(f"item {item!r} has {int(per_item.max())} rows for one judge: one score per item "
                              f"(merge repeats or orders first, or split them with by=)")
    if system == score:
        raise StatsInputError(f"system= and score= both name column {system!r}: name the column of the item's system "
                              f"and the column of its score")
    mask, note = _unscored(rows, unscored, ("drop",))
    kept = rows[~mask.to_numpy()]
    # a dict keeps one column per name, whichever argument names it
    frame = pd.DataFrame({c: kept[c].to_numpy() for c in ("item_id", *carry, system, score)}, index=kept.index)
    if frame.empty:
        raise EmptyInputError(f"all {len(rows)} rows are unscored and unscored='drop' drops them: nothing to rank")
    return TableRows(frame=frame, n_unscored=int(mask.sum()), note=note)
