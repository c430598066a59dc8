"""Column-wise judge and gold rows for :func:`judgelab.from_frame`: each distinct (cell, criterion) is mapped
-- and, with ``parse=``, its text parsed -- once, and the outcome is spread back over the rows as columns.

The row-wise builders in :mod:`judgelab.datasets.frame` made a Python dict per judgment row (plus its detail
dict); at 10^7 rows that is ~20 GB and minutes. This module gives the same table (same values, dtypes, column
order, messages and the same first error) from arrays; the row-wise builders remain for the shapes that need
per-row state (a cell holding a list of answers, ``candidates=``), and the tests compare both paths.

Only what depends on the row is made per row: its place in messages (unscored reasons name the row), its
``detail`` JSON (which names the row) and, for values a mapping refuses, the mapper's message.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from judgelab.datasets.frame_checks import Where, cell_text, is_missing
from judgelab.datasets.frame_text import FrameImportError, TextReader
from judgelab.judgments import MISSING, OK, PARSE_ERROR, SCHEMA, coerce_column

__all__ = ["GoldColumns", "JudgeColumns", "distinct_cells", "duplicate_error", "row_labels"]

_FLIP = {"A": "B", "B": "A", "TIE": "TIE"}
_VALUE_COLUMN = {"score": "score", "label": "verdict", "pairwise": "winner"}
# dtypes whose cells, once boxed, all have one Python type (NA apart): factorize tells their distinct values
_FACTORIZABLE = "biufU"


def _json(value: Any) -> str:
    """One value as the judgments table's detail JSON writes it (judgments._detail_to_json)."""
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def distinct_cells(column: pd.Series) -> tuple[np.ndarray, list[Any]] | None:
    """(code per row, the first cell of each code) with one code per distinct cell (type and value), -1 for
    NaN/None/NA cells; None when a cell cannot be told apart by value (a list, a dict: unhashable)."""
    cells = list(column)  # the cells exactly as iterating the column gives them (what the row-wise path reads)
    dtype = column.dtype
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind in _FACTORIZABLE):
        codes, _ = pd.factorize(column, use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.int64)
        _, first = np.unique(codes, return_index=True)
        first = first[np.unique(codes) >= 0]
        # renumber in order of first appearance (factorize already does; kept explicit for the NA sentinel)
        return codes, [cells[i] for i in np.sort(first)]
    codes = np.empty(len(cells), dtype=np.int64)
    seen: dict[tuple[type, Any], int] = {}
    firsts: list[Any] = []
    for pos, cell in enumerate(cells):
        if isinstance(cell, list | tuple | np.ndarray | dict):
            return None  # a list of answers: the row-wise path expands it
        if cell is None or cell is pd.NA or (isinstance(cell, float | np.floating) and cell != cell):
            codes[pos] = -1
            continue
        try:
            code = seen.setdefault((cell.__class__, cell), len(firsts))
        except TypeError:
            return None
        if code == len(firsts):
            firsts.append(cell)
        codes[pos] = code
    return codes, firsts


def _pair_codes(value_codes: np.ndarray, criterion_codes: np.ndarray, n_criteria: int) -> tuple[np.ndarray, np.ndarray]:
    """(code per row of its (cell, criterion) pair, -1 where the cell is NA; first row of each pair), pairs
    numbered in order of first appearance."""
    present = value_codes >= 0
    codes = np.full(len(value_codes), -1, dtype=np.int64)
    inner, _ = pd.factorize(value_codes[present] * n_criteria + criterion_codes[present])
    codes[present] = inner
    rows = np.flatnonzero(present)
    n = int(inner.max()) + 1 if len(inner) else 0
    first = np.full(n, len(codes), dtype=np.int64)
    np.minimum.at(first, np.asarray(inner, dtype=np.int64), rows)
    return codes, first


def row_labels(where: Where, index: pd.Index) -> pa.Array:
    """Each source row's label as detail JSON text (``"row": 7``)."""
    if pd.api.types.is_integer_dtype(index.dtype):
        return _text(index.to_numpy().astype(str))  # an integer's JSON is its digits
    return _text(np.array([_json(where.label(pos)) for pos in range(len(where.index))], dtype=object))


