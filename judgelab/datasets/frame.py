"""Any judge data as a judgments table: ``from_frame`` maps the columns of a data frame (or a CSV,
TSV, JSONL, JSON or Parquet file) onto the table every statistic reads.

Everything about the mapping (the two shapes, the conventions, what happens to missing and
unreadable cells) is in :func:`from_frame`'s docstring: ``help(judgelab.from_frame)``.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.judgments import MISSING, OK, PARSE_ERROR, make_table, validate

__all__ = ["DEFAULT_MISSING", "DEFAULT_WINNER_VALUES", "FrameImportError", "Kind", "example_path", "from_frame",
           "read_frame"]

Kind = Literal["score", "label", "pairwise"]
KINDS: tuple[str, ...] = ("score", "label", "pairwise")
_VALUE_COLUMN = {"score": "score", "label": "verdict", "pairwise": "winner"}
DEFAULT_MISSING: tuple[str, ...] = ("", "NA", "N/A", "NaN", "nan", "null", "None")
# source value (compared case-insensitively) -> winner in the table's labels
DEFAULT_WINNER_VALUES: dict[str, str] = {
    "a": "A", "b": "B", "tie": "TIE", "1": "A", "2": "B", "model_a": "A", "model_b": "B",
    "tie (bothbad)": "TIE", "a>b": "A", "b>a": "B", "a=b": "TIE", "a>>b": "A", "b>>a": "B",
}
_FLIP = {"A": "B", "B": "A", "TIE": "TIE"}
_EXAMPLES = "examples"


class FrameImportError(JudgelabError, ValueError):
    """A frame or file that cannot be read as judgments; the message names the column, row and value."""


def example_path(name: str) -> Path:
    """The path of an example file shipped with judgelab (``judgelab/datasets/examples/<name>``)."""
    folder = Path(str(resources.files("judgelab.datasets") / _EXAMPLES))
    path = folder / name
    if not path.is_file():
        names = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
        raise FrameImportError(f"no example file {name!r}; available: {', '.join(names) or 'none'}")
    return path


def read_frame(path: str | os.PathLike[str], *, missing_values: Sequence[str] = DEFAULT_MISSING) -> pd.DataFrame:
    """Read a CSV, TSV, JSONL, JSON (records) or Parquet file as it is, for :func:`from_frame`.

    Text files are read as UTF-8 with an optional byte-order mark; CSV/TSV cells stay text (so
    "007" stays "007") and only the ``missing_values`` strings become missing. A quoted cell may
    hold line breaks. The index is the 1-based data row (the header not counted).
    """
    path = Path(path)
    if not path.is_file():
        raise FrameImportError(f"no file at {path}")
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv", ".tab", ".txt"):
            frame = pd.read_csv(path, sep="\t" if suffix in (".tsv", ".tab") else ",", dtype=str,
                                keep_default_na=False, na_values=list(missing_values), encoding="utf-8-sig")
        elif suffix in (".jsonl", ".ndjson"):
            frame = pd.read_json(path, lines=True, dtype=False, encoding="utf-8-sig")
        elif suffix == ".json":
            frame = pd.DataFrame(json.loads(path.read_text(encoding="utf-8-sig")))
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            raise FrameImportError(f"cannot tell the format of {path.name}; use a .csv, .tsv, .jsonl, .json or "
                                   ".parquet file, or read it yourself and pass the DataFrame")
    except FrameImportError:
        raise
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FrameImportError(f"cannot read {path.name} as {suffix[1:].upper()}: {first} (an unclosed quote "
                               "makes the rest of a CSV one cell; a cell with a line break must be quoted)") from exc
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return frame


def from_frame(
    frame: pd.DataFrame | str | os.PathLike[str],
    *,
    item_id: str,
    judge: str | None = None,
    score: str | None = None,
    label: str | None = None,
    winner: str | None = None,
    judges: Sequence[str] | Mapping[str, str] | None = None,
    kind: Kind | None = None,
    gold: str | None = None,
    criterion: str | None = None,
    condition: str | None = None,
    repeat: str | None = None,
    cluster: str | None = None,
    keep: Sequence[str] = (),
    winner_in: Literal["shown", "original"] = "shown",
    winner_values: Mapping[Any, str] | None = None,
    condition_values: Mapping[Any, str] | None = None,
    labels: Sequence[Any] | None = None,
    scale: tuple[float, float] | None = None,
    on_bad: Literal["raise", "unscored"] = "raise",
    gold_judge: str = "gold",
    missing_values: Sequence[str] = DEFAULT_MISSING,
    run_id: str | None = None,
    rubric: str = "imported",
) -> pd.DataFrame:
    """A validated judgments table from a frame (or a CSV, TSV, JSONL, JSON or Parquet file) of judge verdicts.

    Two shapes are read:

    **Long form** -- one row per verdict: a ``judge=`` column names who judged and ONE value column
    says what they said: ``score=`` (a number), ``label=`` (a category) or ``winner=`` (a pairwise
    choice)::

        from_frame(df, item_id="q", judge="model", score="rating")
        from_frame(df, item_id="pair", judge="judge", winner="winner", condition="order", gold="label")

    **Wide form** -- one row per item, one column per judge (``judges=``), all of one ``kind``
    ("score", "label" or "pairwise")::

        from_frame(df, item_id="q", judges=["GPT-4", "Mistral-7B"], gold="HumanJudgement", kind="label")

    The conventions of the table (``help(judgelab.judgments)`` documents every column):

    - **what a judge said** goes to ``score`` (kind "score", a float), ``verdict`` (kind "label", the
      label as text: 1 and 1.0 both become "1") or ``winner`` (kind "pairwise": "A", "B" or "TIE");
    - **pairwise winners are written in the ORIGINAL order's labels**: "A" is the candidate shown
      first in the original order, whatever order a verdict was given in. Conditions are named
      ``"original"`` and ``"swapped"`` (map your own values with ``condition_values=``, e.g.
      ``{"AB": "original", "BA": "swapped"}`` or ``{False: "original", True: "swapped"}``). With
      ``winner_in="shown"`` (the default) a swapped row's winner is read in the labels as shown and
      flipped (A <-> B; the value as given is kept in ``detail.shown_winner``); with
      ``winner_in="original"`` it is taken as it is. Source values are mapped to A/B/TIE by
      ``winner_values=`` or, by default, by :data:`DEFAULT_WINNER_VALUES` (case-insensitive: A/B/TIE,
      1/2, model_a/model_b/tie, "tie (bothbad)", A>B/B>A/A=B, A>>B/B>>A);
    - **gold labels become rows of judge "gold"** (``gold_judge=`` to name it otherwise, e.g. "human"):
      ``gold=`` names a column holding each item's reference value, in the same kind as the judges'
      values (pairwise gold always in the original labels). It is read once per item and criterion,
      condition "original"; two different gold values for one item are an error;
    - ``criterion=``, ``condition=`` and ``repeat=`` name optional columns that fill those table
      columns (defaults: "overall", "original", NA); ``cluster=`` and ``keep=`` name columns carried
      into the table under their own names (pass ``cluster="<name>"`` to a statistic to resample them);
    - **a missing cell is never dropped**: it becomes an unscored row, status "missing", reason
      "missing in source (...)". Which strings count as missing is ``missing_values=``
      (:data:`DEFAULT_MISSING`; real NaN/None always do);
    - **a value that cannot be mapped** (a label outside ``labels=``, a score outside ``scale=``, a
      winner not in the mapping, a score that is not a number) raises ONE error naming the column, the
      row and the value; with ``on_bad="unscored"`` it becomes a ``parse_error`` row with that reason.

    Every judge row keeps the source cell as text in ``raw_output`` and its provenance (column, row)
    in ``detail``.

    Options: ``labels=`` declares the allowed labels (kind "label") and ``scale=(low, high)`` the
    allowed score range (kind "score"); without them any label / any finite number is accepted.
    ``run_id`` defaults to "from_frame:<file name>" (or "from_frame"), ``rubric`` to "imported".
    Errors (an unknown or empty column, an empty frame, mixed label types, a judge column with no
    value at all, two verdicts for one key, an unreadable file) raise :class:`FrameImportError`
    with one sentence naming the column, row and value.
    """
    source_name = Path(frame).name if isinstance(frame, str | os.PathLike) else None
    if isinstance(frame, str | os.PathLike):
        frame = read_frame(frame, missing_values=missing_values)
    elif not isinstance(frame, pd.DataFrame):
        raise FrameImportError(f"from_frame reads a pandas DataFrame or a file path, not {type(frame).__name__}")
    where = _Where(frame, from_file=source_name is not None)
    value_columns, kind = _shape(frame, judge, score, label, winner, judges, kind)
    if winner_in not in ("shown", "original"):
        raise FrameImportError(f"winner_in must be 'shown' or 'original', not {winner_in!r}")
    if on_bad not in ("raise", "unscored"):
        raise FrameImportError(f"on_bad must be 'raise' or 'unscored', not {on_bad!r}")
    if frame.empty:
        raise FrameImportError("the frame has no rows: nothing to import")
    named = [("item_id", item_id), ("judge", judge), ("score", score), ("label", label), ("winner", winner),
             ("gold", gold), ("criterion", criterion), ("condition", condition), ("repeat", repeat),
             ("cluster", cluster), *(("keep", c) for c in keep), *(("judges", c) for c in (judges or ()))]
    _check_columns(frame, [(role, col) for role, col in named if col is not None])
    reserved = [c for c in (cluster, *keep) if c is not None and c in _TABLE_NAMES]
    if reserved:
        raise FrameImportError(f"columns {reserved} would overwrite judgments-table columns; pass them as "
                               "item_id=/criterion=/condition=/repeat= or rename them first")
    mapper = _ValueMapper(kind, labels=labels, scale=scale, winner_values=winner_values,
                          missing_values=missing_values, on_bad=on_bad, where=where)
    base = _base_columns(frame, item_id, criterion, condition, repeat, condition_values, where)
    run = run_id or (f"from_frame:{source_name}" if source_name else "from_frame")
    carried = [c for c in (cluster, *keep) if c is not None]
    if kind == "label":
        _check_label_types(frame, [*value_columns, *([gold] if gold else [])], missing_values)
    rows: list[dict[str, Any]] = []
    if judge is not None:  # long form
        judge_names = _required_text(frame[judge], judge, "judge", where, missing_values)
        rows += _judge_rows(frame, value_columns[0], judge_names, base, mapper, kind, winner_in, carried)
    else:
        mapping = dict(judges) if isinstance(judges, Mapping) else {c: c for c in value_columns}
        for col in value_columns:
            if frame[col].map(lambda v: _is_missing(v, missing_values)).all():
                raise FrameImportError(f"judge column {col!r} has no value in any of its {len(frame)} rows; "
                                       "drop it from judges= or check the column (and the file's separator)")
            names = pd.Series(mapping[col], index=frame.index)
            rows += _judge_rows(frame, col, names, base, mapper, kind, winner_in, carried)
    if gold is not None:
        rows += _gold_rows(frame, gold, gold_judge, base, mapper, carried, where)
    _check_duplicates(rows, where)
    for row in rows:
        row.update(run_id=run, rubric=rubric)
    table = make_table(rows)
    return validate(table)


# ----------------------------------------------------------------------------------------------- internals

_TABLE_NAMES = frozenset(("run_id", "item_id", "rubric", "rubric_version", "criterion", "side", "judge", "condition",
                          "repeat", "status", "unscored_reason", "score", "winner", "verdict", "detail", "raw_output"))


class _Where:
    """Names a source row in messages: "data row 7" for files (1-based), "row <index label>" for frames."""

    def __init__(self, frame: pd.DataFrame, *, from_file: bool) -> None:
        self.index = list(frame.index)
        self.from_file = from_file

    def __call__(self, pos: int) -> str:
        return f"data row {self.index[pos]}" if self.from_file else f"row {self.index[pos]!r}"

    def label(self, pos: int) -> Any:
        value = self.index[pos]
        return int(value) if isinstance(value, int | np.integer) else str(value)


def _shape(frame: pd.DataFrame, judge: str | None, score: str | None, label: str | None, winner: str | None,
           judges: Sequence[str] | Mapping[str, str] | None, kind: str | None) -> tuple[list[str], str]:
    """The value column(s) and the kind, from the arguments that say which form the frame is in."""
    given = {name: col for name, col in (("score", score), ("label", label), ("winner", winner)) if col is not None}
    if kind is not None and kind not in KINDS:
        raise FrameImportError(f"kind must be one of {KINDS}, not {kind!r}")
    if judge is not None and judges is not None:
        raise FrameImportError("pass judge= (long form: a column naming the judge) or judges= (wide form: one "
                               "column per judge), not both")
    if judge is not None:
        if len(given) != 1:
            raise FrameImportError("long form needs exactly one value column: score=, label= or winner= "
                                   f"(got {', '.join(given) or 'none'})")
        (name, col), = given.items()
        implied = {"score": "score", "label": "label", "winner": "pairwise"}[name]
        if kind is not None and kind != implied:
            raise FrameImportError(f"{name}= implies kind {implied!r}, but kind={kind!r} was given")
        return [col], implied
    if judges is None:
        raise FrameImportError("say which columns hold the verdicts: judge= plus score=/label=/winner= (long form), "
                               "or judges=[...] plus kind= (wide form)")
    if given:
        raise FrameImportError(f"wide form (judges=) takes kind=, not {', '.join(f'{k}=' for k in given)}")
    if kind is None:
        raise FrameImportError("wide form (judges=) needs kind='score', 'label' or 'pairwise'")
    columns = list(judges)
    if not columns:
        raise FrameImportError("judges= is empty; name at least one judge column")
    if isinstance(judges, Mapping):
        names = list(judges.values())
        if len(set(names)) != len(names):
            raise FrameImportError(f"judges= maps two columns to one judge name: {names}")
    return columns, kind


def _check_columns(frame: pd.DataFrame, named: Sequence[tuple[str, str]]) -> None:
    present = [str(c) for c in frame.columns]
    for role, col in named:
        if col in frame.columns:
            continue
        hint = ""
        bom = [c for c in present if c.lstrip("\ufeff") == col]
        if bom:
            hint = (f"; the frame has {bom[0]!r}, which starts with a byte-order mark: pass the file path to "
                    "from_frame, or read it with encoding='utf-8-sig'")
        else:
            close = difflib.get_close_matches(str(col), present, n=3)
            if close:
                hint = f"; did you mean {', '.join(map(repr, close))}?"
        shown = ", ".join(map(repr, present[:20])) + (" ..." if len(present) > 20 else "")
        raise FrameImportError(f"{role}={col!r} is not a column of the frame (columns: {shown}){hint}")


def _is_missing(value: Any, missing_values: Sequence[str]) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float | np.floating) and math.isnan(value):
        return True
    return isinstance(value, str) and value in missing_values


def _shown(value: Any) -> Any:
    """A cell as a plain Python value, for messages (np.float64(1.5) -> 1.5)."""
    return value.item() if isinstance(value, np.generic) else value


def _text(value: Any) -> str:
    """A cell as label text: integral numbers without ".0", everything else as str()."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _required_text(column: pd.Series, name: str, role: str, where: _Where, missing_values: Sequence[str]) -> pd.Series:
    empty = [i for i, v in enumerate(column) if _is_missing(v, missing_values)]
    if empty:
        rows = ", ".join(where(i) for i in empty[:5])
        raise FrameImportError(f"column {name!r} ({role}) is empty in {len(empty)} rows ({rows}); every row needs one")
    return column.map(_text)


