"""The rule every statistic and every probe's analysis follows: the question is fully determined by the arguments.

A judgments table can hold many questions at once -- several criteria, conditions (presentation orders,
perturbations), repeats, rubrics and rubric versions, the two sides of a pairwise item, and raters of
different roles (model judges, human annotators, gold labels, panels). A number computed over all of them
at once answers none of them. So, on a judgments table:

1. **One design cell.** Over the rows a statistic reads, each *design column* -- ``criterion``, ``side``,
   ``condition``, ``repeat``, ``rubric``, ``rubric_version`` -- holds one value, unless

   - ``by=`` names the column: one result row per value, the group columns leading the row; or
   - for ``condition``, ``repeat``, ``rubric`` and ``rubric_version`` only, ``aggregate=`` says how to merge
     a rater's several rows of one key ("mean", "median", "first").

   ``criterion`` and ``side`` are part of the key raters are paired on, so several values would be pooled
   as if they were more items: they are checked over the compared raters together. The other columns are
   checked per rater (a judge's "swapped" verdicts may be compared with gold rows recorded under
   "original"). When the variables are columns of a judgments table rather than judges, ``judge`` is a
   design column too (several judges would be pooled). "The rows a statistic reads" are the compared
   raters' rows that carry the compared value or are unscored (a pairwise rubric's whole-pair winner rows
   do not take part in a statistic of its per-side scores).
   Otherwise the call raises :class:`AmbiguousQuestionError`, one sentence naming the column, its values
   and the fix ("this table has 4 criteria (coherence, consistency, ...) for judges 'gpt', 'human': pass
   by='criterion' for one row per criterion, or filter the table to one"). To pool on purpose, pair the
   raters first (:func:`judgelab.stats.pair_judges`) and pass the paired columns: the pooling is then the
   caller's, visible in the code.

2. **Named raters.** A statistic over several raters (Fleiss' kappa, Krippendorff's alpha, the ICC) takes
   ``raters=``. Without it the raters are every rater of the table except reference labels and
   aggregates, *when that is unambiguous*:

   - reference labels (``"gold"``, ``"human"``: one label per item, often a consensus) and aggregates of
     other raters (``"panel:<rule>"``, ``"majority"``, ``"majority:<...>"``) are never included by default;
   - the remaining raters must be all human annotators (``"human:<name>"``) or all model judges (any other
     name); a table with both refuses and asks for ``raters=``; so does a table with fewer than two.

   The result names the raters it used (its ``raters`` column), and the note says which were left out.

3. **Inputs present.** A metric whose inputs are absent (a presentation order with no rows, a condition
   deleted from the table) is never computed: it is NaN with a note saying what is missing, or the call
   refuses.

4. **The value column named.** A judgments table keeps a rater's value in ``score`` (numbers), ``winner``
   (pairwise "A"/"B"/"TIE") or ``verdict`` (other labels). When the compared raters have no value in the
   column a statistic reads (``value="score"`` by default), the error names the column that holds them
   ("these raters' labels are in 'verdict': pass value='verdict'"); ``value="label"`` is explained the same way.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.judgments import VALUE_COLUMNS, is_scored
from judgelab.stats.pairing import AmbiguousQuestionError, DuplicateRatingsError, StatsInputError

__all__ = ["DESIGN_COLUMNS", "KEY_DESIGN_COLUMNS", "REFERENCE_RATERS", "AmbiguousQuestionError", "RaterRole",
           "check_design", "check_value_column", "default_raters", "describe_values", "rater_role", "rows_read"]

DESIGN_COLUMNS: tuple[str, ...] = ("criterion", "side", "condition", "repeat", "rubric", "rubric_version", "turn")
# part of the pairing key: checked over all raters (turn: the judged turn of a conversation, NA for whole items)
KEY_DESIGN_COLUMNS: tuple[str, ...] = ("criterion", "side", "turn")
MERGEABLE_COLUMNS: tuple[str, ...] = ("condition", "repeat", "rubric", "rubric_version")  # aggregate= merges them
REFERENCE_RATERS: tuple[str, ...] = ("gold", "human")
_PLURAL = {"criterion": "criteria", "side": "sides", "condition": "conditions", "repeat": "repeats",
           "rubric": "rubrics", "rubric_version": "rubric versions", "judge": "judges",
           "turn": "turns"}

RaterRole = Literal["reference", "annotator", "aggregate", "model"]


def rater_role(name: Any) -> RaterRole:
    """A rater's role by its name: "reference" (gold, human), "annotator" (human:<name>), "aggregate"
    (panel:<rule>, majority), else "model"."""
    text = str(name)
    if text in REFERENCE_RATERS:
        return "reference"
    if text.startswith("human:"):
        return "annotator"
    if text.startswith("panel:") or text == "majority" or text.startswith("majority:"):
        return "aggregate"
    return "model"


def describe_values(values: Iterable[Any], limit: int = 4) -> str:
    """'coherence, consistency, fluency, ...' -- the first few distinct values, missing shown as <NA>."""
    shown = []
    for v in values:
        shown.append("<NA>" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v))
    shown = sorted(dict.fromkeys(shown))
    return ", ".join(shown[:limit]) + (", ..." if len(shown) > limit else "")


def _names(names: Sequence[Any]) -> str:
    return ", ".join(repr(n) if isinstance(n, str) else str(n) for n in names)


def default_raters(present: Iterable[Any], *, statistic: str = "this statistic") -> tuple[list[Any], str]:
    """The raters a multi-rater statistic uses when ``raters=`` is not given, and a note on those left out.

    Raises :class:`AmbiguousQuestionError` when human annotators and model judges are both present, or
    when fewer than two raters remain (see the module docstring, rule 2).
    """
    names = list(dict.fromkeys(v for v in present if v is not None and not (not isinstance(v, str) and pd.isna(v))))
    roles: dict[str, list[Any]] = {"reference": [], "annotator": [], "aggregate": [], "model": []}
    for name in names:
        roles[rater_role(name)].append(name)
    left_out = roles["reference"] + roles["aggregate"]
    if roles["annotator"] and roles["model"]:
        raise AmbiguousQuestionError(
            f"this table has {len(roles['annotator'])} human annotator(s) ({_names(roles['annotator'][:4])}) and "
            f"{len(roles['model'])} model judge(s) ({_names(roles['model'][:4])})"
            + (f", and reference or aggregate rows ({_names(left_out[:4])})" if left_out else "")
            + f": pass raters=[...] to say whose agreement {statistic} measures, e.g. "
            f"raters={roles['annotator'][:3]!r}")
    chosen = roles["annotator"] or roles["model"]
    if len(chosen) < 2:
        raise AmbiguousQuestionError(
            f"{statistic} needs at least two raters, and this table has {len(chosen)} besides reference labels and "
            f"aggregates (its raters: {_names(names[:8]) or 'none'}): pass raters=[...] to name them")
    note = (f"reference/aggregate rater(s) {_names(left_out)} left out (not raters of the same kind; pass raters= to "
            "include them)") if left_out else ""
    return chosen, note


def rows_read(rows: pd.DataFrame, value: str | None) -> pd.DataFrame:
    """The rows a statistic of ``value`` reads: unscored rows and scored rows that carry the value.

    A scored row without the value (a pairwise rubric's whole-pair winner row, when per-side scores are
    compared) takes no part, so its design cell does not count.
    """
    if value is None or value not in rows.columns or "status" not in rows.columns:
        return rows
    return rows[~is_scored(rows) | rows[value].notna()]


def check_design(
    rows: pd.DataFrame,
    *,
    rater: str | None = "judge",
    split: Collection[str] = (),
    aggregate: str | None = None,
    ignore: Collection[str] = (),
    by_hint: Sequence[str] | None = None,
    fix: str | None = None,
    statistic: str = "this statistic",
) -> None:
    """Raise :class:`AmbiguousQuestionError` unless each design column holds one value over ``rows`` (rule 1).

    ``rows``: the rows the statistic reads (of the compared raters). ``rater``: the rater column (checked
    per rater for the mergeable columns); None when the variables are columns, and then ``judge`` is a
    design column too. ``split``: columns a ``by=`` (or a per-criterion grouping) already splits on.
    ``aggregate``: set when the caller merges a rater's rows of one key. ``ignore``: columns that play
    another role here (the item or rater column of a long frame). ``by_hint``: the caller's current
    ``by`` columns, so the fix names the whole grouping (``by=('run_id', 'judge', 'criterion')``).
    ``fix``: the fix to name instead (a function without ``by=``, e.g. a probe's analysis).
    """
    if rows.empty:
        return
    skip = set(split) | set(ignore)
    key_cols = [c for c in KEY_DESIGN_COLUMNS if c in rows.columns and c not in skip]
    if rater is None:
        key_cols = (["judge"] if "judge" in rows.columns and "judge" not in skip else []) + key_cols
    merge_cols = [c for c in MERGEABLE_COLUMNS if c in rows.columns and c not in skip]
    for col in key_cols:
        values = _distinct(rows[col])
        if len(values) > 1:
            who = "" if rater is None else _raters_phrase(rows, rater)
            raise AmbiguousQuestionError(_message(col, values, who, mergeable=False, by_hint=by_hint, fix=fix))
    if aggregate is not None or not merge_cols:
        return
    if rater is None:
        for col in merge_cols:
            values = _distinct(rows[col])
            if len(values) > 1:
                raise AmbiguousQuestionError(_message(col, values, "", mergeable=False, by_hint=by_hint, fix=fix))
        return
    # distinct values per rater, counted on integer codes (NA a value of its own): converting these columns
    # of a ten-million-row table to Python objects cost seconds
    rater_codes, rater_names = pd.factorize(rows[rater], use_na_sentinel=False)
    codes = pd.DataFrame({c: pd.factorize(rows[c], use_na_sentinel=False)[0] for c in merge_cols})
    counts = codes.groupby(rater_codes, sort=False).nunique()
    for col in merge_cols:
        several = counts.index[counts[col].to_numpy() > 1]
        if len(several):
            name = np.asarray(rater_names, dtype=object)[several[0]]
            values = pd.unique(rows.loc[rows[rater].astype(object) == name, col].astype(object))
            who = f" for {rater} {name!r}" if isinstance(name, str) else f" for {rater} {name}"
            mine = rows[rows[rater].astype(object) == name]
            if _copies_across(mine, col):
                raise DuplicateRatingsError(
                    f"{rater} {name!r} has the same ratings under {len(values)} {_PLURAL.get(col, col + ' values')} "
                    f"({describe_values(values)}): copies from separate loads or runs; put the tables together "
                    "with judgelab.judgments.combine([...]), which keeps one copy of identical rows")
            raise AmbiguousQuestionError(_message(col, values, who, mergeable=fix is None, fix=fix))


def _copies_across(rows: pd.DataFrame, col: str) -> bool:
    """True when ``rows`` (one rater's) hold each rating once per value of ``col``, identical apart from ``col``
    and ``run_id``: the same rows loaded twice, not two designs."""
    keys = [c for c in ("item_id", "criterion", "side", "condition", "repeat") if c in rows.columns]
    if col not in ("rubric", "run_id") or not keys:  # provenance columns only: a rating that is a copy
        return False
    values = [c for c in ("status", *VALUE_COLUMNS) if c in rows.columns]
    body = rows[keys + values + [col]].astype(object).astype(str)
    n_cols = body[col].nunique()
    per_key = body.groupby(keys, sort=False, dropna=False)
    # each rating key: one row per value of col, all with one content
    return n_cols > 1 and bool((per_key.size() == n_cols).all()) and bool((per_key[col].nunique() == n_cols).all()) \
        and bool((body.drop(columns=col).drop_duplicates().groupby(keys, sort=False, dropna=False).size() == 1).all())


def _distinct(values: pd.Series) -> np.ndarray:
    """``pd.unique(values.astype(object))``, deduplicating before the conversion to Python objects."""
    return pd.unique(np.asarray(values.unique(), dtype=object))


def _raters_phrase(rows: pd.DataFrame, rater: str) -> str:
    names = list(_distinct(rows[rater]))
    plural = _PLURAL.get(rater, f"{rater}s") if len(names) > 1 else rater
    return f" for {plural} {_names(names[:4])}" + (", ..." if len(names) > 4 else "")


def _message(col: str, values: Sequence[Any], who: str, *, mergeable: bool,
             by_hint: Sequence[str] | None = None, fix: str | None = None) -> str:
    plural = _PLURAL.get(col, f"{col} values")
    orders = col == "condition" and {"original", "swapped"} <= {str(v) for v in values}
    also = " (two pairwise judges over both orders: stats.compare_pairwise_judges)" if orders else ""
    if fix is not None:
        return f"this table has {len(values)} {plural} ({describe_values(values)}){who}: {fix}{also}"
    singular = col.replace("_", " ")
    by = repr(col) if not by_hint else repr((*by_hint, col))
    fix = (f"pass by={by} for one row per {singular}, filter the table to one, or merge a rater's rows of one "
           "key with aggregate='mean' | 'median' | 'first'" if mergeable else
           f"pass by={by} for one row per {singular}, or filter the table to one")
    return f"this table has {len(values)} {plural} ({describe_values(values)}){who}: {fix}{also}"


def check_value_column(rows: pd.DataFrame, value: str, *, who: str, numeric: bool = False) -> None:
    """Raise when ``value`` is not a column of the judgments table, or none of ``rows``' scored rows has it,
    naming the column that does hold these raters' values (rule 4). ``who``: the raters, for the message."""
    scored = rows[is_scored(rows)] if "status" in rows.columns else rows
    if value in rows.columns and (scored.empty or scored[value].notna().any()):
        return
    order = ("verdict", "winner", "score") if value == "label" else VALUE_COLUMNS
    holding = [c for c in order if c in scored.columns and c != value and scored[c].notna().any()]
    kind = "labels" if holding and holding[0] != "score" else "values"
    where = f"their {kind} are in {holding[0]!r}: pass value={holding[0]!r}" if holding else \
        f"they have no scored value in any of {', '.join(map(repr, VALUE_COLUMNS))}"
    if value not in rows.columns:
        label = " (from_frame's label= column is stored in 'verdict')" if value == "label" else ""
        raise StatsInputError(
            f"value={value!r} is not a column of this judgments table, which keeps a rater's value in 'score' "
            f"(numbers), 'winner' (pairwise A/B/TIE) or 'verdict' (other labels){label}; for {who} {where}")
    raise StatsInputError(f"no scored row of {who} has a {value!r} value in this table; {where}")
