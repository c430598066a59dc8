"""Sections of the HTML report that read the judgments table as a researcher does: scores binned when they are
fractional (a mean of three experts is 1, 1.33, 1.67 ...), and each judge's accuracy against the gold rows when the
table has them.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.viz.style import format_number, frame_html

__all__ = ["COUNTED_COLUMNS", "GOLD_JUDGES", "MAX_SCORE_LEVELS", "accuracy_against_gold", "accuracy_html",
           "counted_rows", "fold_wide", "gold_judge", "half_point_bins", "png_img", "rows_where", "score_bins",
           "score_labels"]

GOLD_JUDGES = ("gold", "human")  # the names the loaders and from_frame give the reference rows
MAX_SCORE_LEVELS = 12  # more distinct scores than this (or any fractional one): scores are binned
_BINS = 8
# every column a count, figure or accuracy of the report reads (the rest is shown only in the judgments list)
COUNTED_COLUMNS = ("item_id", "judge", "condition", "criterion", "side", "status", "unscored_reason", "score",
                   "winner", "verdict")


def counted_rows(table: pd.DataFrame, scored: bool = True) -> pd.DataFrame:
    """The scored rows (``scored=False``: the unscored ones) of only the :data:`COUNTED_COLUMNS` the table has: a
    row filter of the whole table copies every column (raw outputs, tokens, timestamps: GBs at 10^7 rows)."""
    narrow = table[[c for c in COUNTED_COLUMNS if c in table.columns]]
    keep = judgments.is_scored(narrow)
    return rows_where(narrow, keep if scored else ~keep)


def rows_where(frame: pd.DataFrame, keep: pd.Series) -> pd.DataFrame:
    """``frame[keep]``, but ``frame`` itself when every row is kept (a filter copies every column; a judgments
    table is mostly scored rows with scores): callers only read the result."""
    return frame if bool(keep.all()) else frame[keep]


def gold_judge(table: pd.DataFrame) -> str | None:
    """The judge whose rows are the reference (``gold``, else ``human``), or None when the table has neither."""
    present = judgments.distinct_text(table["judge"])
    return next((g for g in GOLD_JUDGES if g in present), None)


def score_bins(scores: pd.Series) -> np.ndarray | None:
    """Bin edges for ``scores`` when they should be binned (fractional, or more than :data:`MAX_SCORE_LEVELS`
    distinct values); None when every distinct score can have its own bar. On a whole-number scale (1-5 with means
    of raters between) the bins are half a point wide and centred on the whole and half points, so a judge's
    integer scores and the raters' means at the same point share a bar; otherwise 8 equal bins."""
    values = scores.dropna().astype(float)
    if values.empty:
        return None
    distinct = np.unique(values)
    if len(distinct) <= MAX_SCORE_LEVELS and np.all(np.equal(np.mod(distinct, 1), 0)):
        return None
    low, high = float(distinct.min()), float(distinct.max())
    if high == low:
        return None
    whole_low, whole_high = math.floor(low), math.ceil(high)
    if (whole_high - whole_low) * 2 + 1 <= MAX_SCORE_LEVELS:
        return np.arange(whole_low - 0.25, whole_high + 0.5, 0.5)
    return np.linspace(low, high, _BINS + 1)


def half_point_bins(edges: np.ndarray) -> bool:
    """Whether ``edges`` are the half-point bins centred on whole and half points."""
    return len(edges) > 1 and bool(np.allclose(np.diff(edges), 0.5)) and math.isclose(edges[0] % 0.5, 0.25)


def score_labels(scores: pd.Series, edges: np.ndarray | None) -> pd.Series:
    """Each score's bar label: the score itself; or its bin, named by its centre (``1.5`` holds 1.25 up to 1.75)
    for half-point bins, else ``[lo, hi)`` (the last bin closed)."""
    values = scores.astype(float)
    if edges is None and not len(values):
        return values.map(format_number)
    if edges is None:  # each distinct score formatted once (a large table repeats a few scores on every row)
        codes, uniques = pd.factorize(values)
        names = np.array([format_number(u) for u in uniques] + [format_number(math.nan)], dtype=object)
        return pd.Series(names[codes], index=values.index, name=values.name)  # the dtype Series.map infers
    index = np.clip(np.searchsorted(edges, values.to_numpy(), side="right") - 1, 0, len(edges) - 2)
    if half_point_bins(edges):
        names = [f"{(edges[k] + edges[k + 1]) / 2:g}" for k in range(len(edges) - 1)]
    else:
        names = [f"[{format_number(edges[k])}, {format_number(edges[k + 1])}{']' if k == len(edges) - 2 else ')'}"
                 for k in range(len(edges) - 1)]
    labels = pd.Categorical([names[k] for k in index], categories=names, ordered=True)
    return pd.Series(labels, index=scores.index)


