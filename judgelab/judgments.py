"""The judgments table: the one long-format table every runner writes and every statistic reads.

One row per item x judge x criterion (or pairwise side) x condition x repeat. A failed call
or an unparseable answer is a row with a ``status`` other than ``"ok"`` and an
``unscored_reason``; it never carries a score and is never dropped.

Build one from your own rows with :func:`make_table` (missing ``status`` and ``run_id`` are
filled in, see there), from any data frame or file of judge verdicts with
:func:`judgelab.datasets.from_frame`, or read one with :func:`load`. The columns, what they
mean, the values they allow and who fills them, are listed below (``COLUMN_DOCS``).
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import math
import os
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError, user_errors

__all__ = [
    "API_ERROR", "COLUMNS", "COLUMN_DOCS", "KEY_COLUMNS", "MISSING", "OK", "OPTIONAL_COLUMNS", "PARSE_ERROR", "REFUSAL", "REQUIRED_NON_NULL",
    "SCHEMA", "SKIPPED_BUDGET", "STATUSES", "TIE_POLICIES", "UNSCORED_STATUSES", "VALUE_COLUMNS",
    "JudgmentsFileError", "JudgmentsFileNotFoundError", "JudgmentsTableError", "aggregate_repeats", "combine",
    "detail", "empty_table", "fill_unscored", "is_scored", "load", "majority", "make_table", "save", "scored",
    "status_counts", "validate",
    "distinct_text",
]

# Row statuses: OK carries a score/winner/verdict; every other status is an unscored row with a reason.
OK = "ok"
PARSE_ERROR = "parse_error"  # the judge answered but the answer could not be read
API_ERROR = "api_error"  # the call failed (after retries) or was never attempted because the run stopped
REFUSAL = "refusal"  # the judge (or the provider's content filter) declined the task
SKIPPED_BUDGET = "skipped_budget"  # not called: the cost budget would have been passed
MISSING = "missing"  # imported data had no value in this cell (judgelab.datasets.from_frame)
STATUSES: tuple[str, ...] = (OK, PARSE_ERROR, API_ERROR, REFUSAL, SKIPPED_BUDGET, MISSING)
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
    "reasoning": "string",  # a reasoning model's thinking, delivered apart from the answer; never parsed
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
    "reasoning_tokens": "Int64",  # part of output_tokens (and of the cost), not on top of it
    "cost_usd": "Float64",  # NaN when the price is unknown, never 0 by default
    "latency_s": "Float64",
    "cached": "boolean",
    "attempts": "Int64",  # model calls made for this request (retries and re-asks included)
    "system_fingerprint": "string",
    "detail": "string",  # JSON object: rubric-specific parsed fields, judge-stated values, flags
    "created_at": "datetime64[ns, UTC]",
    "turn": "Int64",  # the turn of a conversation a judgment targets (1, 2 ...); NA: the whole item
}
COLUMNS: tuple[str, ...] = tuple(SCHEMA)
REQUIRED_NON_NULL: tuple[str, ...] = ("run_id", "item_id", "rubric", "criterion", "judge", "condition", "status")
# A row is identified by these columns; a table must not hold two rows with the same key.
KEY_COLUMNS: tuple[str, ...] = ("run_id", "item_id", "judge", "criterion", "side", "condition", "repeat", "turn")
# columns added to the schema after tables were saved without them: absent, they are NA (a table saved before
# conversations has no turn column, and every row of it judges a whole item)
OPTIONAL_COLUMNS: tuple[str, ...] = ("turn",)
# The columns that carry what a judge said; a scored row has at least one of them.
VALUE_COLUMNS: tuple[str, ...] = ("score", "winner", "verdict")

_RUNNER = "the runner (judgelab.run)"
_ALL = "the runner, dataset loaders, from_frame"
# column -> (meaning, allowed values, who fills it); rendered into this module's docstring (help(judgments)).
COLUMN_DOCS: dict[str, tuple[str, str, str]] = {
    "run_id": ("the run (or imported source) the row belongs to", "any string; required",
               f"{_ALL}; make_table fills a content hash when the column is absent"),
    "item_id": ("the judged item (an answer, a summary, a pair of outputs)", "any string; required", _ALL),
    "rubric": ("the rubric (prompt + verdict rule) that produced the row", "a rubric name, 'llmbar:<strategy>', "
               "'imported' ...; required", _ALL),
    "rubric_version": ("the rubric's version (the hash of its spec)", "string or NA", _RUNNER),
    "criterion": ("what was judged", "a criterion name ('coherence' ...), or 'overall' for a whole-answer or "
                  "whole-pair verdict; required", _ALL),
    "side": ("pairwise rubrics that score each candidate: the candidate a score belongs to",
             "'A' / 'B' in the ORIGINAL candidate labels; NA for whole-answer and whole-pair rows", _RUNNER),
    "judge": ("who judged", "a model name; 'gold' for gold labels; 'human' (a consensus) or 'human:<annotator>'; "
              "'panel:<rule>' for a panel's aggregate; required", _ALL),
    "condition": ("how the item was shown", "'original'; 'swapped' (pairwise candidates in reversed order); or a "
                  "probe's perturbation name; required", f"{_ALL}, probes"),
    "repeat": ("the repeat index when an item is judged several times", "0, 1, 2 ...; NA for one-off rows",
               f"{_RUNNER}, from_frame (repeat=)"),
    "temperature": ("the sampling temperature of the call", "float or NA", _RUNNER),
    "seed": ("the sampling seed sent with the call", "integer or NA", _RUNNER),
    "prompt_hash": ("hash of the rendered prompt (messages)", "string or NA", _RUNNER),
    "call_id": ("the cache key of the request that produced the row", "string or NA", _RUNNER),
    "raw_output": ("the judge's reply exactly as received (reasoning blocks included)", "string or NA",
                   f"{_RUNNER}, loaders of released outputs"),
    "reasoning": ("a reasoning model's thinking, delivered apart from the answer (the provider's reasoning "
                  "field, or a leading <think> block litellm moved there); stored, never parsed", "string or NA",
                  _RUNNER),
    "status": ("whether the row carries a verdict", f"'{OK}' (scored); '{PARSE_ERROR}' (answer unreadable); "
               f"'{API_ERROR}' (call failed); '{REFUSAL}' (judge declined); '{SKIPPED_BUDGET}' (not called: "
               f"budget); '{MISSING}' (imported data had no value); required",
               f"{_ALL}; make_table fills '{OK}' where a score, winner or verdict is present"),
    "unscored_reason": ("why a row is unscored, in words", "required when status is not 'ok'; NA otherwise "
                        "(or the original reason of a row counted by fill_unscored)", _ALL),
    "score": ("a numeric rating", "float on the rubric's scale; NA when unscored or not a score rubric", _ALL),
    "winner": ("a pairwise verdict", "'A', 'B' or 'TIE' in the ORIGINAL candidate labels, whatever order they "
               "were shown in; NA otherwise", _ALL),
    "verdict": ("a categorical verdict (label rubrics: 'yes'/'no', 'match' ...)", "string; NA otherwise", _ALL),
    "confidence": ("the judge's stated or derived confidence in its verdict", "float in [0, 1] or NA",
                   f"{_RUNNER}, panels"),
    "logprob_score": ("the probability-weighted score from token logprobs", "float or NA", _RUNNER),
    "valid_prob_mass": ("probability mass on valid score tokens behind logprob_score", "float in [0, 1] or NA",
                        _RUNNER),
    "input_tokens": ("prompt tokens billed", "integer or NA", _RUNNER),
    "output_tokens": ("completion tokens billed", "integer or NA", _RUNNER),
    "reasoning_tokens": ("the reasoning tokens among output_tokens (usage.completion_tokens_details); priced as "
                         "completion tokens, inside output_tokens and cost_usd, not on top", "integer or NA",
                         _RUNNER),
    "cost_usd": ("the call's cost", "float; NaN when the price is unknown (never 0 by default)", _RUNNER),
    "latency_s": ("the call's wall time in seconds", "float or NA", _RUNNER),
    "cached": ("whether the reply came from the cache", "boolean or NA", _RUNNER),
    "attempts": ("model calls made for this request (retries and re-asks included)", "integer or NA", _RUNNER),
    "system_fingerprint": ("the provider's system fingerprint", "string or NA", _RUNNER),
    "detail": ("rubric-specific parsed fields, judge-stated values, flags, import provenance", "a JSON object "
               "(string) or NA; read it with judgments.detail(row)", _ALL),
    "created_at": ("when the row was made", "UTC timestamp or NA", f"{_RUNNER}, ensembles"),
    "turn": ("the turn of a conversation the judgment targets (MT-Bench grades turn 1 and turn 2 apart)",
             "1, 2 ...; NA when the row judges the whole item (and in tables saved before this column)",
             f"{_RUNNER} (rubrics that judge one turn), importers"),
}


def _render_columns() -> str:
    lines = ["", "Columns", "-------", ""]
    for name, (meaning, allowed, filler) in COLUMN_DOCS.items():
        lines += [f"``{name}`` ({SCHEMA[name]})", f"    {meaning}.", f"    Allowed: {allowed}.", f"    Filled by: {filler}.",
                  ""]
    lines += ["Extra columns (a dataset's ``system``, an imported ``cluster`` column ...) are kept after these.", ""]
    return "\n".join(lines)


__doc__ = (__doc__ or "") + _render_columns()


class JudgmentsTableError(JudgelabError, ValueError):
    """A judgments table that breaks the schema; the message names the column and rows."""


class JudgmentsFileNotFoundError(JudgmentsTableError, FileNotFoundError):
    """No judgments file at the path given."""


class JudgmentsFileError(JudgmentsTableError, OSError):
    """A judgments file that cannot be read or written (a folder, not Parquet/JSONL, no permission, a full disk);
    an OSError too, so code that caught the writer's OSError still does."""


