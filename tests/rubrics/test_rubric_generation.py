"""Rubric generation: a scripted model answer (litellm mock_response) -> a loadable spec; bad answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.rubrics import load_rubric
from judgelab.rubrics.base import RowKey
from judgelab.rubrics.generation import (
    RubricGenerationError,
    generate_rubric,
    rubric_from_answer,
    save_rubric_yaml,
)

LEVELS = ["Poor", "Weak", "Adequate", "Good", "Excellent"]


def answer(scale_max: int = 5, drop: int | None = None, **changes: object) -> dict:
    levels = [{"score": s, "label": LEVELS[(s - 1) * 5 // scale_max], "description": f"level {s}",
               "characteristics": [f"trait {s}"]} for s in range(1, scale_max + 1) if s != drop]
    out = {"levels": levels, "edgeCases": [{"situation": "domain abbreviations",
                                            "guidance": "score for domain experts"}],
           "scoringGuidelines": ["Judge readability, not correctness."]}
    out.update(changes)
    return out


def test_generate_save_load_and_use(tmp_path: Path) -> None:
    """litellm is scripted with mock_response: no network, the real completion code path runs."""
    spec = generate_rubric("Code Readability", "How easy the code is to understand and maintain",
                           "software engineering", "1-5", "balanced", model="gpt-4o-mini",
                           mock_response="Here it is:\n```json\n" + json.dumps(answer()) + "\n```")
    path = save_rubric_yaml(spec, tmp_path / "readability.yaml")
    rubric = load_rubric(path)
    assert rubric.name == "code_readability_rubric" and rubric.scale == (1, 5)
    crit = rubric.spec.criteria[0]
    assert crit.anchors[3][0] == "Adequate: level 3" and crit.edge_cases[0].situation == "domain abbreviations"
    req = rubric.requests({"item_id": "1", "prompt": "Write a loop", "response": "for i in range(3): print(i)"})[0]
    assert "Edge cases:" in req.messages[-1]["content"] and "Adequate: level 3" in req.messages[-1]["content"]
    raw = '{"scores": [{"criterion": "code_readability", "evidence": ["e"], "justification": "j", "score": 4, ' \
          '"improvement": "i"}], "summary": "s"}'
    assert {r.key: r.score for r in rubric.parse(raw, req)}[RowKey("overall")] == 4


def test_ten_point_scale() -> None:
    spec = rubric_from_answer(json.dumps(answer(10)), criterion="Tone", description="Politeness", domain="support",
                              scale="1-10")
    assert spec.scale is not None and spec.scale.max == 10 and len(spec.criteria[0].anchors) == 10


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("I cannot write rubrics.", "no JSON object"),
        (json.dumps(answer(drop=2)), r"no level description for score\(s\) \[2\]"),
        (json.dumps(answer(levels=[{"score": 7, "label": "x", "description": "y", "characteristics": ["z"]}])),
         "levels\\[0\\].score=7 is outside the scale 1-5"),
        (json.dumps(answer(edgeCases=[])), "missing field edgeCases"),
        (json.dumps({"levels": "all good"}), "missing field levels"),
        (json.dumps(answer(levels=[{"score": 1, "label": "", "description": "d", "characteristics": ["c"]}])),
         "levels\\[0\\].label is missing"),
        (json.dumps(answer(levels=[{"score": 1, "label": "l", "description": "d", "characteristics": []}])),
         "characteristics must be a non-empty list"),
    ],
)
def test_malformed_answers_fail_clearly(raw: str, reason: str) -> None:
    with pytest.raises(RubricGenerationError, match=reason):
        rubric_from_answer(raw, criterion="Code Readability", description="d", domain="se")


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="strictness"):
        generate_rubric("c", "d", "x", strictness="harsh", mock_response="{}")
    with pytest.raises(ValueError, match="scale"):
        generate_rubric("c", "d", "x", scale="0-100", mock_response="{}")