def _text(values: np.ndarray) -> pa.Array:
    """Text cells as an Arrow array of the table's string type (large_string)."""
    return pa.array(values, type=pa.large_string())


def _join(*parts: str | pa.Array) -> pa.Array:
    """Row by row, the parts' text joined (a str part is the same in every row): each row's detail JSON is
    made in Arrow, with no Python string per row."""
    return pc.binary_join_element_wise(*(pa.scalar(p, pa.large_string()) if isinstance(p, str) else p
                                         for p in parts), pa.scalar("", pa.large_string()))


class JudgeColumns:
    """The judge rows of one value column (one per source row, in row order), as arrays."""

    def __init__(self, frame: pd.DataFrame, column: str, judge_names: np.ndarray, base: pd.DataFrame, mapper: Any,
                 kind: str, winner_in: str, reader: TextReader | None, labels: pa.Array,
                 cells: tuple[np.ndarray, list[Any]], criteria: tuple[np.ndarray, list[str]],
                 parsed_cache: dict[tuple[type, Any, str], Any]) -> None:
        """``parsed_cache``: (cell type, cell, criterion) -> what the reader made of it, shared by the judge
        columns of one import (the same answer in two judges' columns is read once)."""
        n = len(frame)
        where: Where = mapper.where
        value_codes, firsts = cells
        crit_codes, crit_names = criteria
        pair, first_pos = _pair_codes(value_codes, crit_codes, max(len(crit_names), 1))
        name = str(column)
        texts = [cell_text(v) for v in firsts]
        n_pairs = len(first_pos)
        status = np.empty(n_pairs, dtype=object)
        mapped = np.empty(n_pairs, dtype=object)
        parsed_json = np.full(n_pairs, "", dtype=object)
        prefix: dict[int, str] = {}  # pair -> a parse failure's reason (the row is appended per row)
        remap: list[int] = []  # pairs whose value the mapper refused: its message names each row
        missing_pair = np.array([is_missing(firsts[value_codes[pos]], mapper.missing_values)
                                 for pos in first_pos.tolist()], dtype=bool)
        for p, pos in enumerate(first_pos.tolist()):
            value, criterion = firsts[value_codes[pos]], crit_names[crit_codes[pos]]
            if missing_pair[p]:
                continue
            if reader is not None:
                key = (value.__class__, value, criterion)
                parsed = parsed_cache.get(key)
                if parsed is None:
                    parsed = parsed_cache[key] = reader(value, criterion)
                if not parsed.ok:
                    status[p], mapped[p], prefix[p] = parsed.status, None, parsed.reason
                    continue
                parsed_json[p] = f'"parsed": {_json({"tier": parsed.tier, "rule": parsed.rule, "matched": parsed.matched})}, '
                got, reason = mapper(parsed.value, name, pos, criterion)
                mapped_input = parsed.value
            else:
                got, reason = mapper(value, name, pos, criterion)
                mapped_input = value
            if reason is not None:
                status[p], mapped[p] = PARSE_ERROR, None
                remap.append(p)
                prefix[p] = mapped_input  # re-mapped per row below
            else:
                status[p], mapped[p] = OK, got
        is_na = pair < 0
        row_missing = is_na | (missing_pair[np.where(is_na, 0, pair)] if n_pairs else is_na)
        safe = np.where(row_missing, 0, pair)
        self.status = np.where(row_missing, MISSING, status[safe] if n_pairs else MISSING).astype(object)
        value = np.where(row_missing, None, mapped[safe] if n_pairs else None).astype(object)
        text_of = np.array([*texts, None], dtype=object)
        self.raw_output = text_of[np.where(row_missing, len(texts), np.where(value_codes >= 0, value_codes, len(texts)))]
        reason = np.full(n, None, dtype=object)
        for pos in np.flatnonzero(row_missing).tolist():
            reason[pos] = f"missing in source (column {column!r}, {where(pos)})"
        unscored = ~row_missing & (self.status != OK)
        remapped = set(remap)
        for pos in np.flatnonzero(unscored).tolist():
            p = int(pair[pos])
            if p in remapped:
                reason[pos] = mapper(prefix[p], name, pos, crit_names[crit_codes[pos]])[1]
            else:
                reason[pos] = f"{prefix[p]} (column {column!r}, {where(pos)})"
        shown = np.full(n, "", dtype=object)
        if kind == "pairwise" and winner_in == "shown":
            swapped = (~row_missing & (self.status == OK)
                       & (base["condition"].to_numpy(dtype=object) == "swapped"))
            if swapped.any():
                shown[swapped] = np.array([f', "shown_winner": {_json(w)}' for w in value[swapped]], dtype=object)
                value[swapped] = np.array([_FLIP[w] for w in value[swapped]], dtype=object)
        parsed_part = _text(np.append(parsed_json, "")).take(np.where(row_missing, n_pairs, safe))
        self.detail = _join(f'{{"column": {_json(name)}, ', parsed_part, '"row": ', labels, _text(shown),
                            ', "source": "from_frame"}')
        self.value, self.reason, self.judge = value, reason, judge_names
        self.value_column = _VALUE_COLUMN[kind]
        self.positions = np.arange(n)