def empty_table() -> pd.DataFrame:
    """A table with every column and no rows."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCHEMA.items()})


def make_table(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Build a schema-conformant table from row dicts (or a DataFrame); absent columns become NA.

    Defaults, so that a hand-made table is usable as it is:

    - ``status``: ``"ok"`` on every row with no status that carries a score, winner or verdict;
    - ``run_id``: when the column is absent or entirely empty, ``"table-<hash>"``, a hash of the
      rows' item, judge, criterion and condition (the same rows give the same id).

    Any other empty required column (``REQUIRED_NON_NULL``: item_id, rubric, criterion, judge,
    condition), a row with no status and nothing to score, or a partly empty run_id raises
    :class:`JudgmentsTableError` naming the column. Unknown extra columns are kept after the
    schema columns (datasets attach e.g. ``system``). :func:`validate` checks the rest.
    """
    df = _private_copy(rows) if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if df.empty and len(df.columns) == 0:
        return empty_table()
    for col in COLUMNS:
        if col not in df.columns:
            df[col] = pd.NA
    if len(df):
        df = _fill_defaults(df)
    if "detail" in df.columns:
        df["detail"] = df["detail"].map(_detail_to_json)
    df = _coerce(df)
    extra = [c for c in df.columns if c not in SCHEMA]
    return df[list(COLUMNS) + extra].reset_index(drop=True)