def accuracy_against_gold(table: pd.DataFrame, ci_level: float = 0.95) -> pd.DataFrame:
    """Per judge, condition and criterion: the share of scored verdicts (winner or verdict label) equal to the gold
    row's for the same item, criterion and side, with an exact Clopper-Pearson interval. Empty when the table has
    no gold rows with a label."""
    gold = gold_judge(table)
    if gold is None:
        return pd.DataFrame()
    ok = counted_rows(table)
    ok = ok.assign(label=ok["winner"].fillna(ok["verdict"]) if "verdict" in ok else ok["winner"])
    ok = rows_where(ok, ok["label"].notna())
    keys = ["item_id", "criterion", "side"]
    reference = ok[ok["judge"].astype(str) == gold][[*keys, "label"]].rename(columns={"label": "gold_label"})
    if reference.empty:
        return pd.DataFrame()
    reference = reference.drop_duplicates(keys)
    from scipy.stats import binomtest  # here, not above: a table with no gold labels needs no scipy (1.5 s)

    judged = ok[ok["judge"].astype(str) != gold].merge(reference, on=keys, how="inner", validate="many_to_one")
    rows = []
    for (judge, condition, criterion), part in judged.groupby(["judge", "condition", "criterion"], sort=False,
                                                              observed=True, dropna=False):
        agree = int((part["label"].astype(str) == part["gold_label"].astype(str)).sum())
        n = len(part)
        interval = binomtest(agree, n).proportion_ci(confidence_level=ci_level, method="exact")
        rows.append({"judge": judge, "condition": condition, "criterion": criterion, "metric": "accuracy",
                     "estimate": agree / n, "ci_low": interval.low, "ci_high": interval.high, "n": n,
                     "method": f"share equal to the {gold} label; exact Clopper-Pearson {ci_level:.0%} CI "
                               "(rows as independent)"})
    return pd.DataFrame(rows)


def accuracy_html(table: pd.DataFrame) -> str:
    """The report's accuracy section: the table, or an empty string when there are no gold rows with labels."""
    accuracy = accuracy_against_gold(table)
    if accuracy.empty:
        return ""
    gold = gold_judge(table)
    unmatched = _unmatched(table, gold)
    note = (f"<p>{unmatched:,} scored verdict(s) have no {html_name(gold)} label for their item and are not "
            "counted.</p>" if unmatched else "")
    return (f"<h2 id='accuracy'>Accuracy against {html_name(gold)}</h2><p>Each judge's scored verdicts compared with "
            f"the {html_name(gold)} rows of the same item, criterion and side; unscored rows are not counted.</p>"
            + frame_html(accuracy, text_width=90) + note)


def _unmatched(table: pd.DataFrame, gold: str | None) -> int:
    ok = counted_rows(table)
    labelled = ok[ok["winner"].notna() | (ok["verdict"].notna() if "verdict" in ok else False)]
    keys = ["item_id", "criterion", "side"]
    reference = labelled[labelled["judge"].astype(str) == gold][keys].drop_duplicates()
    others = labelled[labelled["judge"].astype(str) != gold]
    merged = others.merge(reference.assign(_found=True), on=keys, how="left")
    return int(merged["_found"].isna().sum())


def html_name(name: str | None) -> str:
    import html

    return html.escape(str(name))


def fold_wide(frame: pd.DataFrame, max_columns: int = 12) -> str:
    """A count table: as it is when narrow, else in a box that scrolls sideways (the page keeps its width)."""
    out = frame_html(frame, max_rows=60)
    if len(frame.columns) > max_columns:
        return f"<div style='overflow-x:auto;max-width:100%'>{out}</div>"
    return out


def png_img(fig: Any) -> str:
    """``fig`` as an inline ``<img>`` (a PNG data URI): the report needs no file beside it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return ("<img alt='figure' style='max-width:100%' src='data:image/png;base64,"
            + base64.b64encode(buffer.getvalue()).decode("ascii") + "'>")
