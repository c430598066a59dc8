"""chess_commentary: strict CSV parsing, library totals/winner, stated-value checks, swap, hard rule."""

from __future__ import annotations

import pytest

from judgelab.rubrics import load_rubric
from judgelab.rubrics.base import ParseFailure, RowKey
from judgelab.rubrics.chess_commentary import context_flags, unsupported_claims

CONTEXT = ("move: 12. Rd1\nflags: check=no, checkmate=no, capture=no, trade=no, promotion=no, "
           "hanging_piece=yes, mate_threat=NA\nhanging: white knight on e4 (value 3)")
ITEM = {"item_id": "c1", "context": CONTEXT,
        "candidate_a": "Rd1 leaves the knight on e4 hanging.",
        "candidate_b": "A crushing move that gives check."}


def rows_by_key(rows: list) -> dict:
    return {r.key: r for r in rows}


def parse(raw: str, swapped: bool = False, item: dict | None = None, **params: object) -> dict:
    rubric = load_rubric("chess_commentary", **params)
    req = rubric.requests(item or ITEM, swapped=swapped)[0]
    return rows_by_key(rubric.parse(raw, req))


def test_good_line_gives_scores_totals_and_library_winner() -> None:
    rows = parse("WINNER,A,A,5,5,4,4,4,5,27,B,1,3,2,4,4,4,18", apply_hard_rule=False)
    assert rows[RowKey("faithfulness", "A")].score == 5
    assert rows[RowKey("overall", "A")].score == 27 and rows[RowKey("overall", "B")].score == 18
    overall = rows[RowKey("overall")]
    assert overall.winner == "A" and overall.detail["decided_by"] == "total"
    assert overall.detail["disagreements"] == []
    assert len(rows) == 6 * 2 + 3


def test_line_found_among_prose_and_backticks() -> None:
    rows = parse("Scores follow.\n`WINNER,A,A,5,5,4,4,4,5,27,B,4,4,4,4,4,4,24`\n", apply_hard_rule=False)
    assert rows[RowKey("overall")].winner == "A"


def test_stated_totals_and_winner_are_checked_not_trusted() -> None:
    rows = parse("WINNER,B,A,4,4,4,4,4,4,25,B,3,3,3,3,3,3,18", apply_hard_rule=False)
    overall = rows[RowKey("overall")]
    assert overall.winner == "A"  # library: 24 > 18
    assert rows[RowKey("overall", "A")].score == 24
    assert overall.detail["stated_winner"] == "B" and overall.detail["stated_total_A"] == 25
    assert any("stated_total_A=25" in d for d in overall.detail["disagreements"])
    assert any("stated_winner=B" in d for d in overall.detail["disagreements"])


def test_tie_break_and_tie() -> None:
    rows = parse("WINNER,TIE,A,4,3,3,3,3,3,19,B,3,4,3,3,3,3,19", apply_hard_rule=False)
    assert rows[RowKey("overall")].winner == "A" and rows[RowKey("overall")].detail["decided_by"] == "faithfulness"
    rows = parse("WINNER,TIE,A,3,3,3,3,3,3,18,B,3,3,3,3,3,3,18", apply_hard_rule=False)
    assert rows[RowKey("overall")].winner == "TIE" and rows[RowKey("overall")].detail["disagreements"] == []


