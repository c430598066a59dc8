"""The judgments table: the one long-format table every runner writes and every statistic reads.

One row per item x judge x criterion (or pairwise side) x condition x repeat. A failed call
or an unparseable answer is a row with a ``status`` other than ``"ok"`` and an
``unscored_reason``; it never carries a score and is never dropped.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError

__all__ = [
    "API_ERROR", "COLUMNS", "KEY_COLUMNS", "OK", "PARSE_ERROR", "REFUSAL", "REQUIRED_NON_NULL", "SCHEMA",
    "SKIPPED_BUDGET", "STATUSES", "UNSCORED_STATUSES", "JudgmentsFileNotFoundError", "JudgmentsTableError", "detail", "empty_table", "is_scored",
    "load", "make_table", "save", "scored", "status_counts", "validate",
]

# Row statuses: OK carries a score/winner/verdict; every other status is an unscored row with a reason.
OK = "ok"
PARSE_ERROR = "parse_error"  # the judge answered but the answer could not be read
API_ERROR = "api_error"  # the call failed (after retries) or was never attempted because the run stopped
REFUSAL = "refusal"  # the judge (or the provider's content filter) declined the task
SKIPPED_BUDGET = "skipped_budget"  # not called: the cost budget would have been passed
STATUSES: tuple[str, ...] = (OK, PARSE_ERROR, API_ERROR, REFUSAL, SKIPPED_BUDGET)
UNSCORED_STATUSES: tuple[str, ...] = tuple(s for s in STATUSES if s != OK)

# column -> pandas dtype. Nullable dtypes throughout so that "missing" stays missing.
SCHEMA: dict[str, str] = {
    "run_id": "string",
    "item_id": "string",
    "rubric": "string",
    "rubric_version": "string",
    "criterion": "string",  # criterion name, or "overall" for a whole-answer verdict row
    "side": "string",  # pairwise: the candidate ("A"/"B", original labels) a score belongs to; else NA
    "judge": "string",  # model name, "human", "human:<annotator>", "panel:<rule>", ...
    "condition": "string",  # "original", "swapped", or a perturbation name
    "repeat": "Int64",
    "temperature": "Float64",
    "seed": "Int64",
    "prompt_hash": "string",
    "call_id": "string",  # the cache key of the request that produced this row
    "raw_output": "string",
    "status": "string",
    "unscored_reason": "string",
    "score": "Float64",
    "winner": "string",  # pairwise, in the ORIGINAL candidate labels: "A", "B" or "TIE"
    "verdict": "string",
    "confidence": "Float64",
    "logprob_score": "Float64",
    "valid_prob_mass": "Float64",
    "input_tokens": "Int64",
    "output_tokens": "Int64",
    "cost_usd": "Float64",  # NaN when the price is unknown, never 0 by default
    "latency_s": "Float64",
    "cached": "boolean",
    "attempts": "Int64",  # model calls made for this request (retries and re-asks included)
    "system_fingerprint": "string",
    "detail": "string",  # JSON object: rubric-specific parsed fields, judge-stated values, flags
    "created_at": "datetime64[ns, UTC]",
}
COLUMNS: tuple[str, ...] = tuple(SCHEMA)
REQUIRED_NON_NULL: tuple[str, ...] = ("run_id", "item_id", "rubric", "criterion", "judge", "condition", "status")
# A row is identified by these columns; a table must not hold two rows with the same key.
KEY_COLUMNS: tuple[str, ...] = ("run_id", "item_id", "judge", "criterion", "side", "condition", "repeat")


class JudgmentsTableError(JudgelabError, ValueError):
    """A judgments table that breaks the schema; the message names the column and rows."""


class JudgmentsFileNotFoundError(JudgmentsTableError, FileNotFoundError):
    """No judgments file at the path given."""


def empty_table() -> pd.DataFrame:
    """A table with every column and no rows."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCHEMA.items()})


