"""Items to judge: read from JSONL / CSV / Parquet or a DataFrame, with checked item_ids.

Handling of awkward input (documented, tested):
- empty file or no rows -> ItemsError;
- undecodable bytes (not UTF-8) -> ItemsError naming the file;
- item ids are text exactly as in the file (:mod:`judgelab.datasets.text_tables`): CSV/TSV cells are never
  type-guessed ("007", "1.0" stay as written); a JSON number keeps its written digits (``1`` -> "1", ``2.5``
  -> "2.5", ``1e3`` -> "1e3", integers above 2**53 exact); ids from a DataFrame or Parquet: integers as
  their digits, whole floats without ".0", a float id at or above 2**53 refused;
- a CSV/TSV record with more or fewer fields than the header (also: every row one field more, the shape
  pandas turns into an index), a malformed quote or a repeated header name -> ItemsError naming the line;
  no column is ever taken as an index;
- no ``item_id`` column -> ids are generated from each row's content (stable across reruns
  and row reordering; identical rows get a numbered suffix);
- duplicate ``item_id`` values or empty ids -> ItemsError naming them;
- NaN / None / blank text in a field the rubric requires -> the runner refuses before any call
  (MissingFieldError naming item and field); NaN elsewhere is kept as missing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.datasets.text_tables import id_text, read_delimited, read_json_records
from judgelab.errors import JudgelabError

__all__ = ["ID_COLUMN", "ItemsError", "read_items", "with_item_ids"]

ID_COLUMN = "item_id"


class ItemsError(JudgelabError, ValueError):
    """Items that cannot be judged as given; the message names the file, column or ids."""


def read_items(source: str | os.PathLike[str] | pd.DataFrame | Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Items as a DataFrame with a unique string ``item_id`` column."""
    if isinstance(source, pd.DataFrame):
        df, origin = source.copy(), "the items DataFrame"
    elif isinstance(source, str | os.PathLike):
        df, origin = _read_file(Path(source)), str(source)
    elif isinstance(source, Iterable) and not isinstance(source, bytes | Mapping):
        try:
            df, origin = pd.DataFrame(list(source)), "the items list"
        except (TypeError, ValueError) as exc:
            raise ItemsError(f"the items list cannot be read as rows ({exc}); give a DataFrame, a file path or a list "
                             "of mappings (one per item)") from exc
    else:
        raise ItemsError(f"items must be a DataFrame, a file path or a list of mappings (one per item), not "
                         f"{type(source).__name__}")
    if df.empty:
        raise ItemsError(f"{origin} holds no items")
    return with_item_ids(df, origin)


def _read_file(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise ItemsError(f"data file not found: {path}")
    if path.stat().st_size == 0:
        raise ItemsError(f"data file is empty: {path}")
    suffix = path.suffix.lower()
    try:
        if suffix in (".jsonl", ".ndjson", ".json"):
            df, _ = read_json_records(path, text_columns=(ID_COLUMN,), error=ItemsError,
                                      lines=suffix != ".json")
            return df
        if suffix in (".csv", ".tsv"):
            df, _ = read_delimited(path, sep="\t" if suffix == ".tsv" else ",", missing_values=("",),
                                   error=ItemsError)
            return df
        if suffix in (".parquet", ".pq"):
            return pd.read_parquet(path)
    except UnicodeDecodeError as exc:
        raise ItemsError(f"{path} is not UTF-8 text (byte {exc.start}); re-encode it as UTF-8") from None
    except (OSError, ValueError) as exc:
        if isinstance(exc, ItemsError):
            raise
        raise ItemsError(f"cannot read {path}: {exc}") from None
    raise ItemsError(f"unsupported data file type {suffix!r} for {path}; use .jsonl, .csv, .tsv or .parquet")


def _content_id(row: Mapping[str, Any]) -> str:
    blob = json.dumps({k: row[k] for k in sorted(row)}, sort_keys=True, default=str, ensure_ascii=False)
    return "item-" + hashlib.sha256(blob.encode()).hexdigest()[:12]


def with_item_ids(df: pd.DataFrame, origin: str = "the items") -> pd.DataFrame:
    """Check or generate ``item_id`` (see the module docstring for the rules)."""
    df = df.reset_index(drop=True)
    if "item_id" not in df.columns:
        ids, seen = [], {}
        for row in df.to_dict(orient="records"):
            base = _content_id(row)
            n = seen.get(base, 0)
            seen[base] = n + 1
            ids.append(base if n == 0 else f"{base}-{n}")
        df.insert(0, "item_id", ids)
        return df
    ids = df["item_id"]
    empty = ids.isna() | (ids.astype(str).str.strip() == "")
    if empty.any():
        raise ItemsError(f"{origin}: {int(empty.sum())} rows have an empty item_id (rows {list(df.index[empty][:5])})")
    df["item_id"] = [id_text(v, where=f"{origin}: the item_id of row {i}", error=ItemsError)
                     for i, v in enumerate(ids)]
    dups = df["item_id"][df["item_id"].duplicated()].unique()
    if len(dups):
        raise ItemsError(f"{origin}: duplicate item_id values {list(dups[:5])}; item_ids must be unique")
    return df
