"""Any judge data as a judgments table: ``from_frame`` maps the columns of a data frame (or a CSV,
TSV, JSONL, JSON or Parquet file) onto the table every statistic reads.

Everything about the mapping (the two shapes, the conventions, what happens to missing and
unreadable cells) is in :func:`from_frame`'s docstring: ``help(judgelab.from_frame)``.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.datasets.frame_checks import (
    Where,
    cell_text,
    check_columns,
    check_duplicates,
    check_label_types,
    check_orders_named,
    is_missing,
    shown_value,
)
from judgelab.datasets.frame_columns import GoldColumns, JudgeColumns, assemble, distinct_cells, row_labels
from judgelab.datasets.frame_files import is_pattern, read_pattern
from judgelab.datasets.frame_shapes import CANDIDATE_COLUMNS, Candidates, Scales, is_list_cell, item_ids
from judgelab.datasets.frame_text import (
    FrameImportError,
    ParseRule,
    TextReader,
    count_unscored_as,
    text_reader,
)
from judgelab.datasets.text_tables import arrow_text, read_delimited, read_json_records
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


def example_path(name: str) -> Path:
    """The path of an example file shipped with judgelab (``judgelab/datasets/examples/<name>``)."""
    folder = Path(str(resources.files("judgelab.datasets") / _EXAMPLES))
    path = folder / name
    if not path.is_file():
        names = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
        raise FrameImportError(f"no example file {name!r}; available: {', '.join(names) or 'none'}")
    return path


def read_frame(path: str | os.PathLike[str], *, missing_values: Sequence[str] = DEFAULT_MISSING,
               text_columns: Sequence[str] = ()) -> pd.DataFrame:
    """Read a CSV, TSV, JSONL, JSON (records) or Parquet file as it is, for :func:`from_frame`.

    Text files are read as UTF-8 with an optional byte-order mark. CSV/TSV cells stay the text in the
    file (so "007" stays "007" and "1.0" stays "1.0") and only the ``missing_values`` strings become
    missing; a quoted cell may hold delimiters and line breaks. A record with more or fewer fields than
    the header (or every record one field more: a nameless first column pandas would make the index),
    a malformed quote or a repeated header name is one :class:`FrameImportError` naming the line: no
    column is ever taken as an index or shifted. In JSON files, the numbers of ``text_columns`` keep the
    text they were written with (``2.5`` -> "2.5", large integers exact; :mod:`judgelab.datasets.text_tables`).
    A ``.txt`` file whose first line opens a JSON object is read as JSON lines (LLM_summeval's judge outputs),
    any other ``.txt`` as CSV. The index is the 1-based data row (the header not counted).

    A release split over files is one pattern: ``{field}`` placeholders (and ``*`` / ``?``) in the path match
    every file, read one after another in sorted order, and each field becomes a text column holding what it
    matched (:mod:`judgelab.datasets.frame_files`)::

        read_frame("LLM_summeval/eval_model_generations/{judge}/eval_{system}_generations/{criterion}_rts.txt")
    """
    return _read_source(path, missing_values, text_columns)[0]


def _read_source(path: str | os.PathLike[str], missing_values: Sequence[str], text_columns: Sequence[str], *,
                 arrow: bool = False) -> tuple[pd.DataFrame, list[str] | None]:
    """The frame of a file (or of every file a ``{field}`` pattern matches) and, per row, where it is
    ("line 7"; None for Parquet). ``arrow=True``: a CSV/TSV's text cells in Arrow (text_tables.arrow_text)."""
    if not Path(path).is_file() and is_pattern(str(path)):
        frame, places = read_pattern(str(path), lambda one: _read_file(one, missing_values, text_columns, arrow))
        frame.index = pd.RangeIndex(1, len(frame) + 1)
        return frame, places
    return _read_file(Path(path), missing_values, text_columns, arrow)


def _json_lines(path: Path) -> bool:
    """A .txt file whose first non-blank character opens a JSON object holds JSON lines (LLM_summeval's
    judge outputs); any other .txt is read as CSV."""
    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return line.lstrip().startswith("{")
    return False


def _read_file(path: Path, missing_values: Sequence[str], text_columns: Sequence[str],
               arrow: bool = False) -> tuple[pd.DataFrame, list[str] | None]:
    if not path.is_file():
        raise FrameImportError(f"no file at {path}")
    suffix = path.suffix.lower()
    if suffix == ".txt" and _json_lines(path):
        suffix = ".jsonl"
    where: list[str] | None = None
    try:
        if suffix in (".csv", ".tsv", ".tab", ".txt"):
            frame, lines = read_delimited(path, sep="\t" if suffix in (".tsv", ".tab") else ",",
                                          missing_values=missing_values, error=FrameImportError)
            where = [f"line {n}" for n in lines]
            if arrow:
                frame = arrow_text(frame)
        elif suffix in (".jsonl", ".ndjson", ".json"):
            frame, numbers = read_json_records(path, text_columns=text_columns, error=FrameImportError,
                                               lines=suffix != ".json")
            where = [f"line {n}" if suffix != ".json" else f"object {n}" for n in numbers]
        elif suffix in (".parquet", ".pq"):
            frame = pd.read_parquet(path)
        else:
            raise FrameImportError(f"cannot tell the format of {path.name}; use a .csv, .tsv, .jsonl, .json or "
                                   ".parquet file, or read it yourself and pass the DataFrame")
    except FrameImportError:
        raise
    except UnicodeDecodeError as exc:
        raise FrameImportError(f"cannot read {path.name}: it is not UTF-8 text (byte {exc.start}); re-encode it as "
                               "UTF-8") from exc
    except (ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FrameImportError(f"cannot read {path.name} as {suffix[1:].upper()}: {first}") from exc
    frame.index = pd.RangeIndex(1, len(frame) + 1)
    return frame, where


def from_frame(
    frame: pd.DataFrame | str | os.PathLike[str],
    *,
    item_id: str | Sequence[str],
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
    candidates: tuple[str, str] | None = None,
    winner_in: Literal["shown", "original"] = "shown",
    winner_values: Mapping[Any, str] | None = None,
    condition_values: Mapping[Any, str] | None = None,
    labels: Sequence[Any] | None = None,
    scale: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
    parse: ParseRule | None = None,
    unscored_as: Any = None,
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

    **A release split over files** -- a path with ``{field}`` placeholders (and ``*``) reads every file it
    matches, each field a text column (:mod:`judgelab.datasets.frame_files`)::

        from_frame("evaluators/{judge}/{strategy}/votes.jsonl", item_id="id", judge="judge", winner="winner",
                   keep=["strategy"])

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
    - **votes that name their two candidates** (MT-Bench, Chatbot Arena: ``model_a``, ``model_b`` in the
      order shown, the same pair in either order across votes): ``candidates=("model_a", "model_b")``
      makes the item the id plus the pair in sorted order, "A" the alphabetically first candidate, and
      flips the winner of a vote that lists the pair the other way round; a winner may also be written as
      a candidate's name. The sorted names go to the columns ``candidate_a`` / ``candidate_b``, the row's
      order to ``detail.shown`` (it orients votes by name, so it takes no ``condition=``);
    - **an item named by several columns**: ``item_id=["doc_id", "system"]`` joins their text with ":"
      ("dm-test-8764:M8"); two combinations that would join alike are refused;
    - **gold labels become rows of judge "gold"** (``gold_judge=`` to name it otherwise, e.g. "human"):
      ``gold=`` names a column holding each item's reference value, in the same kind as the judges'
      values (pairwise gold always in the original labels). It is read once per item and criterion,
      condition "original"; two different gold values for one item are an error;
    - ``criterion=``, ``condition=`` and ``repeat=`` name optional columns that fill those table
      columns (defaults: "overall", "original", NA); ``cluster=`` and ``keep=`` name columns carried
      into the table under their own names (pass ``cluster="<name>"`` to a statistic to resample them);
    - **a cell holding a list of answers** (G-Eval's ``all_responses``: n sampled answers per response)
      becomes one row per answer, ``repeat`` 0, 1, ... (an empty list: one missing row; with ``repeat=``
      as well it is refused);
    - **a missing cell is never dropped**: it becomes an unscored row, status "missing", reason
      "missing in source (...)". Which strings count as missing is ``missing_values=``
      (:data:`DEFAULT_MISSING`; real NaN/None always do);
    - **a value that cannot be mapped** (a label outside ``labels=``, a score outside ``scale=``, a
      winner not in the mapping, a score that is not a number) raises ONE error naming the column, the
      row and the value; with ``on_bad="unscored"`` it becomes a ``parse_error`` row with that reason;
    - **a column of the judge's text answers** is read with ``parse=``: "score" (with ``scale=``; the row's
      criterion name counts as a score label, so "Coherence: 3" reads 3 on criterion "coherence"),
      "winner", "label" (with ``labels=``) or a function of the cell's text -- the parsing layer of the
      rubrics (:func:`judgelab.parse_score`, :func:`judgelab.parse_winner`). An answer it cannot read is
      an unscored row (status "parse_error", or "refusal") with the reason; gold columns are read as
      values, not parsed. ``detail.parsed`` keeps the tier, rule and span that decided;
    - **a publisher's rule for unreadable answers** is ``unscored_as=``: the judges' parse errors and
      refusals counted as that value (LLMBar counts an unreadable verdict as a tie: ``unscored_as="TIE"``;
      G-Eval scores it 0: ``unscored_as=0``), through :func:`judgelab.fill_unscored` -- the rows stay
      countable (``unscored_reason`` keeps "counted as X (was parse_error: ...)");
    - **labels are compared as text**: 2 and "2" are one label and "Tie" may sit beside them; refused
      only when numbers and text could never match (a number beside "2.0", or a column of numbers and a
      column of text with no label in common);
    - **a pairwise import with a ``condition=`` column** needs the two orders named "original" and
      "swapped" (values like "0"/"1" or "AB"/"BA" are mapped with ``condition_values=``; without it the
      import refuses, naming the values it saw -- it never guesses which order is which).

    **Mean of n sampled answers (G-Eval)** is two steps: import every sample as a repeat (a ``repeat=``
    column, or a cell holding the list of answers), then average::

        t = from_frame(df, item_id="response_id", judge="judge", score="answer", criterion="criterion",
                       repeat="sample", parse="score", scale=(1, 3))
        means = judgelab.aggregate_repeats(t, unscored_as=0)   # G-Eval: an unreadable sample counts 0
        # or aggregate_repeats(t): unreadable samples left out of each mean, counted in n_unscored_excluded

    Rows are named in messages by their place in the source: in a file, "data row N" (1-based, the header
    not counted) and its line ("line 7"; "object 7" in a JSON list); in a DataFrame, "row N" is the
    0-based position (with the index label when the index is not 0, 1, 2, ...). Every judge row keeps the
    source cell as text in ``raw_output`` and its provenance (column, row) in ``detail``.

    Files are read as written (:func:`read_frame`): CSV/TSV cells are never type-guessed, the ids of a
    JSON file keep the digits they were written with, and a CSV row with more or fewer fields than the
    header is refused naming its line.

    Options: ``labels=`` declares the allowed labels (kind "label") and ``scale=(low, high)`` the
    allowed score range (kind "score"; ``scale={"coherence": (1, 3), "groundedness": (0, 1)}`` gives each
    criterion its own, and every criterion of the import needs one); without them any label / any finite
    number is accepted.
    ``run_id`` defaults to "from_frame:<file name>" (or "from_frame"), ``rubric`` to "imported".
    Errors (an unknown or empty column, an empty frame, labels that could never match, a judge column
    with no value at all, two verdicts for one key, unnamed orders, an unreadable file) raise
    :class:`FrameImportError` with one sentence naming the column, row and value.
    """
    source_name = Path(frame).name if isinstance(frame, str | os.PathLike) else None
    lines: list[str] | None = None
    id_columns = [item_id] if isinstance(item_id, str) else list(item_id)
    if not id_columns:
        raise FrameImportError("item_id= names no column; give the column (or columns) that name each item")
    if isinstance(frame, str | os.PathLike):
        text_columns = [c for c in (*id_columns, judge, criterion, condition, cluster, *(candidates or ()))
                        if c is not None]
        frame, lines = _read_source(frame, missing_values, text_columns, arrow=True)
    elif not isinstance(frame, pd.DataFrame):
        raise FrameImportError(f"from_frame reads a pandas DataFrame or a file path, not {type(frame).__name__}")
    where = Where(frame, from_file=source_name is not None, lines=lines)
    value_columns, kind = _shape(frame, judge, score, label, winner, judges, kind)
    if winner_in not in ("shown", "original"):
        raise FrameImportError(f"winner_in must be 'shown' or 'original', not {winner_in!r}")
    if on_bad not in ("raise", "unscored"):
        raise FrameImportError(f"on_bad must be 'raise' or 'unscored', not {on_bad!r}")
    if frame.empty:
        raise FrameImportError("the frame has no rows: nothing to import")
    if candidates is not None and (isinstance(candidates, str) or len(candidates) != 2):
        raise FrameImportError(f"candidates= names the TWO columns holding the candidates shown first and second "
                               f"(e.g. candidates=('model_a', 'model_b')), not {candidates!r}")
    named = [*(("item_id", c) for c in id_columns), ("judge", judge), ("score", score), ("label", label), ("winner", winner),
             ("gold", gold), ("criterion", criterion), ("condition", condition), ("repeat", repeat),
             ("cluster", cluster), *(("keep", c) for c in keep), *(("judges", c) for c in (judges or ())),
             *(("candidates", c) for c in (candidates or ()))]
    check_columns(frame, [(role, col) for role, col in named if col is not None])
    pairs = _candidates(frame, candidates, kind, condition, winner_in, keep, cluster, where, missing_values)
    reserved = [c for c in (cluster, *keep) if c is not None and c in _TABLE_NAMES]
    if reserved:
        raise FrameImportError(f"columns {reserved} would overwrite judgments-table columns; pass them as "
                               "item_id=/criterion=/condition=/repeat= or rename them first")
    mapper = _ValueMapper(kind, labels=labels, scale=scale, winner_values=winner_values,
                          missing_values=missing_values, on_bad=on_bad, where=where, candidates=pairs)
    if parse == "winner" and winner_values is not None:
        raise FrameImportError("parse='winner' reads A/B/TIE from the answer text itself; winner_values= maps "
                               "values of a winner column: pass one or the other")
    reader = text_reader(parse, kind, scale=mapper.scales.of if mapper.scales else None, labels=mapper.labels)
    base = _base_columns(frame, id_columns, criterion, condition, repeat, condition_values, where, pairs)
    mapper.scales.check(list(set(base["criterion"])))
    if kind == "pairwise" and condition is not None and condition_values is None:
        check_orders_named(base["condition"], condition)
    carried = [c for c in (cluster, *keep) if c is not None]
    if pairs is not None:  # who "A" and "B" are, in the table's (sorted) order
        frame = frame.assign(**{name: [p[k] for p in pairs.sorted] for k, name in enumerate(CANDIDATE_COLUMNS)})
        carried += list(CANDIDATE_COLUMNS)
    if kind == "label" and reader is None:
        check_label_types(frame, [*value_columns, *([gold] if gold else [])], missing_values)
    run = run_id or (f"from_frame:{source_name}" if source_name else "from_frame")
    cells = _distinct(frame, [*value_columns, *([gold] if gold else [])]) if pairs is None else None
    if cells is not None:  # every cell one value: column-wise (frame_columns), same table
        table = _columnar(frame, cells, judge, judges, value_columns, gold, gold_judge, base, mapper, kind, winner_in,
                          carried, reader, where, missing_values, run, rubric)
    else:
        table = _row_wise(frame, judge, judges, value_columns, gold, gold_judge, base, mapper, kind, winner_in, carried,
                          reader, where, missing_values, run, rubric)
    if unscored_as is not None:
        table = count_unscored_as(table, unscored_as, kind, exclude_judge=gold_judge if gold is not None else None)
    return table


def _distinct(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, tuple[np.ndarray, list[Any]]] | None:
    """Each value column's distinct cells (frame_columns.distinct_cells); None when a cell holds a list."""
    out = {}
    for col in dict.fromkeys(columns):
        found = distinct_cells(frame[col])
        if found is None:
            return None
        out[col] = found
    return out


def _columnar(frame: pd.DataFrame, cells: dict[str, tuple[np.ndarray, list[Any]]], judge: str | None,
              judges: Sequence[str] | Mapping[str, str] | None, value_columns: Sequence[str], gold: str | None,
              gold_judge: str, base: pd.DataFrame, mapper: _ValueMapper, kind: str, winner_in: str,
              carried: Sequence[str], reader: TextReader | None, where: Where, missing_values: Sequence[str],
              run: str, rubric: str) -> pd.DataFrame:
    """The table from arrays: each distinct (cell, criterion) mapped once (frame_columns)."""
    labels = row_labels(where, frame.index)
    crit_codes, crit_uniques = pd.factorize(base["criterion"])
    criteria = (np.asarray(crit_codes, dtype=np.int64), [str(c) for c in crit_uniques])
    parts: list[JudgeColumns | GoldColumns] = []
    parsed: dict[tuple[type, Any, str], Any] = {}
    if judge is not None:  # long form
        names = _required_text(frame[judge], judge, "judge", where, missing_values).to_numpy(dtype=object)
        parts.append(JudgeColumns(frame, value_columns[0], names, base, mapper, kind, winner_in, reader, labels,
                                  cells[value_columns[0]], criteria, parsed))
    else:
        mapping = dict(judges) if isinstance(judges, Mapping) else {c: c for c in value_columns}
        for col in value_columns:
            codes, firsts = cells[col]
            present = [not is_missing(v, missing_values) for v in firsts]
            if not any(present[c] for c in np.unique(codes[codes >= 0])):
                raise FrameImportError(f"judge column {col!r} has no value in any of its {len(frame)} rows; "
                                       "drop it from judges= or check the column (and the file's separator)")
            names = np.full(len(frame), mapping[col], dtype=object)
            parts.append(JudgeColumns(frame, col, names, base, mapper, kind, winner_in, reader, labels, cells[col],
                                      criteria, parsed))
    if gold is not None:
        if any(gold_judge in set(p.judge) for p in parts):
            raise FrameImportError(f"a judge is named {gold_judge!r}, the name the gold column's rows take; pass "
                                   "gold_judge= with another name (e.g. gold_judge='human')")
        item_codes, _ = pd.factorize(base["item_id"])
        keys = np.asarray(item_codes, dtype=np.int64) * max(len(criteria[1]), 1) + criteria[0]
        lenient = copy.copy(mapper)
        lenient.on_bad = "unscored"
        parts.append(GoldColumns(frame, gold, gold_judge, base, mapper, labels, cells[gold], criteria, keys, lenient))
    table = assemble(parts, base, frame, carried, where, run, rubric)
    del parts  # their arrays are in the table now; validate's own work needs the room at 10^7 rows
    return validate(table)


def _row_wise(frame: pd.DataFrame, judge: str | None, judges: Sequence[str] | Mapping[str, str] | None,
              value_columns: Sequence[str], gold: str | None, gold_judge: str, base: pd.DataFrame,
              mapper: _ValueMapper, kind: str, winner_in: str, carried: Sequence[str], reader: TextReader | None,
              where: Where, missing_values: Sequence[str], run: str, rubric: str) -> pd.DataFrame:
    """The table from one dict per row: the shapes that need per-row state (list cells, candidates=)."""
    rows: list[dict[str, Any]] = []
    if judge is not None:  # long form
        judge_names = _required_text(frame[judge], judge, "judge", where, missing_values)
        rows += _judge_rows(frame, value_columns[0], judge_names, base, mapper, kind, winner_in, carried, reader)
    else:
        mapping = dict(judges) if isinstance(judges, Mapping) else {c: c for c in value_columns}
        for col in value_columns:
            if frame[col].map(lambda v: is_missing(v, missing_values)).all():
                raise FrameImportError(f"judge column {col!r} has no value in any of its {len(frame)} rows; "
                                       "drop it from judges= or check the column (and the file's separator)")
            names = pd.Series(mapping[col], index=frame.index)
            rows += _judge_rows(frame, col, names, base, mapper, kind, winner_in, carried, reader)
    if gold is not None:
        taken = sorted({row["judge"] for row in rows} & {gold_judge})
        if taken:
            raise FrameImportError(f"a judge is named {gold_judge!r}, the name the gold column's rows take; pass "
                                   "gold_judge= with another name (e.g. gold_judge='human')")
        rows += _gold_rows(frame, gold, gold_judge, base, mapper, carried, where)
    check_duplicates(rows, where)
    for row in rows:
        row.pop("_pos")
        row.update(run_id=run, rubric=rubric)
    return validate(make_table(rows))


# ----------------------------------------------------------------------------------------------- internals

_TABLE_NAMES = frozenset(("run_id", "item_id", "rubric", "rubric_version", "criterion", "side", "judge", "condition",
                          "repeat", "status", "unscored_reason", "score", "winner", "verdict", "detail", "raw_output"))


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


def _required_text(column: pd.Series, name: str, role: str, where: Where, missing_values: Sequence[str]) -> pd.Series:
    text = _is_text(column)  # every cell a str or NA: checked column-wise, and each str is its own text
    if text:
        empty = np.flatnonzero((column.isna() | column.isin(list(missing_values))).to_numpy(dtype=bool)).tolist()
    else:
        empty = [i for i, v in enumerate(column) if is_missing(v, missing_values)]
    if empty:
        rows = ", ".join(where(i) for i in empty[:5])
        raise FrameImportError(f"column {name!r} ({role}) is empty in {len(empty)} rows ({rows}); every row needs one")
    return column if text else column.map(cell_text)


def _is_text(column: pd.Series) -> bool:
    """A text column (pandas' str or string dtype): its cells are str or NA."""
    return isinstance(column.dtype, pd.StringDtype)


def _candidates(frame: pd.DataFrame, candidates: Sequence[str] | None, kind: str, condition: str | None,
                winner_in: str, keep: Sequence[str], cluster: str | None, where: Where,
                missing_values: Sequence[str]) -> Candidates | None:
    """``candidates=``: the pair of each vote, oriented by the candidates' names (frame_shapes)."""
    if candidates is None:
        return None
    if kind != "pairwise":
        raise FrameImportError(f"candidates= names the two candidates of pairwise votes; this import is kind {kind!r}")
    if condition is not None or winner_in != "shown":
        raise FrameImportError("candidates= orients every vote by the candidates' names (A = the first in sorted "
                               "order), so condition=/winner_in='original' would flip winners twice; pass one or "
                               "the other")
    taken = [c for c in (cluster, *keep, *frame.columns) if c in CANDIDATE_COLUMNS]
    if taken:
        raise FrameImportError(f"candidates= writes the columns {list(CANDIDATE_COLUMNS)}, but the frame already has "
                               f"{taken[0]!r}; rename it first")
    return Candidates(frame, candidates, where, lambda v: is_missing(v, missing_values), cell_text)


def _base_columns(frame: pd.DataFrame, item_id: Sequence[str], criterion: str | None, condition: str | None,
                  repeat: str | None, condition_values: Mapping[Any, str] | None, where: Where,
                  pairs: Candidates | None) -> pd.DataFrame:
    """item_id, criterion, condition and repeat per source row (defaults where no column is named)."""
    base = pd.DataFrame(index=frame.index)
    for col in item_id:
        _required_text(frame[col], col, "item_id", where, ())  # names the empty cells
    base["item_id"] = item_ids(frame, item_id, where, pairs.sorted if pairs is not None else None)
    base["criterion"] = _required_text(frame[criterion], criterion, "criterion", where, ()) if criterion else "overall"
    if condition:
        values = _required_text(frame[condition], condition, "condition", where, ())
        if condition_values is not None:
            mapping = {cell_text(k): str(v) for k, v in condition_values.items()}
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
                                   f"{shown_value(frame[repeat].iloc[bad[0]])!r}")
        base["repeat"] = numbers.astype("Int64")
    else:
        base["repeat"] = pd.NA
    return base


class _ValueMapper:
    """Maps one source cell of a kind to (table column value, None) or (None, reason it cannot be read)."""

    def __init__(self, kind: str, *, labels: Sequence[Any] | None,
                 scale: tuple[float, float] | Mapping[str, tuple[float, float]] | None,
                 winner_values: Mapping[Any, str] | None, missing_values: Sequence[str], on_bad: str,
                 where: Where, candidates: Candidates | None = None) -> None:
        self.kind, self.missing_values, self.on_bad, self.where = kind, missing_values, on_bad, where
        self.candidates = candidates
        if labels is not None and kind != "label":
            raise FrameImportError(f"labels= declares the labels of kind 'label'; this import is kind {kind!r}")
        if scale is not None and kind != "score":
            raise FrameImportError(f"scale= declares the range of kind 'score'; this import is kind {kind!r}")
        if winner_values is not None and kind != "pairwise":
            raise FrameImportError(f"winner_values= maps pairwise winners; this import is kind {kind!r}")
        self.labels = None if labels is None else [cell_text(v) for v in labels]
        self.scales = Scales(scale)
        if winner_values is not None:
            self.winners = {cell_text(k): str(v) for k, v in winner_values.items()}
            bad = sorted({v for v in self.winners.values() if v not in _FLIP})
            if bad:
                raise FrameImportError(f"winner_values= must map to 'A', 'B' or 'TIE', not {bad}")
            self.case_blind = False
        else:
            self.winners, self.case_blind = DEFAULT_WINNER_VALUES, True

    def __call__(self, value: Any, column: str, pos: int, criterion: str) -> tuple[Any, str | None]:
        if self.kind == "score":
            return self._score(value, column, pos, criterion)
        text = cell_text(value)
        if self.kind == "label":
            if self.labels is not None and text not in self.labels:
                return self._bad(f"value {text!r} in column {column!r} ({self.where(pos)}) is not one of the "
                                 f"declared labels {self.labels}")
            return text, None
        key = text.strip().lower() if self.case_blind else text
        named = self.candidates.side(text.strip(), pos) if self.candidates is not None else None
        if named is None and key not in self.winners:
            known = sorted(self.winners)
            names = " or a candidate's name" if self.candidates is not None else ""
            return self._bad(f"value {text!r} in column {column!r} ({self.where(pos)}) is not a known winner "
                             f"(known: {known}{names}); map it with winner_values=")
        side = named or self.winners[key]
        if self.candidates is not None and self.candidates.flipped[pos]:
            side = _FLIP[side]  # the row shows the pair in the other order than the table's sorted one
        return side, None

    def _score(self, value: Any, column: str, pos: int, criterion: str) -> tuple[Any, str | None]:
        if isinstance(value, bool | np.bool_):
            number = math.nan
        else:
            try:
                number = float(value.strip()) if isinstance(value, str) else float(value)
            except (TypeError, ValueError):
                number = math.nan
        if not math.isfinite(number):
            return self._bad(f"value {shown_value(value)!r} in column {column!r} ({self.where(pos)}) is not a number")
        scale = self.scales.of(criterion)
        if scale is not None and not scale[0] <= number <= scale[1]:
            return self._bad(f"value {shown_value(value)!r} in column {column!r} ({self.where(pos)}) is outside the scale "
                             f"{scale[0]:g}-{scale[1]:g}")
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
                kind: str, winner_in: str, carried: Sequence[str], reader: TextReader | None) -> list[dict[str, Any]]:
    rows = []
    records, extra, names = base.to_dict("records"), _carried_records(frame, carried), list(judge_names)
    # most cells repeat a few values: map each once (not when the mapping depends on the row's candidates)
    readable: dict[tuple[type, str, str], Any] | None = {} if mapper.candidates is None else None
    for pos, value in enumerate(frame[column]):
        row: dict[str, Any] = {**records[pos], "judge": names[pos], **extra[pos], "_pos": pos}
        detail: dict[str, Any] = {"source": "from_frame", "column": str(column), "row": mapper.where.label(pos)}
        if mapper.candidates is not None:
            detail["shown"] = list(mapper.candidates.shown[pos])
        if not is_list_cell(value):
            rows.append(_judge_cell(value, row, detail, pos, column, mapper, kind, winner_in, reader, readable))
            continue
        if not pd.isna(row["repeat"]):
            raise FrameImportError(f"column {column!r} ({mapper.where(pos)}) holds a list of answers, which become "
                                   f"repeats 0, 1, ...; repeat= already names a column: drop one of them")
        answers = list(value) if len(value) else [None]  # an empty list: one missing row
        for k, answer in enumerate(answers):
            rows.append(_judge_cell(answer, {**row, "repeat": k}, {**detail, "answer": k}, pos, column, mapper, kind,
                                    winner_in, reader, readable))
    return rows


def _judge_cell(value: Any, row: dict[str, Any], detail: dict[str, Any], pos: int, column: str, mapper: _ValueMapper,
                kind: str, winner_in: str, reader: TextReader | None,
                readable: dict[tuple[type, str, str], Any] | None) -> dict[str, Any]:
    """One judge row from one cell (or one answer of a list cell)."""
    criterion = row["criterion"]
    if is_missing(value, mapper.missing_values):
        row.update(status=MISSING, unscored_reason=f"missing in source (column {column!r}, {mapper.where(pos)})")
        row["detail"] = detail
        return row
    row["raw_output"] = text = cell_text(value)
    status = PARSE_ERROR
    key = (type(value), text, criterion)
    parsed_detail = None
    if readable is not None and key in readable:
        mapped, reason = readable[key], None
    elif reader is not None:
        parsed = reader(value, criterion)
        if parsed.ok:
            mapped, reason = mapper(parsed.value, str(column), pos, criterion)
            parsed_detail = {"tier": parsed.tier, "rule": parsed.rule, "matched": parsed.matched}
        else:
            mapped, status = None, parsed.status
            reason = f"{parsed.reason} (column {column!r}, {mapper.where(pos)})"
    else:
        mapped, reason = mapper(value, str(column), pos, criterion)
        if reason is None and readable is not None:
            readable[key] = mapped
    if parsed_detail is not None:
        detail["parsed"] = parsed_detail
    if reason is not None:
        row.update(status=status, unscored_reason=reason)
    else:
        if kind == "pairwise" and winner_in == "shown" and row["condition"] == "swapped":
            detail["shown_winner"] = mapped
            mapped = _FLIP[mapped]
        row.update({"status": OK, _VALUE_COLUMN[kind]: mapped})
    row["detail"] = detail
    return row


def _gold_rows(frame: pd.DataFrame, gold: str, gold_judge: str, base: pd.DataFrame, mapper: _ValueMapper,
               carried: Sequence[str], where: Where) -> list[dict[str, Any]]:
    """One gold row per item and criterion (the first readable value); two different values are an error."""
    target = _VALUE_COLUMN[mapper.kind]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    readable: dict[tuple[str, str], tuple[int, Any]] = {}  # key -> (position, value) of the gold value kept
    records = base.to_dict("records")
    extra = _carried_records(frame, carried)
    for pos, value in enumerate(frame[gold]):
        key = (records[pos]["item_id"], records[pos]["criterion"])
        missing = is_missing(value, mapper.missing_values)
        mapped, reason = (None, None) if missing else mapper(value, str(gold), pos, key[1])
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
                               "judge": gold_judge, **extra[pos], "_pos": pos,
                               "detail": {"source": "from_frame", "column": str(gold), "row": where.label(pos)}}
        if missing:
            row.update(status=MISSING, unscored_reason=f"missing in source (column {gold!r}, {where(pos)})")
        elif reason is not None:
            row.update(status=PARSE_ERROR, unscored_reason=reason, raw_output=cell_text(value))
        else:
            row.update({"status": OK, target: mapped, "raw_output": cell_text(value)})
            readable[key] = (pos, mapped)
        rows[key] = row
    return list(rows.values())