def _base_columns(frame: pd.DataFrame, item_id: str, criterion: str | None, condition: str | None,
                  repeat: str | None, condition_values: Mapping[Any, str] | None, where: _Where) -> pd.DataFrame:
    """item_id, criterion, condition and repeat per source row (defaults where no column is named)."""
    base = pd.DataFrame(index=frame.index)
    base["item_id"] = _required_text(frame[item_id], item_id, "item_id", where, ())
    base["criterion"] = _required_text(frame[criterion], criterion, "criterion", where, ()) if criterion else "overall"
    if condition:
        values = _required_text(frame[condition], condition, "condition", where, ())
        if condition_values is not None:
            mapping = {_text(k): str(v) for k, v in condition_values.items()}
            unknown = sorted(set(values) - set(mapping))
            if unknown:
                first = next(i for i, v in enumerate(values) if v in unknown)
                raise FrameImportError(f"column {condition!r} ({where(first)}) has value {unknown[0]!r}, which "
                                       f"condition_values= does not map (it maps {sorted(mapping)})")
            values = values.map(mapping)
        base["condition"] = values
    else:
        base["condition"] = "original"
    if repeat:
        numbers = pd.to_numeric(frame[repeat], errors="coerce")
        bad = [i for i, (v, n) in enumerate(zip(frame[repeat], numbers, strict=True))
               if pd.isna(n) or not float(n).is_integer() or n < 0]
        if bad:
            raise FrameImportError(f"column {repeat!r} (repeat) must hold whole numbers >= 0; {where(bad[0])} has "
                                   f"{_shown(frame[repeat].iloc[bad[0]])!r}")
        base["repeat"] = numbers.astype("Int64")
    else:
        base["repeat"] = pd.NA
    return base


