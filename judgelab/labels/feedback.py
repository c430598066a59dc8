"""What the labels so far say, recomputed after every answer: the numbers the labelling widget shows.

:func:`live_feedback` reads a labelling session (its judge's rows and the store's answers) for one question and
returns a tidy frame of up to four rows, each from judgelab's own statistics:

- ``mean``: the judge-corrected mean (``stats.corrected_mean``, PPI++; reweighted by 1/π with ``weights=``, the
  selection the items were drawn by) with its interval, this annotator's labels as gold;
- ``cohen_kappa``: judge vs this annotator on the labelled items (``stats.cohen_kappa``, quadratic weights for
  scores), with a bootstrap interval;
- ``krippendorff_alpha``: agreement between the store's annotators on the items two or more of them labelled
  (``stats.krippendorff_alpha``, interval level for scores, nominal otherwise);
- ``labels_needed``: about how many labels an interval of ``target_width`` needs (``stats.label_budget``).

A row that cannot be computed yet (too few labels, no second annotator) has a NaN estimate and a note saying why:
the widget shows the note instead of a number. :func:`feedback_html` renders the frame as short lines.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.judgments import combine
from judgelab.labels.questions import LabelError
from judgelab.labels.session import LabelSession, human_judge
from judgelab.stats import cohen_kappa, corrected_mean, krippendorff_alpha, label_budget
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["feedback_html", "live_feedback"]


def _question(session: LabelSession, question: str | None) -> Any:
    usable = [q for q in session.questions if q.kind != "note"]
    if question is None:
        if len(usable) != 1:
            raise LabelError(f"the labeller asks {len(usable)} questions ({', '.join(q.name for q in usable)}); "
                             "name the one to give feedback on with question=")
        return usable[0]
    for q in usable:
        if q.name == question:
            return q
    raise LabelError(f"question={question!r} is not a scored question of the labeller "
                     f"({', '.join(q.name for q in usable)})")


def _undefined(metric: str, why: str) -> dict[str, Any]:
    return result_row(metric, np.nan, n=0, method="", note=why)


def live_feedback(session: LabelSession, *, question: str | None = None, weights: Any = None,
                  positive: Any = None, target_width: float = 0.1, n_resamples: int = 500, ci_level: float = 0.95,
                  seed: int = 0) -> pd.DataFrame:
    """The four feedback rows for ``question`` (default: the labeller's only scored question); see the module.

    ``weights``: the selection the items were drawn by (``stats.select_for_labelling``'s frame), for "active";
    ``positive``: which label(s) count as 1 for the mean of a label question (e.g. "yes").
    """
    if not isinstance(session, LabelSession):
        raise LabelError(f"live_feedback reads a Labeler or LabelSession, not {type(session).__name__}")
    q = _question(session, question)
    value = {"score": "score", "label": "verdict", "pairwise": "winner"}[q.kind]
    labels = session.table(everyone=True)
    labels = labels[labels["criterion"] == q.name]
    mine = labels[labels["judge"] == human_judge(session.annotator)]
    rows: list[dict[str, Any]] = []
    judge_rows = session.verdicts
    if not judge_rows.empty and "criterion" in judge_rows.columns and (judge_rows["criterion"] == q.name).any():
        judge_rows = judge_rows[judge_rows["criterion"] == q.name]
    if judge_rows.empty:
        rows.append(_undefined("mean", "no judge verdicts: label a judgments table to see the corrected mean"))
    elif len(mine) < 2:
        rows += [_undefined(m, "label at least two items to see it") for m in ("mean", "cohen_kappa",
                                                                               "labels_needed")]
    else:
        judge_rows = judge_rows.drop(columns=[c for c in judge_rows.columns if c not in labels.columns])
        # the labels are gold for the judge's question, whatever the question is called
        gold = mine.assign(criterion=judge_rows["criterion"].iloc[0]).drop(
            columns=[c for c in mine.columns if c not in judge_rows.columns])
        both = combine([judge_rows, gold])
        judge, annotator = str(session.judge), human_judge(session.annotator)
        pos = positive if positive is not None or q.kind != "pairwise" else "A"
        for metric, compute in (
                ("mean", lambda: corrected_mean(both, judge=judge, gold=annotator, value=value, positive=pos,
                                                weights=weights, method="ppi++", ci_level=ci_level, seed=seed)),
                ("cohen_kappa", lambda: cohen_kappa(judge, annotator, data=both, value=value,
                                                    weights="quadratic" if q.kind == "score" else None,
                                                    n_resamples=n_resamples, ci_level=ci_level, seed=seed)),
                ("labels_needed", lambda: label_budget(both, judge=judge, gold=annotator, value=value, positive=pos,
                                                       target_width=target_width, method="ppi++", ci_level=ci_level,
                                                       seed=seed))):
            try:
                out = compute()
                rows.append((out[out["metric"] == "mean"] if metric == "mean" else out).iloc[0].to_dict())
            except JudgelabError as exc:
                rows.append(_undefined(metric, f"not yet: {exc}"))
    counts = labels.groupby("item_id")["judge"].nunique()
    shared = labels[labels["item_id"].isin(counts[counts >= 2].index)]
    if shared["judge"].nunique() < 2:
        rows.append(_undefined("krippendorff_alpha", "no item has been labelled by two annotators yet"))
    else:
        try:
            out = krippendorff_alpha(data=shared, value=value, raters=sorted(shared["judge"].unique()),
                                     level="interval" if q.kind == "score" else "nominal",
                                     n_resamples=n_resamples, ci_level=ci_level, seed=seed)
            rows.append(out.iloc[0].to_dict())
        except JudgelabError as exc:
            rows.append(_undefined("krippendorff_alpha", f"not yet: {exc}"))
    return tidy_frame(rows)


_LABELS = {"mean": "corrected mean", "cohen_kappa": "judge–human κ", "krippendorff_alpha": "annotators' α",
           "labels_needed": "labels needed"}


def feedback_html(frame: pd.DataFrame) -> str:
    """The feedback rows as short HTML lines: estimate [interval] (n), or the note when there is no number yet."""
    if not isinstance(frame, pd.DataFrame) or not {"metric", "estimate", "n"} <= set(frame.columns):
        raise LabelError("feedback_html renders live_feedback's frame (columns metric, estimate, n ...)")
    lines = []
    for row in frame.to_dict("records"):
        name = next((text for prefix, text in _LABELS.items() if str(row["metric"]).startswith(prefix)),
                    str(row["metric"]))
        estimate = row["estimate"]
        if estimate is None or pd.isna(estimate):
            lines.append(f"<b>{name}</b>: <i>{html.escape(str(row.get('note') or 'not yet'))[:200]}</i>")
        elif row["metric"] == "labels_needed":
            target = row.get("target_width", np.nan)
            more = max(int(estimate) - int(row["n"]), 0)
            lines.append(f"<b>{name}</b>: about {more} more labels for an interval of width {target:g} "
                         f"({int(estimate)} in all, {int(row['n'])} so far)")
        else:
            interval = ("" if pd.isna(row.get("ci_low")) else f" [{row['ci_low']:.3f}, {row['ci_high']:.3f}]")
            lines.append(f"<b>{name}</b>: {estimate:.3f}{interval} (n = {int(row['n'])})")
    return "<br>".join(lines)
