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

__all__ = ["KEY", "NO_CONFIDENCE", "REVIEW_COLUMNS", "WINNER_LABELS", "LabelKind", "LabelSelection", "ReviewFileError",
           "ReviewLabels", "SelectionStrategy", "export_review", "import_review", "review_queue", "select_for_labelling"]

LabelKind = Literal["winner", "score", "label"]
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
    return _queue(rows, keys, items)


def _queue(rows: pd.DataFrame, keys: pd.DataFrame, items: pd.DataFrame | None,
           extra: pd.DataFrame | None = None) -> pd.DataFrame:
    """One review row per key: every listed judge's rows for it, the item's fields, empty label columns.

    ``extra``: more columns per key (merged on the key) placed after the key columns.
    """
    flagged = rows.merge(keys, on=list(KEY), how="inner")
    wide = []
    for key, group in flagged.groupby(list(KEY), sort=True, dropna=False):
        record: dict[str, Any] = dict(zip(KEY, key, strict=True))
        for _, r in group.iterrows():
            tag = f"{r['judge']}|{r['condition']}" + (f"|r{r['repeat']}" if pd.notna(r["repeat"]) and r["repeat"] else "")
            verdict = r["winner"] if isinstance(r["winner"], str) else r["verdict"] if isinstance(
                r["verdict"], str) else r["score"]
            ok = r["status"] == judgments.OK
            record[f"{tag}|verdict"] = verdict if ok else None
            record[f"{tag}|confidence"] = r["confidence"]
            record[f"{tag}|status"] = r["status"] if ok else f"{r['status']}: {r['unscored_reason']}"
            record[f"{tag}|raw_output"] = r["raw_output"]
        wide.append(record)
    queue = pd.DataFrame(wide, columns=list(KEY) if not wide else None)
    lead = list(KEY)
    if extra is not None:
        queue = queue.merge(extra, on=list(KEY), how="left")
        lead += [c for c in extra.columns if c not in KEY]
    if items is not None:
        fields = items.drop_duplicates("item_id").set_index("item_id")
        queue = queue.merge(fields, left_on="item_id", right_index=True, how="left")
        lead += [c for c in items.columns if c != "item_id"]
    for col in REVIEW_COLUMNS:
        queue[col] = pd.Series([None] * len(queue), dtype=object)
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
                  scale: tuple[float, float] | None = None, labels: Sequence[str] | None = None,
                  rubric: str = "human_review", run_id: str | None = None) -> ReviewLabels:
    """The labelled rows of a review file as judgments-table rows of judge ``judge`` (condition "original"),
    and the keys left unlabelled.

    ``kind="winner"``: labels must be A, B or TIE (case-insensitive); ``"score"``: numbers, within
    ``scale`` when given; ``"label"``: any text verdict (e.g. "yes"/"no"), one of ``labels`` when given
    (case-insensitive, stored as written in ``labels``), kept in ``verdict``. ``known_items``: the valid item ids (a list, or a judgments table / items
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
        elif kind == "label":
            text = str(value).strip()
            if labels is not None:
                canonical = {str(v).lower(): str(v) for v in labels}
                if text.lower() not in canonical:
                    bad.append(f"row {line + 2}: {value!r}")
                text = canonical.get(text.lower(), text)
            values.append(text)
        else:
            raise ValueError(f"kind must be 'winner', 'score' or 'label', not {kind!r}")
    if bad:
        allowed = ("A, B or TIE" if kind == "winner" else f"one of {list(labels or [])}" if kind == "label"
                   else "numbers" + (f" in {scale}" if scale else ""))
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
                     "verdict": value if kind in ("winner", "label") else None,
                     "score": value if kind == "score" else None,
                     "detail": {"notes": r.get("notes")} if isinstance(r.get("notes"), str) else None,
                     "created_at": pd.Timestamp.now(tz="UTC")})
    table = judgments.validate(judgments.make_table(rows)) if rows else judgments.empty_table()
    dup = table.duplicated(["item_id", "criterion", "side", "judge"])
    if dup.any():
        raise ReviewFileError(f"{path.name}: item {table.loc[dup, 'item_id'].iloc[0]!r} is labelled twice by "
                              "the same annotator")
    return ReviewLabels(table=table, unlabelled=df.loc[~labelled, list(KEY)].reset_index(drop=True))


SelectionStrategy = Literal["random", "stratified", "active"]
NO_CONFIDENCE = "no confidence"  # the active-selection stratum of items whose judge row has no confidence


@dataclass(frozen=True)
class LabelSelection:
    """Items chosen for gold labelling, and the strata an estimate from them must use.

    ``queue``: one review row per chosen key (the judge's verdicts for context, ``stratum``, empty
    ``label``/``annotator``/``notes``), ready for :meth:`export` and :func:`import_review`. ``strata``:
    item_id -> stratum for EVERY judged item (None for random selection); pass it as
    ``corrected_mean(..., strata=selection.strata)``: strata sampled at different rates are then weighted
    by their share of all items, which keeps the estimate unbiased. ``allocation``: items, candidates,
    chosen and mean judge confidence per stratum.
    """

    queue: pd.DataFrame
    strata: dict[str, str] | None
    allocation: pd.DataFrame
    method: str

    def export(self, path: str | os.PathLike[str]) -> Path:
        """Write the queue to ``path`` (.csv or .parquet) for labelling; read it back with :func:`import_review`."""
        _write(self.queue, Path(path))
        return Path(path)


def _allocate(candidates: pd.Series, weights: pd.Series, n: int, minimum: int = 2) -> pd.Series:
    """Labels per stratum: ``minimum`` each (capped by its candidates), the rest in proportion to weights."""
    take = np.minimum(candidates, minimum).astype(int)
    if take.sum() > n:
        raise ValueError(f"n={n} cannot give each of the {len(candidates)} strata {minimum} labels; choose a "
                         f"larger n or fewer strata")
    room = (candidates - take).astype(float)
    left = n - int(take.sum())
    while left > 0 and room.sum() > 0:
        share = weights.where(room > 0, 0.0)
        share = share / share.sum() if share.sum() > 0 else room / room.sum()
        extra = np.minimum(np.floor(share * left), room).astype(int)
        if extra.sum() == 0:  # largest remainder: one more to the stratum with the largest share left
            extra[(share * left - extra).where(room > 0, -1).idxmax()] = 1
        take += extra
        room -= extra
        left = n - int(take.sum())
    return take


def select_for_labelling(table: pd.DataFrame, *, judge: str, n: int, strategy: SelectionStrategy = "random",
                         strata: str | dict[str, Any] | None = None, gold: str | None = None, n_bins: int = 4,
                         items: pd.DataFrame | None = None, seed: int = 0) -> LabelSelection:
    """Choose ``n`` judged items for humans to label, to estimate a corrected mean (judgelab.stats.corrected_mean).

    ``strategy``: ``"random"`` (a simple random sample), ``"stratified"`` (proportional to each
    stratum's size, at least 2 per stratum; ``strata``: a column of the judge rows or item_id -> stratum),
    or ``"active"`` (more labels where the judge is unsure: the judge's mean ``confidence`` per item cut
    into ``n_bins`` quantile bins, labels allotted in proportion to bin size x sqrt(c(1 − c)) at the bin's
    mean confidence c, at least 2 per bin; items without a confidence form their own bin). Items that
    ``gold`` already labelled are not chosen again. Seeded by ``seed``.
    """
    if strategy not in ("random", "stratified", "active"):
        raise ValueError(f"strategy must be 'random', 'stratified' or 'active', not {strategy!r}")
    rows = table[table["judge"] == judge]
    if rows.empty:
        raise ValueError(f"judge {judge!r} has no rows in the table")
    per_item = rows.groupby("item_id", sort=True)
    item_ids = pd.Index(per_item.size().index.astype(str))
    done: set[str] = set()
    if gold is not None:
        gold_rows = table[(table["judge"] == gold) & judgments.is_scored(table)]
        done = set(gold_rows["item_id"].astype(str))
    candidates = item_ids[~item_ids.isin(list(done))]
    if n > len(candidates) or n < 1:
        raise ValueError(f"n={n}, but {len(candidates)} judged items are not labelled yet")
    rng = np.random.default_rng(seed)
    if strategy == "random":
        chosen = rng.choice(candidates.to_numpy(), size=n, replace=False)
        stratum_of = pd.Series("all", index=item_ids)
        allocation = pd.DataFrame({"stratum": ["all"], "n_items": [len(item_ids)],
                                   "n_candidates": [len(candidates)], "n_chosen": [n]})
        method = f"simple random sample of {n} of {len(candidates)} unlabelled judged items (seed {seed})"
    else:
        if strategy == "stratified":
            if strata is None:
                raise ValueError("strategy='stratified' needs strata= (a column of the judge rows or a mapping)")
            if isinstance(strata, str):
                if strata not in rows.columns:
                    raise ValueError(f"strata={strata!r} is not a column of the table")
                stratum_of = per_item[strata].first().astype(str)
            else:
                stratum_of = pd.Series({i: strata.get(i) for i in item_ids}, dtype=object)
                if stratum_of.isna().any():
                    raise ValueError(f"{int(stratum_of.isna().sum())} judged item(s) have no stratum in the mapping")
                stratum_of = stratum_of.astype(str)
            weight_of = None
        else:
            conf = per_item["confidence"].apply(lambda c: c.astype(float).mean())
            conf.index = conf.index.astype(str)
            if conf.notna().sum() == 0:
                raise ValueError(f"strategy='active' needs a confidence on the judge's rows; judge {judge!r} has "
                                 "none (add one with judgelab.ensembles.confidence: position consistency, repeats, "
                                 "votes or logprobs)")
            bins = pd.qcut(conf, q=n_bins, duplicates="drop")
            stratum_of = bins.astype(str).where(conf.notna(), NO_CONFIDENCE)
            mean_conf = conf.groupby(stratum_of).mean().clip(0, 1).fillna(0.5)
            weight_of = np.sqrt(mean_conf * (1 - mean_conf)).clip(lower=0.05)
        stratum_of.index = stratum_of.index.astype(str)
        stratum_of = stratum_of.reindex(item_ids)
        cand_strata = stratum_of.reindex(candidates)
        sizes = stratum_of.value_counts().sort_index()
        cand = cand_strata.value_counts().reindex(sizes.index, fill_value=0)
        weights = sizes.astype(float) * (1.0 if weight_of is None else weight_of.reindex(sizes.index).fillna(0.5))
        take = _allocate(cand, weights, n)
        chosen_parts = []
        for h, k in take.items():
            pool = cand_strata.index[cand_strata == h].to_numpy()
            chosen_parts.append(rng.choice(pool, size=int(k), replace=False))
        chosen = np.concatenate(chosen_parts)
        allocation = pd.DataFrame({"stratum": sizes.index, "n_items": sizes.to_numpy(), "n_candidates": cand.to_numpy(),
                                   "n_chosen": take.to_numpy()})
        if strategy == "active":
            allocation["mean_confidence"] = conf.groupby(stratum_of.reindex(conf.index)).mean().reindex(
                sizes.index).to_numpy()
            method = (f"active: {n} labels over {len(sizes)} bins of the judge's confidence, in proportion to "
                      f"bin size x sqrt(c(1 − c)), at least 2 per bin (seed {seed})")
        else:
            method = f"stratified by {strata if isinstance(strata, str) else 'mapping'}: {n} labels in proportion " \
                     f"to stratum size, at least 2 per stratum (seed {seed})"
    keys = rows[rows["item_id"].astype(str).isin(set(map(str, chosen)))][list(KEY)].drop_duplicates()
    extra = keys.assign(stratum=keys["item_id"].astype(str).map(stratum_of), selection=strategy)
    queue = _queue(rows, keys, items, extra=extra)
    strata_map = None if strategy == "random" else {str(k): str(v) for k, v in stratum_of.items()}
    return LabelSelection(queue=queue, strata=strata_map, allocation=allocation, method=method)