class _ValueMapper:
    """Maps one source cell of a kind to (table column value, None) or (None, reason it cannot be read)."""

    def __init__(self, kind: str, *, labels: Sequence[Any] | None, scale: tuple[float, float] | None,
                 winner_values: Mapping[Any, str] | None, missing_values: Sequence[str], on_bad: str,
                 where: _Where) -> None:
        self.kind, self.missing_values, self.on_bad, self.where = kind, missing_values, on_bad, where
        if labels is not None and kind != "label":
            raise FrameImportError(f"labels= declares the labels of kind 'label'; this import is kind {kind!r}")
        if scale is not None and kind != "score":
            raise FrameImportError(f"scale= declares the range of kind 'score'; this import is kind {kind!r}")
        if winner_values is not None and kind != "pairwise":
            raise FrameImportError(f"winner_values= maps pairwise winners; this import is kind {kind!r}")
        self.labels = None if labels is None else [_text(v) for v in labels]
        if scale is not None:
            low, high = (float(x) for x in scale)
            if not low < high:
                raise FrameImportError(f"scale must be (low, high) with low < high, not {scale!r}")
            self.scale: tuple[float, float] | None = (low, high)
        else:
            self.scale = None
        if winner_values is not None:
            self.winners = {_text(k): str(v) for k, v in winner_values.items()}
            bad = sorted({v for v in self.winners.values() if v not in _FLIP})
            if bad:
                raise FrameImportError(f"winner_values= must map to 'A', 'B' or 'TIE', not {bad}")
            self.case_blind = False
        else:
            self.winners, self.case_blind = DEFAULT_WINNER_VALUES, True

    def __call__(self, value: Any, column: str, pos: int) -> tuple[Any, str | None]:
        if self.kind == "score":
            return self._score(value, column, pos)
        text = _text(value)
        if self.kind == "label":
            if self.labels is not None and text not in self.labels:
                return self._bad(f"value {text!r} in column {column!r} ({self.where(pos)}) is not one of the "
                                 f"declared labels {self.labels}")
            return text, None
        key = text.strip().lower() if self.case_blind else text
        if key not in self.winners:
            known = sorted(self.winners)
            return self._bad(f"value {text!r} in column {column!r} ({self.where(pos)}) is not a known winner "
                             f"(known: {known}); map it with winner_values=")
        return self.winners[key], None

    def _score(self, value: Any, column: str, pos: int) -> tuple[Any, str | None]:
        if isinstance(value, bool | np.bool_):
            number = math.nan
        else:
            try:
                number = float(value.strip()) if isinstance(value, str) else float(value)
            except (TypeError, ValueError):
                number = math.nan
        if not math.isfinite(number):
            return self._bad(f"value {_shown(value)!r} in column {column!r} ({self.where(pos)}) is not a number")
        if self.scale is not None and not self.scale[0] <= number <= self.scale[1]:
            return self._bad(f"value {_shown(value)!r} in column {column!r} ({self.where(pos)}) is outside the scale "
                             f"{self.scale[0]:g}-{self.scale[1]:g}")
        return number, None

    def _bad(self, reason: str) -> tuple[Any, str | None]:
        if self.on_bad == "raise":
            raise FrameImportError(f"{reason}; fix it, or pass on_bad='unscored' to keep it as an unscored row")
        return None, reason


