"""Human review of low-confidence verdicts (the human-in-the-loop stage of a judging pipeline).

:func:`export_review` writes the verdicts below a confidence threshold (and every unscored one)
to a CSV or Parquet file a person can label: one row per item x criterion x side, with the item's
fields (the candidates), each judge's verdict, confidence and raw output, and empty ``label``,
``annotator`` and ``notes`` columns. :func:`import_review` reads the labelled file back as judge
``"human"`` rows (``"human:<annotator>"`` when an annotator is given per row), validated: unknown
item ids, labels outside the allowed set, or an edited key column are errors naming the rows; a row
left unlabelled is not a judgment: it is returned separately (:class:`ReviewLabels`), not invented.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.errors import JudgelabError

__all__ = ["KEY", "REVIEW_COLUMNS", "WINNER_LABELS", "LabelKind", "ReviewFileError", "ReviewLabels", "export_review",
           "import_review", "review_queue"]

LabelKind = Literal["winner", "score"]
WINNER_LABELS: tuple[str, ...] = ("A", "B", "TIE")
KEY = ("item_id", "criterion", "side")
REVIEW_COLUMNS = ("label", "annotator", "notes")


class ReviewFileError(JudgelabError, ValueError):
    """A labelled review file that cannot be imported; the message names the rows and values."""


@dataclass(frozen=True)
class ReviewLabels:
    """What a labelled review file holds: the labels as judgments-table rows, and the keys left unlabelled."""

    table: pd.DataFrame  # judge "human" (or "human:<annotator>") rows, validated
    unlabelled: pd.DataFrame  # item_id, criterion, side of the rows nobody labelled (yet)

    @property
    def n_unlabelled(self) -> int:
        return len(self.unlabelled)


def _write(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        raise ValueError(f"review file must end in .csv or .parquet, not {path.name!r}")


def _read(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise FileNotFoundError(f"review file not found: {path}")
    if path.suffix == ".csv":
        return pd.read_csv(path, dtype={"item_id": str, "criterion": str, "side": str, "label": str,
                                        "annotator": str}, keep_default_na=False, na_values=[""])
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    raise ValueError(f"review file must end in .csv or .parquet, not {path.name!r}")


def review_queue(table: pd.DataFrame, *, threshold: float, judges: Sequence[str] | None = None,
                 condition: str | None = None, items: pd.DataFrame | None = None,
                 include_unscored: bool = True) -> pd.DataFrame:
    """The keys a person should review: a screened verdict below ``threshold`` confidence (or unscored).

    Screened verdicts are the rows of ``judges`` (default: all but human ones) in ``condition``
    (default: all; e.g. "position_consolidated" to screen on swap-consolidated verdicts). A screened
    verdict without a confidence is queued too: nothing says it can be trusted. The exported row
    shows every listed judge's rows for the key, in every condition, for context.
    """
    rows = table if judges is None else table[table["judge"].isin(list(judges))]
    rows = rows[~rows["judge"].astype(str).str.startswith("human")]
    screened = rows if condition is None else rows[rows["condition"] == condition]
    if screened.empty:
        raise ValueError("no judge rows to review (after the judges and condition filters)")
    conf = screened["confidence"].astype(float)
    scored = judgments.is_scored(screened)
    low = scored & ~(conf >= threshold)
    if include_unscored:
        low |= ~scored
    keys = screened.loc[low, list(KEY)].drop_duplicates()
    flagged = rows.merge(keys, on=list(KEY), how="inner")
    wide = []
    for key, group in flagged.groupby(list(KEY), sort=True, dropna=False):
        record: dict[str, Any] = dict(zip(KEY, key, strict=True))
        for _, r in group.iterrows():
            tag = f"{r['judge']}|{r['condition']}" + (f"|r{r['repeat']}" if pd.notna(r["repeat"]) and r["repeat"] else "")
            verdict = r["winner"] if isinstance(r["winner"], str) else r["score"]
            ok = r["status"] == judgments.OK
            record[f"{tag}|verdict"] = verdict if ok else None
            record[f"{tag}|confidence"] = r["confidence"]
            record[f"{tag}|status"] = r["status"] if ok else f"{r['status']}: {r['unscored_reason']}"
            record[f"{tag}|raw_output"] = r["raw_output"]
        wide.append(record)
    queue = pd.DataFrame(wide)
    if items is not None:
        fields = items.drop_duplicates("item_id").set_index("item_id")
        queue = queue.merge(fields, left_on="item_id", right_index=True, how="left")
    for col in REVIEW_COLUMNS:
        queue[col] = pd.Series([None] * len(queue), dtype=object)
    lead = [*KEY, *([c for c in items.columns if c != "item_id"] if items is not None else [])]
    rest = [c for c in queue.columns if c not in lead and c not in REVIEW_COLUMNS]
    return queue[lead + rest + list(REVIEW_COLUMNS)]


def export_review(table: pd.DataFrame, path: str | os.PathLike[str], *, threshold: float,
                  judges: Sequence[str] | None = None, condition: str | None = None,
                  items: pd.DataFrame | None = None, include_unscored: bool = True) -> pd.DataFrame:
    """Write :func:`review_queue` to ``path`` (.csv or .parquet); return the queue."""
    queue = review_queue(table, threshold=threshold, judges=judges, condition=condition, items=items,
                         include_unscored=include_unscored)
    _write(queue, Path(path))
    return queue


def import_review(path: str | os.PathLike[str], *, kind: LabelKind = "winner", judge: str = "human",
                  known_items: Sequence[str] | pd.DataFrame | None = None,
                  scale: tuple[float, float] | None = None, rubric: str = "human_review",
                  run_id: str | None = None) -> ReviewLabels:
    """The labelled rows of a review file as judgments-table rows of judge ``judge`` (condition "original"),
    and the keys left unlabelled.

    ``kind="winner"``: labels must be A, B or TIE (case-insensitive); ``"score"``: numbers, within
    ``scale`` when given. ``known_items``: the valid item ids (a list, or a judgments table / items
    frame with ``item_id``); an unknown id is an error.
    """
    path = Path(path)
    df = _read(path)
    missing = [c for c in (*KEY, "label") if c not in df.columns]
    if missing:
        raise ReviewFileError(f"{path.name}: missing column(s) {missing}; export the queue with export_review")
    if known_items is not None:
        known = set(known_items["item_id"].astype(str)) if isinstance(known_items, pd.DataFrame) else set(
            map(str, known_items))
        unknown = sorted(set(df["item_id"].astype(str)) - known)
        if unknown:
            raise ReviewFileError(f"{path.name}: unknown item id(s) {unknown[:5]} (not in the judged items)")
    raw = df["label"].astype(object).where(df["label"].notna(), None)
    raw = raw.map(lambda v: None if v is None or (isinstance(v, str) and not v.strip()) else v)
    labelled = raw.notna()
    bad: list[str] = []
    values: list[Any] = []
    for line, value in zip(df.index[labelled], raw[labelled], strict=True):
        if kind == "winner":
            text = str(value).strip().upper()
            if text not in WINNER_LABELS:
                bad.append(f"row {line + 2}: {value!r}")
            values.append(text)
        elif kind == "score":
            try:
                number = float(value)
            except (TypeError, ValueError):
                bad.append(f"row {line + 2}: {value!r}")
                number = np.nan
            if scale is not None and np.isfinite(number) and not scale[0] <= number <= scale[1]:
                bad.append(f"row {line + 2}: {value!r} outside {scale}")
            values.append(number)
        else:
            raise ValueError(f"kind must be 'winner' or 'score', not {kind!r}")
    if bad:
        allowed = "A, B or TIE" if kind == "winner" else "numbers" + (f" in {scale}" if scale else "")
        raise ReviewFileError(f"{path.name}: {len(bad)} label(s) are not {allowed} ({'; '.join(bad[:5])})")
    part = df[labelled]
    annot = part["annotator"] if "annotator" in part.columns else pd.Series([None] * len(part), index=part.index)
    run = run_id or f"review:{path.name}"
    rows = []
    for (_, r), value, who in zip(part.iterrows(), values, annot, strict=True):
        name = f"{judge}:{who}" if isinstance(who, str) and who.strip() else judge
        rows.append({"run_id": run, "item_id": str(r["item_id"]), "rubric": rubric, "criterion": r["criterion"],
                     "side": None if pd.isna(r["side"]) else r["side"], "judge": name, "condition": "original",
                     "repeat": 0, "status": judgments.OK, "winner": value if kind == "winner" else None,
                     "verdict": value if kind == "winner" else None, "score": value if kind == "score" else None,
                     "detail": {"notes": r.get("notes")} if isinstance(r.get("notes"), str) else None,
                     "created_at": pd.Timestamp.now(tz="UTC")})
    table = judgments.validate(judgments.make_table(rows)) if rows else judgments.empty_table()
    dup = table.duplicated(["item_id", "criterion", "side", "judge"])
    if dup.any():
        raise ReviewFileError(f"{path.name}: item {table.loc[dup, 'item_id'].iloc[0]!r} is labelled twice by "
                              "the same annotator")
    return ReviewLabels(table=table, unlabelled=df.loc[~labelled, list(KEY)].reset_index(drop=True))