def _fill_defaults(df: pd.DataFrame) -> pd.DataFrame:
    """status "ok" where a value is present, a content-hash run_id; raise on other empty required columns."""
    if df["run_id"].isna().all():
        keys = df[["item_id", "judge", "criterion", "condition"]].astype(str)
        digest = hashlib.sha1(pd.util.hash_pandas_object(keys, index=False).to_numpy().tobytes()).hexdigest()
        df["run_id"] = f"table-{digest[:12]}"
    has_value = df[list(VALUE_COLUMNS)].notna().any(axis=1)
    no_status = df["status"].isna()
    df["status"] = df["status"].astype(object).where(~(no_status & has_value), OK)
    nothing = no_status & ~has_value
    if nothing.any():
        raise JudgmentsTableError(
            f"column 'status' is empty in {int(nothing.sum())} rows that carry no score, winner or verdict "
            f"(first: {list(df.index[nothing][:5])}); give each unscored row a status and an unscored_reason")
    for col in REQUIRED_NON_NULL:
        empty = df[col].isna()
        if empty.any():
            raise JudgmentsTableError(
                f"required column {col!r} is empty in {int(empty.sum())} of {len(df)} rows "
                f"(first: {list(df.index[empty][:5])}); {COLUMN_DOCS[col][0]}: {COLUMN_DOCS[col][1]}")
    return df


def _detail_to_json(value: Any) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return pd.NA
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _private_copy(df: pd.DataFrame) -> pd.DataFrame:
    """A copy the caller's frame never sees a write through: shallow under copy-on-write (pandas 3, where a
    shared column is copied on its first write; at 10^7 rows a deep copy costs GBs), deep before it."""
    cow = int(pd.__version__.split(".")[0]) >= 3 or pd.get_option("mode.copy_on_write") is True
    return df.copy(deep=not cow)


# the schema's dtypes as pandas dtype objects: a column already of its dtype is left as it is (no copy)
_DTYPES: dict[str, Any] = {col: pd.api.types.pandas_dtype(dtype) for col, dtype in SCHEMA.items()}


def _coerce(df: pd.DataFrame) -> pd.DataFrame:
    for col in SCHEMA:
        if df[col].dtype == _DTYPES[col]:
            continue  # converting it to its own dtype gives the same column; at 10^7 rows the copy costs GBs
        df[col] = coerce_column(df[col], col)
    return df