class GoldColumns:
    """One gold row per item and criterion (the first readable value, else the key's first row), as arrays;
    raises, like the row-wise builder, at the first source row that is refused or contradicts its key."""

    def __init__(self, frame: pd.DataFrame, gold: str, gold_judge: str, base: pd.DataFrame, mapper: Any,
                 labels: pa.Array, cells: tuple[np.ndarray, list[Any]], criteria: tuple[np.ndarray, list[str]],
                 keys: np.ndarray, unscored_mapper: Any) -> None:
        where: Where = mapper.where
        value_codes, firsts = cells
        crit_codes, crit_names = criteria
        pair, first_pos = _pair_codes(value_codes, crit_codes, max(len(crit_names), 1))
        name = str(gold)
        n_pairs = len(first_pos)
        ok_pair = np.zeros(n_pairs, dtype=bool)
        missing_pair = np.zeros(n_pairs, dtype=bool)
        mapped = np.empty(n_pairs, dtype=object)
        for p, pos in enumerate(first_pos.tolist()):
            value = firsts[value_codes[pos]]
            if is_missing(value, mapper.missing_values):
                missing_pair[p] = True
                continue
            got, reason = unscored_mapper(value, name, pos, crit_names[crit_codes[pos]])
            ok_pair[p], mapped[p] = reason is None, got
        safe = np.where(pair < 0, 0, pair)
        row_missing = (pair < 0) | (missing_pair[safe] if n_pairs else True)
        row_ok = ~row_missing & (ok_pair[safe] if n_pairs else False)
        row_bad = ~row_missing & ~row_ok
        # the first contradiction: a readable value unlike the key's first readable value
        ok_rows = np.flatnonzero(row_ok)
        value_ids = {}
        mapped_id = np.array([value_ids.setdefault(m, len(value_ids)) if ok else -1
                              for m, ok in zip(mapped.tolist(), ok_pair.tolist(), strict=True)], dtype=np.int64)
        row_ids = mapped_id[safe[ok_rows]]
        first_id = pd.Series(row_ids).groupby(keys[ok_rows], sort=False).transform("first").to_numpy()
        conflicts = ok_rows[row_ids != first_id]
        first_conflict = int(conflicts[0]) if len(conflicts) else len(pair)
        first_bad = int(np.flatnonzero(row_bad)[0]) if row_bad.any() else len(pair)
        if mapper.on_bad == "raise" and first_bad < first_conflict:
            mapper(firsts[value_codes[first_bad]], name, first_bad, crit_names[crit_codes[first_bad]])  # raises
        if first_conflict < len(pair):
            pos = first_conflict
            key_rows = ok_rows[keys[ok_rows] == keys[pos]]
            seen_pos = int(key_rows[0])
            seen, now = mapped[pair[seen_pos]], mapped[pair[pos]]
            raise FrameImportError(
                f"gold column {gold!r} gives item {base['item_id'].iloc[pos]!r} two values: {seen!r} "
                f"({where(seen_pos)}) and {now!r} ({where(pos)}); gold is one value per item (pairwise gold in the "
                "ORIGINAL order's labels)")
        # per key: the first readable row, else the key's first row; keys in order of first appearance
        order = pd.DataFrame({"key": keys, "ok": ~row_ok})
        chosen_per_key = order.sort_values(["ok"], kind="stable").groupby("key", sort=False).head(1)
        first_seen = pd.Series(np.arange(len(keys))).groupby(keys, sort=False).first()
        chosen = chosen_per_key.reset_index().set_index("key")["index"].loc[first_seen.index].to_numpy()
        self.positions = chosen
        self.status = np.where(row_ok[chosen], OK, np.where(row_missing[chosen], MISSING, PARSE_ERROR)).astype(object)
        ok_chosen, missing_chosen = row_ok[chosen], row_missing[chosen]
        self.value = np.where(ok_chosen, np.append(mapped, None)[np.where(ok_chosen, pair[chosen], -1)], None)
        texts = np.array([*(cell_text(v) for v in firsts), None], dtype=object)
        self.raw_output = texts[np.where(missing_chosen, -1, value_codes[chosen])]
        self.reason = np.full(len(chosen), None, dtype=object)
        for k in np.flatnonzero(~ok_chosen).tolist():
            p = int(chosen[k])
            self.reason[k] = (f"missing in source (column {gold!r}, {where(p)})" if row_missing[p] else
                              unscored_mapper(firsts[value_codes[p]], name, p, crit_names[crit_codes[p]])[1])
        self.detail = _join(f'{{"column": {_json(name)}, "row": ', labels.take(chosen), ', "source": "from_frame"}')
        self.judge = np.full(len(chosen), gold_judge, dtype=object)
        self.value_column = _VALUE_COLUMN[mapper.kind]


