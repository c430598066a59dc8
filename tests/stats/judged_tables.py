"""Judgments tables for the judge-corrected statistics' tests: a judge on every item, a human on the first few."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgelab.judgments import make_table


def judge_and_human(judged: Sequence[float], truth: Sequence[float], n_gold: int) -> pd.DataFrame:
    """Score rows of judge "judge" for every item i0, i1, ... and of judge "human" for the first ``n_gold``."""
    rows = []
    for i, (judge_score, human_score) in enumerate(zip(judged, truth, strict=True)):
        base = {"run_id": "t", "item_id": f"i{i}", "rubric": "r", "criterion": "overall", "condition": "original",
                "repeat": 0}
        rows.append({**base, "judge": "judge", "status": "ok", "score": judge_score})
        if i < n_gold:
            rows.append({**base, "judge": "human", "status": "ok", "score": human_score})
    return make_table(rows)