def _carried_records(frame: pd.DataFrame, carried: Sequence[str]) -> list[dict[str, Any]]:
    """One dict of the carried columns per row; with none carried, one empty dict per row (pandas 2.2's
    to_dict("records") of a frame with no columns is [], pandas 3's is one {} per row)."""
    return frame[list(carried)].to_dict("records") if carried else [{} for _ in range(len(frame))]


def _judge_rows(frame: pd.DataFrame, column: str, judge_names: pd.Series, base: pd.DataFrame, mapper: _ValueMapper,
                kind: str, winner_in: str, carried: Sequence[str]) -> list[dict[str, Any]]:
    target = _VALUE_COLUMN[kind]
    rows = []
    records, extra, names = base.to_dict("records"), _carried_records(frame, carried), list(judge_names)
    readable: dict[tuple[type, str], Any] = {}
    for pos, value in enumerate(frame[column]):
        row: dict[str, Any] = {**records[pos], "judge": names[pos], **extra[pos]}
        detail: dict[str, Any] = {"source": "from_frame", "column": str(column), "row": mapper.where.label(pos)}
        if _is_missing(value, mapper.missing_values):
            row.update(status=MISSING, unscored_reason=f"missing in source (column {column!r}, {mapper.where(pos)})")
        else:
            row["raw_output"] = text = _text(value)
            if (type(value), text) in readable:  # most cells repeat a few values: map each once
                mapped, reason = readable[type(value), text], None
            else:
                mapped, reason = mapper(value, str(column), pos)
                if reason is None:
                    readable[type(value), text] = mapped
            if reason is not None:
                row.update(status=PARSE_ERROR, unscored_reason=reason)
            else:
                if kind == "pairwise" and winner_in == "shown" and row["condition"] == "swapped":
                    detail["shown_winner"] = mapped
                    mapped = _FLIP[mapped]
                row.update({"status": OK, target: mapped})
        row["detail"] = detail
        rows.append(row)
    return rows