def coerce_column(values: pd.Series, col: str) -> pd.Series:
    """One column of the table in its schema dtype (a string column's NaN/None become NA)."""
    dtype = SCHEMA[col]
    try:
        if dtype.startswith("datetime64"):
            return pd.to_datetime(values, utc=True)
        if dtype == "string":
            return values.astype("object").where(values.notna(), None).astype("string")
        return values.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise JudgmentsTableError(f"column {col!r} cannot be read as {dtype}: {exc}") from exc


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check a table against the schema and the unscored-row invariants; return it coerced.

    Refused: a missing column, an empty required column, an unknown status, an unscored row that carries
    a score or winner or has no reason, a score of ±inf, a row with status "ok" and no value at all (a NaN
    score included), two rows with one key. Raises JudgmentsTableError naming the column (and the first
    offending rows) on failure.
    """
    absent_optional = [c for c in OPTIONAL_COLUMNS if c not in df.columns]
    if absent_optional:
        df = df.assign(**{c: pd.NA for c in absent_optional})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise JudgmentsTableError(f"judgments table is missing columns: {', '.join(missing)}")
    # columns already of their schema dtype are shared, not copied; only the columns that must change are converted
    df = _coerce(_private_copy(df))
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
    scores = df["score"].to_numpy(dtype=float, na_value=np.nan)
    infinite = np.isinf(scores)
    if infinite.any():
        first = df.index[infinite][:5]
        raise JudgmentsTableError(
            f"{int(infinite.sum())} rows have an infinite score ({scores[infinite][0]:g}; first rows: {list(first)}); "
            "a score is a finite number: make the row unscored with its reason, or fix the value")
    empty = ~unscored & df["score"].isna() & df["winner"].isna() & df["verdict"].isna()
    if empty.any():
        raise JudgmentsTableError(
            f"{int(empty.sum())} rows have status 'ok' but no score, winner or verdict (a NaN score counts as none; "
            f"first rows: {list(df.index[empty][:5])}); give them a value, or an unscored status and a reason")
    no_reason = unscored & df["unscored_reason"].isna()
    if no_reason.any():
        raise JudgmentsTableError(
            f"{int(no_reason.sum())} unscored rows have no unscored_reason (first: {list(df.index[no_reason][:5])})"
        )
    dup = _duplicated_keys(df, KEY_COLUMNS)
    if dup.any():
        raise JudgmentsTableError(
            f"{int(dup.sum())} rows share a key {KEY_COLUMNS} (first: {list(df.index[dup][:5])}); rows must be unique"
        )
    return df


def _duplicated_keys(df: pd.DataFrame, columns: Iterable[str]) -> pd.Series:
    """Rows whose values in ``columns`` equal another row's (every such row marked; NA equals NA): what
    ``df.duplicated(subset=columns, keep=False)`` gives, in a fraction of its memory.

    pandas factorizes every key column first and keeps all the codes (eight int64 arrays, 640 MB at 10^7 rows)
    before combining them, the peak of a 10^7-row import. Here each column's codes are folded into one running
    key and dropped; the key is renumbered densely whenever the next fold could overflow int64.
    """
    n = len(df)
    key = np.zeros(n, dtype=np.int64)
    size = 1  # the key's values are in range(size)
    for col in columns:
        codes, uniques = pd.factorize(df[col], use_na_sentinel=False)  # NA is a value of its own, as in duplicated
        width = max(len(uniques), 1)
        if size > (2**62) // width:  # key * width + codes could overflow: renumber the key 0..distinct-1 first
            key, distinct = pd.factorize(key)
            size = max(len(distinct), 1)
        key = key * width + codes
        size *= width
        del codes
    if size > 4 * n:  # sparse: renumber so the count below needs O(n), not O(size), memory
        key, distinct = pd.factorize(key)
        size = max(len(distinct), 1)
    counts = np.bincount(key, minlength=size)
    return pd.Series(counts[key] > 1, index=df.index)


def save(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Validate and write a table atomically: Parquet by default, JSONL when the suffix is .jsonl."""
    df = validate(df)
    path = Path(path)
    try:
        return _write(df, path)
    except OSError as exc:  # a folder in the way, a parent under a file, no space, no permission: one sentence
        raise JudgmentsFileError(f"cannot write the judgments table {path}: {exc.strerror or exc}") from None


def _write(df: pd.DataFrame, path: Path) -> Path:
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "it is a folder, not a file")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        if path.suffix == ".jsonl":
            _write_jsonl(df, tmp)
        else:
            df.to_parquet(tmp, index=False)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a results file should be readable like any other
        _fsync(tmp)  # on disk before the rename: a crash never leaves the new name on an empty file
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def _jsonl_value(value: Any) -> Any:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, pd.Timestamp | datetime.datetime):
        return pd.Timestamp(value).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ") if value.tzinfo else \
            pd.Timestamp(value).strftime("%Y-%m-%dT%H:%M:%S.%f")
    return value