def duplicate_error(table: pd.DataFrame, positions: np.ndarray, where: Where) -> None:
    """Two judge rows with one key (item, judge, criterion, condition, repeat): the row-wise check's message,
    naming the first repeated key's two source rows."""
    keys = ["item_id", "judge", "criterion", "condition", "repeat"]
    dup = table.duplicated(subset=keys, keep="first").to_numpy()
    if not dup.any():
        return
    i = int(np.flatnonzero(dup)[0])
    row = table.iloc[i]
    same = np.ones(len(table), dtype=bool)
    for k in keys:
        col = table[k]
        same &= (col.isna() if pd.isna(row[k]) else col.eq(row[k]).fillna(False)).to_numpy(dtype=bool)
    j = int(np.flatnonzero(same)[0])
    raise FrameImportError(
        f"judge {row['judge']!r} has two verdicts for item {row['item_id']!r} (criterion {row['criterion']!r}, "
        f"condition {row['condition']!r}) in {where(int(positions[j]))} and {where(int(positions[i]))} "
        f"({where.unit}); name the column that tells them apart (condition=, criterion= or repeat=)")


def _strings(values: np.ndarray) -> Any:
    """Text cells (None: NA) as the table's "string" column (what judgments._coerce makes of them)."""
    return pd.array(values, dtype="string")