def make_table(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Build a schema-conformant table from row dicts (or a DataFrame); absent columns become NA.

    Unknown extra columns are kept after the schema columns (datasets attach e.g. ``system``).
    """
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if df.empty and len(df.columns) == 0:
        return empty_table()
    for col in COLUMNS:
        if col not in df.columns:
            df[col] = pd.NA
    if "detail" in df.columns:
        df["detail"] = df["detail"].map(_detail_to_json)
    df = _coerce(df)
    extra = [c for c in df.columns if c not in SCHEMA]
    return df[list(COLUMNS) + extra].reset_index(drop=True)


def _detail_to_json(value: Any) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return pd.NA
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _coerce(df: pd.DataFrame) -> pd.DataFrame:
    for col, dtype in SCHEMA.items():
        try:
            if dtype.startswith("datetime64"):
                df[col] = pd.to_datetime(df[col], utc=True)
            elif dtype == "string":
                df[col] = df[col].astype("object").where(df[col].notna(), None).astype("string")
            else:
                df[col] = df[col].astype(dtype)
        except (TypeError, ValueError) as exc:
            raise JudgmentsTableError(f"column {col!r} cannot be read as {dtype}: {exc}") from exc
    return df


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check a table against the schema and the unscored-row invariants; return it coerced.

    Raises JudgmentsTableError naming the column (and the first offending rows) on failure.
    """
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise JudgmentsTableError(f"judgments table is missing columns: {', '.join(missing)}")
    df = _coerce(df.copy())
    for col in REQUIRED_NON_NULL:
        bad = df.index[df[col].isna()]
        if len(bad):
            raise JudgmentsTableError(f"column {col!r} is empty in {len(bad)} rows (first: {list(bad[:5])})")
    bad_status = ~df["status"].isin(STATUSES)
    if bad_status.any():
        vals = sorted(set(df.loc[bad_status, "status"].astype(str)))
        raise JudgmentsTableError(f"column 'status' has unknown values {vals}; allowed: {list(STATUSES)}")
    unscored = ~is_scored(df)
    scored_unscored = unscored & (df["score"].notna() | df["winner"].notna())
    if scored_unscored.any():
        raise JudgmentsTableError(
            f"{int(scored_unscored.sum())} unscored rows carry a score or winner "
            f"(first: {list(df.index[scored_unscored][:5])}); an unscored row must not be scored"
        )
    no_reason = unscored & df["unscored_reason"].isna()
    if no_reason.any():
        raise JudgmentsTableError(
            f"{int(no_reason.sum())} unscored rows have no unscored_reason (first: {list(df.index[no_reason][:5])})"
        )
    dup = df.duplicated(subset=list(KEY_COLUMNS), keep=False)
    if dup.any():
        raise JudgmentsTableError(
            f"{int(dup.sum())} rows share a key {KEY_COLUMNS} (first: {list(df.index[dup][:5])}); rows must be unique"
        )
    return df


def save(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Validate and write a table atomically: Parquet by default, JSONL when the suffix is .jsonl."""
    df = validate(df)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        if path.suffix == ".jsonl":
            # iso dates at microsecond precision and 15 significant digits: a lossless round trip
            df.to_json(tmp, orient="records", lines=True, date_format="iso", date_unit="us", double_precision=15,
                       force_ascii=False)
        else:
            df.to_parquet(tmp, index=False)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a results file should be readable like any other
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def load(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a table written by :func:`save` (Parquet or JSONL) and validate it."""
    path = Path(path)
    if not path.exists():
        raise JudgmentsFileNotFoundError(f"judgments file not found: {path}")
    if path.suffix == ".jsonl":
        df = pd.read_json(path, orient="records", lines=True, dtype=False)
    else:
        df = pd.read_parquet(path)
    try:
        return validate(df)
    except JudgmentsTableError as exc:
        raise JudgmentsTableError(f"{path}: {exc}") from exc


def detail(row: Mapping[str, Any]) -> dict[str, Any]:
    """The parsed ``detail`` JSON of one row (an empty dict when absent)."""
    value = row.get("detail")
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return {}
    return json.loads(value)


def is_scored(df: pd.DataFrame) -> pd.Series:
    """Boolean mask of the rows with status "ok" (NA status counts as not scored)."""
    return df["status"].eq(OK).fillna(False).astype(bool)


def scored(df: pd.DataFrame) -> pd.DataFrame:
    """Only the rows with status "ok"."""
    return df[is_scored(df)]


def status_counts(df: pd.DataFrame) -> dict[str, int]:
    """Rows per status, every status present (zero when absent)."""
    counts = df["status"].value_counts()
    return {s: int(counts.get(s, 0)) for s in STATUSES}