def _write_jsonl(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """One JSON object per row. Floats are written as Python writes them (the shortest text that reads back
    as the same number; pandas' writer keeps 15 digits, so 1.8000000000000003 came back as 1.8), dates in
    ISO form at microsecond precision: a lossless round trip with :func:`load`."""
    columns = list(df.columns)
    with open(path, "w", encoding="utf-8") as f:
        for row in df.itertuples(index=False, name=None):
            record = {c: _jsonl_value(v) for c, v in zip(columns, row, strict=True)}
            line = json.dumps(record, ensure_ascii=False, default=str)
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate cannot be written as UTF-8: \u-escaped, it reads back
                line = json.dumps(record, ensure_ascii=True, default=str)
            f.write(line + "\n")


def _fsync(path: str | os.PathLike[str]) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# the table files a run folder holds (judgelab run / probe write both), in the order load() prefers them
_RUN_FOLDER_TABLES: tuple[str, ...] = ("judgments.parquet", "judgments.jsonl")
# a distributed run's folder (judgelab.distributed.RayExecutor): one Parquet file per finished block, read in order
PARTITIONS_DIR = "partitions"


def _read_partitions(folder: Path) -> pd.DataFrame | None:
    """The block files of a distributed run's folder as one table (block order), or None when there are none."""
    parts = sorted(p for p in (folder / PARTITIONS_DIR).glob("block-*.parquet") if p.is_file())
    if not parts:
        return None
    frames = []
    for part in parts:
        try:
            frames.append(pd.read_parquet(part))
        except OSError as exc:
            raise JudgmentsFileError(f"cannot read the partition {part}: {exc.strerror or exc}") from None
        except (ValueError, TypeError) as exc:
            raise JudgmentsFileError(f"the partition {part} is not a Parquet file "
                                     f"({' '.join(str(exc).split())[:160]})") from None
    table = pd.concat(frames, ignore_index=True)
    try:
        return validate(table)
    except JudgmentsTableError as exc:
        raise JudgmentsTableError(f"{folder / PARTITIONS_DIR}: {exc}") from exc


def load(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a table written by :func:`save` (Parquet or JSONL) and validate it.

    ``path`` may also be a run folder (``judgelab run --out``): its ``judgments.parquet``, else its
    ``judgments.jsonl``, else the partitions a distributed run wrote (``partitions/block-*.parquet``, read
    as one table in block order).
    """
    path = Path(path)
    if path.is_dir():
        found = [path / name for name in _RUN_FOLDER_TABLES if (path / name).is_file()]
        if not found and (path / PARTITIONS_DIR).is_dir():
            parts = _read_partitions(path)
            if parts is not None:
                return parts
        if not found:
            raise JudgmentsFileNotFoundError(
                f"folder {path} holds no judgments table ({' or '.join(_RUN_FOLDER_TABLES)}); "
                "give a run folder or a table file")
        path = found[0]
    if not path.exists():
        raise JudgmentsFileNotFoundError(f"judgments file not found: {path}")
    try:
        if path.suffix == ".jsonl":
            # precise_float: pandas' fast float reader rounds the last digit; every float must read back as written
            df = pd.read_json(path, orient="records", lines=True, dtype=False, precise_float=True)
        else:
            df = pd.read_parquet(path)
    except OSError as exc:
        raise JudgmentsFileError(f"cannot read the judgments file {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError) as exc:  # not Parquet / not JSON lines (pyarrow's errors are ValueErrors)
        kind = "JSON lines" if path.suffix == ".jsonl" else "a Parquet file"
        raise JudgmentsFileError(f"the judgments file {path} is not {kind} ({' '.join(str(exc).split())[:160]})") \
            from None
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


def fill_unscored(
    table: pd.DataFrame,
    value: Any,
    *,
    column: str = "score",
    judge: str | Iterable[str] | None = None,
    statuses: Iterable[str] = (PARSE_ERROR,),
) -> pd.DataFrame:
    """A publisher's convention, made explicit: unscored rows counted as ``value`` instead of left out.

    G-Eval's script scores an unreadable answer 0 (``fill_unscored(t, 0)``); OpenQA-eval counts a
    reply that is neither yes nor no as "no" (``fill_unscored(t, "no", column="verdict", judge="gpt-4")``).
    Rows whose status is in ``statuses`` (default: parse errors only; a failed call never answered)
    and whose judge is ``judge`` (default: every judge) get ``column = value`` and status "ok". They
    stay countable: ``unscored_reason`` keeps "counted as <value> (was <status>: <reason>)" and
    ``detail`` gains ``unscored_as`` and ``original_status``. The table is returned validated.
    """
    if column not in VALUE_COLUMNS:
        raise JudgmentsTableError(f"column must be one of {VALUE_COLUMNS}, not {column!r}")
    statuses = list(statuses)
    unknown = [s for s in statuses if s not in UNSCORED_STATUSES]
    if unknown:
        raise JudgmentsTableError(f"statuses {unknown} are not unscored statuses; use some of {list(UNSCORED_STATUSES)}")
    if column == "score" and not isinstance(value, int | float | np.number):
        raise JudgmentsTableError(f"a score must be a number; got {value!r}")
    df = validate(table)
    mask = df["status"].isin(statuses)
    if judge is not None:
        mask &= df["judge"].isin([judge] if isinstance(judge, str) else list(judge))
    if not mask.any():
        return df
    df[column] = df[column].astype(object)
    df.loc[mask, column] = value
    df.loc[mask, "unscored_reason"] = [f"counted as {value!r} (was {st}: {why})" for st, why in
                                       zip(df.loc[mask, "status"], df.loc[mask, "unscored_reason"], strict=True)]
    df.loc[mask, "detail"] = [_detail_to_json({**detail({"detail": d}), "unscored_as": value, "original_status": st})
                              for d, st in zip(df.loc[mask, "detail"], df.loc[mask, "status"], strict=True)]
    df.loc[mask, "status"] = OK
    return validate(df)


def aggregate_repeats(
    table: pd.DataFrame,
    *,
    how: str = "mean",
    unscored_as: float | None = None,
    statuses: Iterable[str] = (PARSE_ERROR,),
) -> pd.DataFrame:
    """One row per key with the ``how`` ("mean" or "median") of the scores of its repeats.

    The key is every :data:`KEY_COLUMNS` column except ``repeat`` (the result's repeat is NA).
    Unscored repeats are left out of the mean and counted, unless ``unscored_as`` is given: then
    the unscored repeats whose status is in ``statuses`` count as that score (G-Eval averages 20
    samples with an unreadable one scored 0: ``aggregate_repeats(t, unscored_as=0)``). A key with
    no scored repeat becomes one unscored row ("all N repeats unscored"). Extra columns
    ``n_repeats`` (rows per key), ``n_scored`` (repeats averaged), ``n_unscored_excluded`` and
    ``n_counted_as`` make every choice countable; they are also written into ``detail``.
    Winners and verdicts are not averaged: rows without a score must be unscored.
    """
    if how not in ("mean", "median"):
        raise JudgmentsTableError(f"how must be 'mean' or 'median', not {how!r}")
    df = validate(table)
    labelled = is_scored(df) & df["score"].isna()
    if labelled.any():
        raise JudgmentsTableError(f"{int(labelled.sum())} scored rows carry no score (winner or verdict rows, first: "
                                  f"{list(df.index[labelled][:5])}); aggregate_repeats averages scores only")
    counted = np.zeros(len(df), dtype=bool)
    if unscored_as is not None:
        before = ~is_scored(df)
        df = fill_unscored(df, unscored_as, statuses=statuses)
        counted = (before & is_scored(df)).to_numpy()
    keys = [c for c in KEY_COLUMNS if c != "repeat"]
    work = df.assign(_scored=is_scored(df).to_numpy(), _counted=counted,
                     _value=pd.to_numeric(df["score"], errors="coerce").astype(float),
                     _unscored_status=df["status"].astype(object).where(~is_scored(df), None))
    # sort=False: groups in order of first appearance, the order of head(1); every aggregate below is positional
    grouped = work.groupby(keys, dropna=False, sort=False)
    out = grouped.head(1).drop(columns=["_scored", "_counted", "_value", "_unscored_status"]).reset_index(drop=True)
    per_call = ["repeat", "seed", "prompt_hash", "call_id", "raw_output", "reasoning", "confidence", "logprob_score",
                "valid_prob_mass", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd", "latency_s", "cached", "attempts",
                "system_fingerprint", "created_at"]
    for col in per_call:
        out[col] = pd.NA
    out["n_repeats"] = grouped.size().to_numpy()
    out["n_scored"] = grouped["_scored"].sum().to_numpy().astype(int)
    out["n_counted_as"] = grouped["_counted"].sum().to_numpy().astype(int)
    out["n_unscored_excluded"] = out["n_repeats"] - out["n_scored"]
    none = (out["n_scored"] == 0).to_numpy()
    out["score"] = np.where(none, np.nan, grouped["_value"].agg(how).to_numpy(dtype=float))
    out["status"] = np.where(none, grouped["_unscored_status"].first().to_numpy(dtype=object), OK)
    out["unscored_reason"] = [f"all {n} repeats unscored" if empty else None
                              for n, empty in zip(out["n_repeats"], none, strict=True)]
    out["detail"] = [_detail_to_json({"aggregate": f"{how} of repeats", "n_repeats": int(r), "n_scored": int(k),
                                      "n_counted_as": int(c), "unscored_as": unscored_as})
                     for r, k, c in zip(out["n_repeats"], out["n_scored"], out["n_counted_as"], strict=True)]
    return validate(make_table(out))


# ---------------------------------------------------------------- several tables, several raters
# the columns that say which rating a row is, apart from the run that made it
_RATING_KEY: tuple[str, ...] = tuple(c for c in KEY_COLUMNS if c != "run_id")
_VALUE_SIGNATURE: tuple[str, ...] = ("status", *VALUE_COLUMNS)
TIE_POLICIES: tuple[str, ...] = ("refuse", "unscored", "label", "first_rater")


@user_errors
def combine(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One judgments table from several (separate loads or runs), with ONE copy of the rows they share.

    Loading two judges of one data set separately gives two copies of its gold (or human) rows, which a
    statistic would see as duplicate ratings. A row of a later table whose rating key (item_id, judge,
    criterion, side, condition, repeat: every key column but ``run_id``) also occurs in an earlier table is
    dropped when its status and value (score, winner, verdict) are the same there: the earliest table's row
    is kept. The same key with different values is a conflict and raises :class:`JudgmentsTableError`
    naming it (two different raters under one name: give them distinct ``judge`` names first). Rows that
    occur only in one table are kept as they are, whatever their run. Returns the validated table.
    """
    tables = list(tables)
    strays = [type(t).__name__ for t in tables if not isinstance(t, pd.DataFrame)]
    if strays:
        raise JudgmentsTableError(f"combine takes judgments tables (DataFrames), got {strays[0]}")
    frames = [validate(t) for t in tables]
    if not frames:
        raise JudgmentsTableError("combine needs at least one judgments table")
    df = pd.concat([f.assign(_table=i) for i, f in enumerate(frames)], ignore_index=True)
    key_id = df.groupby(list(_RATING_KEY), dropna=False, sort=False).ngroup().to_numpy()
    tables_per_key = pd.Series(df["_table"].to_numpy()).groupby(key_id).transform("nunique").to_numpy()
    shared = tables_per_key > 1
    if shared.any():
        signature = df.loc[shared, list(_VALUE_SIGNATURE)].astype(str)
        values_per_key = signature.groupby(key_id[shared]).transform("nunique").max(axis=1)
        conflict = values_per_key[values_per_key > 1]
        if len(conflict):
            rows = df.loc[conflict.index]
            first = rows.iloc[0]
            same = rows[key_id[conflict.index] == key_id[conflict.index[0]]]
            shown = "; ".join(f"table {int(r['_table']) + 1}: {_shown_value(r)}" for _, r in same.iterrows())
            n_keys = len(set(key_id[conflict.index]))
            raise JudgmentsTableError(
                f"the tables disagree on {n_keys} rating(s) they share, e.g. judge {first['judge']!r} on item "
                f"{first['item_id']!r} (criterion {first['criterion']!r}, condition {first['condition']!r}) -- {shown}; "
                "if these are different raters (another rubric, prompt or run), give them distinct judge names "
                "(table.assign(judge=...)) before combining, else drop the wrong rows")
        first_table = pd.Series(df["_table"].to_numpy()).groupby(key_id).transform("min").to_numpy()
        df = df[~shared | (df["_table"].to_numpy() == first_table)]
    return validate(df.drop(columns="_table").reset_index(drop=True))


def _shown_value(row: pd.Series) -> str:
    values = [f"{c} {row[c]!r}" for c in VALUE_COLUMNS if pd.notna(row[c])]
    return ", ".join(values) if row["status"] == OK else f"unscored ({row['status']})"


@user_errors
def majority(
    table: pd.DataFrame,
    raters: Iterable[str],
    *,
    name: str = "majority",
    ties: str = "refuse",
    tie_label: Any = None,
    value: str | None = None,
    quorum: int | None = None,
) -> pd.DataFrame:
    """The table with one more rater, ``name``: the most common label of ``raters`` on each key (plurality).

    For each item x criterion x side x condition x repeat that any of ``raters`` rated, the new row carries
    the value most of the raters' scored rows give (``value``: "winner", "verdict" or "score"; by default the
    one of them the raters' rows use). Unscored rows do not vote; a key with fewer than ``quorum`` votes
    (default: half the raters, rounded up) becomes an unscored row (status "missing") that says how many
    raters scored it. When several values share the most votes, ``ties`` decides -- a named policy:

    ``"refuse"`` (default)
        raise :class:`JudgmentsTableError` naming the tied keys, so the choice is made on purpose;
    ``"unscored"``
        the key's row is unscored (status "missing", reason "no majority: ...");
    ``"label"``
        the row carries ``tie_label`` (default "TIE" for winners, as annotators who split count as a tie);
    ``"first_rater"``
        the vote of the earliest rater in ``raters`` among the tied values.

    Each new row's ``detail`` holds the votes, the counts, whether a strict majority (more than half the
    votes) existed and whether a tie was settled. Columns outside the schema (``system``, ``document_id``
    ...) are copied from the key's first row, so clustering still works. Returns the validated table.
    """
    raters = list(dict.fromkeys([raters] if isinstance(raters, str) else raters))
    if ties not in TIE_POLICIES:
        raise JudgmentsTableError(f"ties must be one of {list(TIE_POLICIES)}, not {ties!r}")
    df = validate(table)
    if len(raters) < 2:
        raise JudgmentsTableError(f"a majority needs at least two raters, got {raters}")
    judges = set(df["judge"].astype(str))
    absent = [r for r in raters if r not in judges]
    if absent:
        shown = ", ".join(map(repr, sorted(judges)[:12]))
        raise JudgmentsTableError(f"rater(s) {absent} have no rows in the table; its judges: {shown}")
    if name in judges:
        raise JudgmentsTableError(f"the table already has rows of judge {name!r}; pass another name=")
    rows = df[df["judge"].isin(raters)]
    ok = is_scored(rows)
    value = _majority_value_column(rows[ok], value)
    if ties == "label" and tie_label is None:
        if value != "winner":
            raise JudgmentsTableError(f"ties='label' needs tie_label= (the {value} a split vote gets)")
        tie_label = "TIE"
    quorum = quorum if quorum is not None else -(-len(raters) // 2)
    if not 1 <= quorum <= len(raters):
        raise JudgmentsTableError(f"quorum must be between 1 and {len(raters)}, got {quorum}")
    keys = [c for c in _RATING_KEY if c != "judge"]
    dup = rows[ok].duplicated(subset=[*keys, "judge"], keep=False)
    if dup.any():
        first = rows[ok][dup].iloc[0]
        raise JudgmentsTableError(
            f"rater {first['judge']!r} has several scored rows for item {first['item_id']!r} (criterion "
            f"{first['criterion']!r}, condition {first['condition']!r}); a majority takes one vote per rater: "
            "filter or merge them first (judgments.aggregate_repeats, or combine for copies from separate loads)")
    extra = [c for c in df.columns if c not in SCHEMA]
    run_id = "majority-" + hashlib.sha1("|".join(sorted(set(rows["run_id"].astype(str))) + raters)
                                        .encode()).hexdigest()[:12]
    rubrics = list(dict.fromkeys(rows["rubric"].astype(str)))
    # one pass over plain arrays, keys in order of first appearance and raters in the order given
    rows = rows.assign(_key=rows.groupby(keys, dropna=False, sort=False).ngroup().to_numpy(),
                       _rater=rows["judge"].map({r: i for i, r in enumerate(raters)}).to_numpy())
    rows = rows.sort_values(["_key", "_rater"], kind="stable")
    key_of = rows["_key"].to_numpy()
    judge_of = rows["judge"].astype(str).to_numpy()
    vote_of = rows[value].astype(object).where(is_scored(rows) & rows[value].notna(), None).to_numpy()
    starts = np.flatnonzero(np.r_[True, key_of[1:] != key_of[:-1]])
    heads = rows.iloc[starts][[*keys, *extra]].astype(object).to_dict("records")
    shared = {"run_id": run_id, "judge": name, "rubric": rubrics[0] if len(rubrics) == 1 else "majority"}
    out, tied_keys = [], []
    for head, lo, hi in zip(heads, starts, [*starts[1:], len(key_of)], strict=True):
        base = {**head, **shared}
        votes = {j: _plain(v) for j, v in zip(judge_of[lo:hi], vote_of[lo:hi], strict=True) if v is not None}
        counts = Counter(votes.values())
        detail_: dict[str, Any] = {"rule": "plurality", "raters": raters, "votes": votes,
                                   "counts": {str(k): c for k, c in counts.items()}, "ties": ties}
        if len(votes) < quorum:
            reason = f"only {len(votes)} of {len(raters)} raters scored this (quorum {quorum})"
            out.append({**base, "status": MISSING, "unscored_reason": reason, "detail": detail_})
            continue
        top = max(counts.values())
        leaders = [v for v, c in counts.items() if c == top]
        detail_["strict_majority"] = top * 2 > len(votes)
        detail_["tie_settled"] = len(leaders) > 1
        if len(leaders) == 1:
            picked = leaders[0]
        elif ties == "refuse":
            tied_keys.append((head["item_id"], detail_["counts"]))
            continue
        elif ties == "unscored":
            shown = ", ".join(f"{k!r} x{c}" for k, c in detail_["counts"].items())
            out.append({**base, "status": MISSING, "unscored_reason": f"no majority: {shown}", "detail": detail_})
            continue
        elif ties == "label":
            picked = tie_label
        else:
            picked = next(v for v in votes.values() if v in leaders)
        out.append({**base, "status": OK, value: picked, "detail": detail_})
    if tied_keys:
        item, split = tied_keys[0]
        shown = ", ".join(f"{k!r} x{c}" for k, c in split.items())
        raise JudgmentsTableError(
            f"{len(tied_keys)} key(s) have no single most common {value} among {raters} (e.g. item {item!r}: "
            f"{shown}); choose ties='unscored', 'label' (tie_label=...) or 'first_rater'")
    added = make_table(out) if out else empty_table()
    return validate(pd.concat([df, added], ignore_index=True))


def _majority_value_column(scored_rows: pd.DataFrame, value: str | None) -> str:
    if value is not None:
        if value not in VALUE_COLUMNS:
            raise JudgmentsTableError(f"value must be one of {list(VALUE_COLUMNS)}, not {value!r}")
        return value
    used = [c for c in VALUE_COLUMNS if scored_rows[c].notna().any()]
    if len(used) != 1:
        what = "none of" if not used else "several of"
        raise JudgmentsTableError(f"the raters' scored rows use {what} {list(VALUE_COLUMNS)} ({used}); "
                                  "pass value='winner', 'verdict' or 'score'")
    return used[0]


def _plain(v: Any) -> Any:
    """A vote as a plain Python value (JSON-able, and equal across numpy/pandas scalar types)."""
    return v.item() if isinstance(v, np.generic) else v


def distinct_text(values: pd.Series) -> set[str]:
    """``set(values.dropna().astype(str))``, converting each distinct value once instead of every row (a
    column of ten million judge names holds a handful). Values that are not all strings keep the row-wise
    conversion, where 1 and 1.0 are one distinct value but two strings."""
    present = values.dropna()
    distinct = present.unique()
    if pd.api.types.infer_dtype(distinct, skipna=False) in ("string", "empty"):
        return set(distinct)
    return set(present.astype(str))