def _gold_rows(frame: pd.DataFrame, gold: str, gold_judge: str, base: pd.DataFrame, mapper: _ValueMapper,
               carried: Sequence[str], where: _Where) -> list[dict[str, Any]]:
    """One gold row per item and criterion (the first readable value); two different values are an error."""
    target = _VALUE_COLUMN[mapper.kind]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    readable: dict[tuple[str, str], tuple[int, Any]] = {}  # key -> (position, value) of the gold value kept
    records = base.to_dict("records")
    extra = _carried_records(frame, carried)
    for pos, value in enumerate(frame[gold]):
        key = (records[pos]["item_id"], records[pos]["criterion"])
        missing = _is_missing(value, mapper.missing_values)
        mapped, reason = (None, None) if missing else mapper(value, str(gold), pos)
        ok = not missing and reason is None
        if key in readable:
            seen_pos, seen = readable[key]
            if ok and mapped != seen:
                raise FrameImportError(
                    f"gold column {gold!r} gives item {key[0]!r} two values: {seen!r} ({where(seen_pos)}) and "
                    f"{mapped!r} ({where(pos)}); gold is one value per item (pairwise gold in the ORIGINAL order's "
                    "labels)")
            continue
        if key in rows and not ok:
            continue  # keep the first unreadable/missing gold row unless a readable one follows
        row: dict[str, Any] = {"item_id": key[0], "criterion": key[1], "condition": "original", "repeat": pd.NA,
                               "judge": gold_judge, **extra[pos],
                               "detail": {"source": "from_frame", "column": str(gold), "row": where.label(pos)}}
        if missing:
            row.update(status=MISSING, unscored_reason=f"missing in source (column {gold!r}, {where(pos)})")
        elif reason is not None:
            row.update(status=PARSE_ERROR, unscored_reason=reason, raw_output=_text(value))
        else:
            row.update({"status": OK, target: mapped, "raw_output": _text(value)})
            readable[key] = (pos, mapped)
        rows[key] = row
    return list(rows.values())


