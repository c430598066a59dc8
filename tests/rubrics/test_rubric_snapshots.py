"""Prompt rendering snapshots for every built-in rubric (and its variants).

A snapshot is the exact text of the messages sent for one example item. Regenerate after an
intended prompt change with:  JUDGELAB_UPDATE_SNAPSHOTS=1 pytest tests/rubrics/test_rubric_snapshots.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judgelab.rubrics import list_rubrics, load_rubric
from tests.rubrics.rubric_helpers import EXAMPLES, examples

SNAPSHOTS = Path(__file__).parent / "snapshots"

CASES = [
    ("direct_score", {}, 0, False),
    ("direct_score", {"scale": 10, "criteria": [{"name": "clarity", "definition": "Is it clear?", "weight": 2}]}, 3, False),
    ("pairwise", {}, 0, False),
    ("pairwise", {}, 0, True),
    ("chess_commentary", {}, 2, False),
    ("chess_commentary", {}, 2, True),
    ("unified_judge", {}, 0, False),
    ("unified_judge", {}, 1, False),
    ("unified_judge", {}, 2, False),
    ("reference_gold", {}, 0, False),
    ("reference_gold", {"degraded": True}, 0, False),
    ("editorial_summary", {}, 0, False),
    ("editorial_summary", {"language": "it", "few_shot": 3,
                           "few_shot_pool": str(EXAMPLES / "editorial_summary_fewshot.jsonl")}, 3, False),
    ("trajectory", {}, 1, False),
    ("mt_bench_single", {}, 1, False),
    ("mt_bench_pair", {}, 0, True),
]


def _render(name: str, params: dict, index: int, swapped: bool) -> str:
    rubric = load_rubric(name, **params)
    item = examples(name)[index]
    parts = []
    for i, req in enumerate(rubric.requests(item, swapped=swapped)):
        rows = [(k.criterion, k.side) if k.turn is None else (k.criterion, k.side, k.turn) for k in req.expected_rows]
        parts.append(f"=== request {i}: rows {rows} swapped={req.swapped}")
        for m in req.messages:
            parts.append(f"--- {m['role']}\n{m['content']}")
    return "\n".join(parts) + "\n"


def _snapshot_name(name: str, params: dict, index: int, swapped: bool) -> str:
    tag = "-".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "few_shot_pool" and k != "criteria")
    if "criteria" in params:
        tag += "-custom_criteria"
    return f"{name}__item{index}{'__swapped' if swapped else ''}{'__' + tag if tag else ''}.txt".replace("/", "_")


def test_every_builtin_rubric_has_a_snapshot_case_and_an_example_file() -> None:
    assert {c[0] for c in CASES} == set(list_rubrics())
    for name in list_rubrics():
        assert 3 <= len(examples(name)) <= 6, name


@pytest.mark.parametrize(("name", "params", "index", "swapped"), CASES)
def test_prompt_matches_snapshot(name: str, params: dict, index: int, swapped: bool) -> None:
    text = _render(name, params, index, swapped)
    path = SNAPSHOTS / _snapshot_name(name, params, index, swapped)
    if os.environ.get("JUDGELAB_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        if not os.environ.get("JUDGELAB_UPDATE_SNAPSHOTS") and os.environ.get("CI"):
            pytest.fail(f"missing snapshot {path.name}; generate it locally and commit it")
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"prompt changed for {path.name}; review and regenerate"


@pytest.mark.parametrize("name", ["direct_score", "pairwise", "chess_commentary", "unified_judge", "reference_gold",
                                  "editorial_summary"])
def test_every_example_item_renders(name: str) -> None:
    rubric = load_rubric(name)
    for item in examples(name):
        for swapped in (False, True) if rubric.mode == "pairwise" else (False,):
            for req in rubric.requests(item, swapped=swapped):
                assert req.expected_rows
                assert all(m["content"].strip() for m in req.messages)


@pytest.mark.parametrize("name", ["unified_judge", "chess_commentary", "editorial_summary"])
def test_items_read_through_pandas_render_like_dicts(name: str) -> None:
    """The engine reads items with pandas: absent optional fields become NaN and must not print as 'nan'."""
    import pandas as pd

    frame = pd.read_json(EXAMPLES / f"{name}.jsonl", lines=True)
    if name == "unified_judge":
        frame.loc[0, "reasoning"] = float("nan")
    rubric = load_rubric(name)
    for record, raw in zip(frame.to_dict(orient="records"), examples(name), strict=True):
        via_pandas = rubric.requests(record)[0].messages[-1]["content"]
        assert "nan" not in via_pandas.split()
        if name != "unified_judge" or raw["item_id"] != "uj-1":
            assert via_pandas == rubric.requests(raw)[0].messages[-1]["content"]
