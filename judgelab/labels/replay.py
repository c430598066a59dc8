"""A simulated annotator that replays released human labels, and the corrected estimate as the labels arrive.

:func:`replay_labels` answers a session's current item with the released label, item after item, through the
session's own ``label`` (the path the widget's keys take): a notebook can show a labelling plan working on a
released data set without a person. :func:`estimate_path` is the corrected mean after the first k labels of a
session, for several k, so the estimate can be watched converging.

For a selection drawn with probabilities π (``stats.select_for_labelling``), the first k items of its labelling
order -- a uniformly random order of the chosen items -- were themselves drawn with probability π·k/budget, so
the path reweights by those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.judgments import combine
from judgelab.labels.questions import LabelError
from judgelab.labels.session import PROVENANCE_COLUMNS, LabelSession, human_judge
from judgelab.stats import corrected_mean
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["estimate_path", "replay_labels"]


def _check(session: Any) -> None:
    if not isinstance(session, LabelSession):
        raise LabelError(f"expected a Labeler or LabelSession, not {type(session).__name__}")


def _only_question(session: LabelSession, question: str | None) -> str:
    names = [q.name for q in session.questions if q.kind != "note"]
    if question is None and len(names) == 1:
        return names[0]
    if question in names:
        return str(question)
    raise LabelError(f"name the question with question= (one of {', '.join(names)})")


def replay_labels(session: LabelSession, released: Mapping[str, Any], *, question: str | None = None,
                  n: int | None = None) -> int:
    """Label up to ``n`` (default: all remaining) of the session's next items with ``released[item_id]``.

    Returns the number labelled. An item without a released label is skipped (and counted nowhere else).
    """
    _check(session)
    if not isinstance(released, Mapping):
        raise LabelError(f"released labels are a mapping item_id -> label, not {type(released).__name__}")
    name = _only_question(session, question)
    labels = {str(k): v for k, v in released.items()}
    done = 0
    unlabelled: set[str] = set()
    while session.current is not None and (n is None or done < n):
        item = session.current
        if item in labels:
            session.label(item, **{name: labels[item]})
            done += 1
        elif item in unlabelled:  # only items without a released label are left
            break
        else:
            unlabelled.add(item)
            session.skip(item)
    return done


def estimate_path(session: LabelSession, *, steps: Sequence[int], weights: pd.DataFrame | None = None,
                  question: str | None = None, positive: Any = None, method: str = "ppi++",
                  ci_level: float = 0.95) -> pd.DataFrame:
    """The corrected mean of the session's judge after its first k labels (in the order given), for each k.

    ``weights``: the selection the items were drawn by; its probabilities are scaled by k / (the selection's
    size) for the first k labels. One ``mean`` row per k (column ``n_labels``); a k with fewer than k labels so
    far is left out.
    """
    _check(session)
    if session.verdicts.empty:
        raise LabelError("estimate_path needs a session over a judgments table (the judge's rows)")
    name = _only_question(session, question)
    labels = session.table()
    labels = labels[labels["criterion"] == name].sort_values("label_event", kind="stable")
    judge_rows = session.verdicts
    if "criterion" in judge_rows.columns and (judge_rows["criterion"] == name).any():
        judge_rows = judge_rows[judge_rows["criterion"] == name]
    criterion = judge_rows["criterion"].iloc[0]
    value = {"score": "score", "label": "verdict", "pairwise": "winner"}[
        next(q.kind for q in session.questions if q.name == name)]
    rows = []
    for k in steps:
        if isinstance(k, bool) or not isinstance(k, int) or k < 2:
            raise LabelError(f"steps are label counts of at least 2, not {k!r}")
        if k > len(labels):
            continue
        first = labels.iloc[:k].drop(columns=list(PROVENANCE_COLUMNS)).assign(criterion=criterion)
        scaled = None
        if weights is not None:
            if not isinstance(weights, pd.DataFrame) or "inclusion_probability" not in weights.columns:
                raise LabelError("weights= is stats.select_for_labelling's frame")
            scaled = weights.assign(inclusion_probability=weights["inclusion_probability"] * k / len(weights))
        try:
            out = corrected_mean(combine([judge_rows[first.columns.intersection(judge_rows.columns)], first]),
                                 judge=str(session.judge), gold=human_judge(session.annotator), value=value,
                                 positive=positive, weights=scaled, method=method, ci_level=ci_level)
        except JudgelabError as exc:
            rows.append(result_row("mean", float("nan"), n=k, method="", n_labels=k, note=f"not computed: {exc}"))
            continue
        row = out[out["metric"] == "mean"].iloc[0].to_dict()
        rows.append({**row, "n_labels": k})
    return tidy_frame(rows)