def _check_label_types(frame: pd.DataFrame, columns: Sequence[str], missing_values: Sequence[str]) -> None:
    """Label columns of one import hold values of one type (numbers vs text would never match)."""
    types: dict[str, set[str]] = {}
    for col in columns:
        kinds = {"number" if isinstance(v, int | float | np.number) and not isinstance(v, bool | np.bool_) else
                 type(v).__name__ for v in frame[col] if not _is_missing(v, missing_values)}
        if len(kinds) > 1:
            raise FrameImportError(f"column {col!r} mixes value types ({', '.join(sorted(kinds))}); labels of one "
                                   "column must be all text or all numbers: convert the column first")
        types[col] = kinds
    distinct = {next(iter(k)) for k in types.values() if k}
    if len(distinct) > 1:
        listing = ", ".join(f"{c!r}: {next(iter(k))}" for c, k in types.items() if k)
        raise FrameImportError(f"judge columns hold labels of different types ({listing}); "
                               "text and numbers never match: convert them to one type first")


def _check_duplicates(rows: Sequence[Mapping[str, Any]], where: _Where) -> None:
    seen: dict[tuple[Any, ...], Any] = {}
    for row in rows:
        key = (row["item_id"], row["judge"], row["criterion"], row["condition"],
               None if pd.isna(row["repeat"]) else int(row["repeat"]))
        origin = row["detail"]["row"]
        if key in seen:
            raise FrameImportError(
                f"judge {key[1]!r} has two verdicts for item {key[0]!r} (criterion {key[2]!r}, condition {key[3]!r}) "
                f"in rows {seen[key]!r} and {origin!r}; name the column that tells them apart "
                "(condition=, criterion= or repeat=)")
        seen[key] = origin
