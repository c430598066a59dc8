"""Every branch of the seeds' verdict rules, on hand-made cases."""

from __future__ import annotations

import pytest

from judgelab.rubrics.chess_commentary import chess_winner
from judgelab.rubrics.direct_score import weighted_mean
from judgelab.rubrics.pairwise import combine_swapped_passes, weighted_vote
from judgelab.rubrics.reference_gold import reference_verdict, reference_verdict_degraded
from judgelab.rubrics.unified_judge import (
    classification_match,
    extraction_credit_band,
    extraction_f1,
    unified_verdict,
)

CRITS = ["faithfulness", "relevance", "informativeness", "clarity", "human_likeness", "conciseness"]
TIE_BREAK = ["faithfulness", "relevance", "informativeness"]


def s(*values: int) -> dict[str, int]:
    return dict(zip(CRITS, values, strict=True))


@pytest.mark.parametrize(
    ("a", "b", "winner", "decided_by"),
    [
        (s(5, 5, 5, 5, 5, 5), s(4, 4, 4, 4, 4, 4), "A", "total"),
        (s(3, 3, 3, 3, 3, 3), s(4, 4, 4, 4, 4, 3), "B", "total"),
        (s(5, 3, 3, 3, 3, 3), s(4, 4, 3, 3, 3, 3), "A", "faithfulness"),  # totals 20 = 20
        (s(4, 3, 4, 3, 3, 3), s(4, 4, 3, 3, 3, 3), "B", "relevance"),
        (s(4, 4, 4, 3, 3, 2), s(4, 4, 3, 3, 3, 3), "A", "informativeness"),
        (s(4, 4, 3, 5, 3, 1), s(4, 4, 3, 3, 3, 3), "TIE", "tie"),  # equal totals and cascade -> TIE
    ],
)
def test_chess_winner_and_each_tie_break_level(a: dict, b: dict, winner: str, decided_by: str) -> None:
    result = chess_winner(a, b, TIE_BREAK)
    assert (result.winner, result.decided_by) == (winner, decided_by)
    assert result.total_a == sum(a.values()) and result.total_b == sum(b.values())


@pytest.mark.parametrize(
    ("c", "r", "q", "verdict", "total", "reason"),
    [
        (0, 40, 20, "FAIL", 60, "Incorrect output"),  # cap at 60
        (0, 30, 20, "FAIL", 50, "Incorrect output"),  # below the cap: total kept
        (40, 20, 10, "PASS", 70, "Meets threshold"),  # boundary: exactly 70 passes
        (40, 20, 9, "FAIL", 69, "Below threshold"),
        (20, 40, 10, "PASS", 70, "Meets threshold"),  # partial correctness can pass
        (39.5, 20, 10, "FAIL", 69.5, "Below threshold"),
    ],
)
def test_unified_verdict_every_branch(c: float, r: float, q: float, verdict: str, total: float, reason: str) -> None:
    assert unified_verdict(c, r, q) == (verdict, total, reason)


def test_extraction_f1_and_credit_bands() -> None:
    m = extraction_f1(["a", "B ", "c", "x"], ["a", "b", "c", "d"])
    assert m["precision"] == 0.75 and m["recall"] == 0.75 and m["f1"] == pytest.approx(0.75)
    assert extraction_credit_band(m["f1"]) == "partial"
    assert extraction_credit_band(0.8) == "full"
    assert extraction_credit_band(0.49) == "low"
    m = extraction_f1(["a", "b"], ["a", "b", "c"])
    assert m["f1"] == pytest.approx(0.8) and 40 * m["f1"] == pytest.approx(32)
    assert extraction_f1([], [])["f1"] == 1.0
    assert extraction_f1([], ["a"])["f1"] == 0.0
    assert extraction_f1(["a"], [])["f1"] == 0.0
    assert extraction_f1(["z"], ["a"])["f1"] == 0.0


def test_classification_match_levels() -> None:
    assert classification_match("own", "OWN") == "EXACT"
    assert classification_match("R/strong", "R/weak") == "PARTIAL"
    assert classification_match("S/strong", "R/strong") == "NONE"
    assert classification_match("OWN", "COMPETITOR") == "NONE"


@pytest.mark.parametrize(
    ("corr", "comp", "verdict"),
    [(5, 4, "match"), (5, 5, "match"), (5, 3, "partial_match"), (4, 5, "partial_match"), (3, 3, "partial_match"),
     (3, 2, "mismatch"), (2, 5, "mismatch"), (1, 1, "mismatch")],
)
def test_reference_verdict_boundaries(corr: int, comp: int, verdict: str) -> None:
    assert reference_verdict(corr, comp) == verdict


def test_reference_degraded_verdict() -> None:
    assert reference_verdict_degraded(5) == "match"
    assert reference_verdict_degraded(4) == "mismatch"


def test_combine_swapped_passes_seed_rule() -> None:
    # the seed's Example 2: B (0.8) then, mapped back, B (0.6) -> B with 0.7
    agree = combine_swapped_passes({"winner": "B", "confidence": 0.8}, {"winner": "B", "confidence": 0.6})
    assert agree["winner"] == "B" and agree["confidence"] == pytest.approx(0.7) and agree["consistent"] is True
    disagree = combine_swapped_passes({"winner": "A", "confidence": 0.9}, {"winner": "B", "confidence": 0.9})
    assert disagree["winner"] == "TIE" and disagree["confidence"] == 0.5 and disagree["consistent"] is False
    ties = combine_swapped_passes({"winner": "TIE", "confidence": 0.4}, {"winner": "TIE", "confidence": 0.6})
    assert ties["winner"] == "TIE" and ties["confidence"] == pytest.approx(0.5)
    unscored = combine_swapped_passes({"winner": None, "confidence": None}, {"winner": "A", "confidence": 1})
    assert unscored["winner"] is None
    with pytest.raises(ValueError):
        combine_swapped_passes({"winner": "first"}, {"winner": "A"})


def test_weighted_mean_and_vote() -> None:
    assert weighted_mean({"a": 5, "b": 1}, {"a": 3, "b": 1}) == 4
    assert weighted_vote({"a": "A", "b": "B"}, {"a": 0.6, "b": 0.4}) == "A"
    assert weighted_vote({"a": "A", "b": "B"}, {"a": 0.5, "b": 0.5}) == "TIE"
    with pytest.raises(ValueError):
        weighted_mean({"a": 5}, {"a": 0})