def test_swap_maps_slots_back_to_original_labels() -> None:
    # swapped prompt: slot A shows B's text; the judge prefers slot A -> original B wins
    rows = parse("WINNER,A,A,5,5,5,5,5,5,30,B,2,2,2,2,2,2,12", swapped=True, apply_hard_rule=False)
    assert rows[RowKey("overall")].winner == "B"
    assert rows[RowKey("faithfulness", "B")].score == 5 and rows[RowKey("faithfulness", "A")].score == 2
    assert rows[RowKey("overall", "B")].score == 30
    assert rows[RowKey("overall")].detail["stated_winner"] == "B"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "empty output"),
        ("A is better.", "no line starting with 'WINNER,'"),
        ("WINNER,A,A,5,5,5,5,5,30,B,1,1,1,1,1,1,6", "has 17 fields, expected 18"),
        ("WINNER,C,A,5,5,5,5,5,5,30,B,1,1,1,1,1,1,6", "winner field 'C'"),
        ("WINNER,A,A,6,5,5,5,5,5,31,B,1,1,1,1,1,1,6", "A faithfulness=6 is outside the scale 1-5"),
        ("WINNER,A,A,5,5,5,5,5,x,30,B,1,1,1,1,1,1,6", "A conciseness='x' is not an integer"),
        ("WINNER,A,B,5,5,5,5,5,5,30,A,1,1,1,1,1,1,6", "should be the label 'A'"),
        ("WINNER,A,A,5,5,5,5,5,5,30,B,1,1,1,1,1,1,6\nWINNER,B,A,1,1,1,1,1,1,6,B,5,5,5,5,5,5,30", "2 different WINNER lines"),
        ("WINNER,A,A,5,5,5,5,5,5,30,B,1,1,1,1,1,0,5", "B conciseness=0 is outside"),
    ],
)
def test_malformed_lines_fail_with_reason(raw: str, reason: str) -> None:
    with pytest.raises(ParseFailure) as err:
        parse(raw)
    assert reason in err.value.reason and err.value.status == "parse_error"


def test_refusal_is_a_refusal() -> None:
    with pytest.raises(ParseFailure) as err:
        parse("I'm sorry, but I cannot evaluate chess commentary.")
    assert err.value.status == "refusal"


def test_hard_rule_forces_faithfulness_to_one_and_can_flip_the_winner() -> None:
    # the judge prefers B (unsupported "check" claim); the library forces B's faithfulness to 1
    rows = parse("WINNER,B,A,4,4,4,4,4,4,24,B,5,5,5,4,4,4,27")
    assert rows[RowKey("faithfulness", "B")].score == 1
    assert rows[RowKey("faithfulness", "B")].detail["judge_score"] == 5
    assert rows[RowKey("faithfulness", "A")].score == 4  # "hanging" is supported by hanging_piece=yes
    overall = rows[RowKey("overall")]
    assert overall.winner == "A" and overall.detail["winner_from_judge_scores"] == "B"
    assert overall.detail["hard_rule"]["B"][0]["claim"] == "check"


def test_hard_rule_also_applies_on_a_swapped_pass() -> None:
    rows = parse("WINNER,A,A,5,5,5,4,4,4,27,B,4,4,4,4,4,4,24", swapped=True)
    assert rows[RowKey("faithfulness", "B")].score == 1 and rows[RowKey("overall")].winner == "A"


def test_hard_rule_is_conservative() -> None:
    flags = context_flags(CONTEXT)
    assert flags["check"] is False and flags["hanging_piece"] is True and flags["mate_threat"] is None
    assert unsupported_claims("This is not check, just a quiet move.", flags) == []  # negation
    assert unsupported_claims("Black could capture on e4 next.", flags) == []  # hedge
    assert unsupported_claims("White checkmates.", flags) == []  # mate_threat NA -> not explicitly false
    assert [c["claim"] for c in unsupported_claims("Rd1 captures a pawn.", flags)] == ["capture"]
    assert unsupported_claims("It gives check.", {}) == []  # no flags at all -> never forced


def test_features_dict_overrides_text_flags() -> None:
    item = {**ITEM, "features": {"check": True, "checkmate": False}}
    rows = parse("WINNER,B,A,4,4,4,4,4,4,24,B,5,5,5,4,4,4,27", item=item)
    assert rows[RowKey("faithfulness", "B")].score == 5


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("White takes space in the centre.", []),
        ("A small trade-off between activity and structure.", []),
        ("An exchange sacrifice is in the air.", []),
        ("White takes on e5.", ["capture"]),
        ("Black took the loose knight.", ["capture"]),
        ("He trades queens.", ["trade"]),
        ("The pawn promotes on e8.", ["promotion"]),
        ("The bishop on c4 is hanging.", ["hanging_piece"]),
    ],
)
def test_hard_rule_keywords_need_a_chess_claim(text: str, claims: list[str]) -> None:
    all_false = dict.fromkeys(("check", "checkmate", "capture", "trade", "promotion", "hanging_piece",
                               "mate_threat"), False)
    assert [c["claim"] for c in unsupported_claims(text, all_false)] == claims