def assemble(parts: Sequence[JudgeColumns | GoldColumns], base: pd.DataFrame, frame: pd.DataFrame,
             carried: Sequence[str], where: Where, run: str, rubric: str) -> pd.DataFrame:
    """The judgments table of the parts' rows, in order, built column by column in the schema's dtypes: the
    table judgments.make_table made of the row-wise path's dicts (same values, dtypes and column order)."""
    carried = list(dict.fromkeys(carried))
    positions = np.concatenate([p.positions for p in parts])
    n = len(positions)
    judge_rows = np.concatenate([np.full(len(p.positions), isinstance(p, JudgeColumns)) for p in parts])
    columns: dict[str, Any] = {}
    for col in ("item_id", "criterion"):
        columns[col] = _strings(base[col].to_numpy(dtype=object)).take(positions)
    condition = base["condition"].to_numpy(dtype=object)[positions]
    columns["condition"] = _strings(np.where(judge_rows, condition, "original"))
    repeat = pd.array(list(base["repeat"]), dtype="Int64")
    columns["repeat"] = repeat.take(np.where(judge_rows, positions, -1), allow_fill=True)
    columns["judge"] = _strings(np.concatenate([np.asarray(p.judge, dtype=object)[p.positions]
                                                if isinstance(p, JudgeColumns) else p.judge for p in parts]))
    columns["status"] = _strings(_release(parts, "status"))
    columns["unscored_reason"] = _strings(_release(parts, "reason"))
    columns["raw_output"] = _strings(_release(parts, "raw_output"))
    for value_column in dict.fromkeys(p.value_column for p in parts):
        values = np.concatenate([p.value if p.value_column == value_column
                                 else np.full(len(p.positions), None, dtype=object) for p in parts])
        columns[value_column] = pd.array(values, dtype=SCHEMA[value_column])
    for p in parts:
        p.value = None
    columns["detail"] = pd.arrays.ArrowStringArray(pa.chunked_array([p.detail for p in parts]))
    for col, value in (("run_id", run), ("rubric", rubric)):
        columns[col] = _strings(np.array([value], dtype=object)).take(np.zeros(n, dtype=np.int64))
    keys = pd.DataFrame({k: columns[k] for k in ("item_id", "judge", "criterion", "condition", "repeat")})
    duplicate_error(keys, positions, where)
    if carried:
        extra = _carried(frame, carried, positions)
        columns.update({c: extra[c] for c in carried if c in SCHEMA})
    # the columns no row fills: what make_table makes of an absent column (an all-NA created_at comes out as
    # datetime64[s, UTC], not the schema's [ns]: kept, the table must not change)
    nothing = np.full(n, -1, dtype=np.int64)
    table = pd.DataFrame({col: columns[col] if col in columns
                          else coerce_column(pd.Series([pd.NA], dtype=object), col).array.take(nothing, allow_fill=True)
                          for col in SCHEMA}, copy=False)  # the arrays are new: no second copy of the table
    for c in carried:
        if c not in SCHEMA:
            table[c] = extra[c]
    return table


def _release(parts: Sequence[JudgeColumns | GoldColumns], name: str) -> np.ndarray:
    """One per-row array of every part, in order; the parts' own arrays are dropped (at 10^7 rows each is
    ~80 MB of references held until the table is built)."""
    out = np.concatenate([getattr(p, name) for p in parts])
    for p in parts:
        setattr(p, name, None)
    return out


def _carried(frame: pd.DataFrame, carried: Sequence[str], positions: np.ndarray) -> dict[str, Any]:
    """The carried columns at ``positions``, each in the dtype the row-wise path's dicts gave it: a text
    column as it is, any other through the constructor that read the dicts (same dtype inference)."""
    out: dict[str, Any] = {}
    rest = []
    for c in carried:
        if isinstance(frame[c].dtype, pd.StringDtype) and frame[c].dtype.na_value is not pd.NA \
                and frame[c].dtype.storage == "pyarrow":
            out[c] = frame[c].array.take(positions)  # "str" cells read back as str and NaN: the same column
        else:
            rest.append(c)
    if rest:
        cells = [np.array(list(frame[c]), dtype=object)[positions] for c in rest]
        extra = pd.DataFrame(list(zip(*cells, strict=True)), columns=rest)
        for c in rest:
            out[c] = extra[c].array
    for c in carried:
        if c in SCHEMA:  # a kept column named like a schema column fills it, coerced to the schema's dtype
            out[c] = coerce_column(pd.Series(out[c]), c).array
    return out
