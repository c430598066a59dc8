"""The parsing layer on hand-written hard cases: formats, conflicting candidates, traps, reasoning models,
and the rubric kinds that read free text through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.rubrics import RubricSpecError, load_rubric, parsing
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.verdict_text import read_choice, read_score, read_winner, read_yes_no, score_candidates
from tests.rubrics.parse_corpus.hard_cases import CHOICES, JSON_ANSWERS, SCORES, WINNERS, Failure

LETTERS = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 4.0, "E": 5.0}


def _check(read, expected) -> None:  # type: ignore[no-untyped-def]
    if isinstance(expected, Failure):
        with pytest.raises(ParseFailure) as failure:
            read()
        assert expected.reason in failure.value.reason
    else:
        assert read().value == expected


def test_there_are_at_least_thirty_hard_cases() -> None:
    assert len(SCORES) + len(WINNERS) + len(CHOICES) >= 30


@pytest.mark.parametrize(("text", "scale", "decimals", "expected"), SCORES, ids=[repr(c[0][:40]) for c in SCORES])
def test_scores(text: str, scale: tuple[int, int], decimals: bool, expected: float | Failure) -> None:
    _check(lambda: read_score(text, scale, decimals=decimals), expected)


@pytest.mark.parametrize(("text", "expected"), WINNERS, ids=[repr(c[0][:40]) for c in WINNERS])
def test_winners(text: str, expected: str | Failure) -> None:
    _check(lambda: read_winner(text), expected)


@pytest.mark.parametrize(("text", "expected"), JSON_ANSWERS, ids=[repr(c[0][:40]) for c in JSON_ANSWERS])
def test_json_answers(text: str, expected: float | str | Failure) -> None:
    def read():  # type: ignore[no-untyped-def]
        obj = parsing.extract_json_object(text)
        return type("Found", (), {"value": obj.get("score", obj.get("winner"))})

    _check(read, expected)


@pytest.mark.parametrize(("text", "expected"), CHOICES, ids=[repr(c[0][:40]) for c in CHOICES])
def test_option_letters(text: str, expected: float | Failure) -> None:
    _check(lambda: read_choice(text, LETTERS), expected)


def test_the_rule_between_candidates_is_the_documented_one() -> None:
    # tier 1 (a score phrase) beats tier 2 (a bare mark) even when the mark comes last
    assert read_score("Score: 2. Coherence is 4/5 at best.", (1, 5)).value == 2
    # a final bare number counts only when no explicit phrase exists
    assert read_score("Score: 3\n\nConfidence:\n5", (1, 5)).value == 3
    assert read_score("Clear and faithful.\n5", (1, 5)).rule == "final number"
    # among phrases of one tier the last wins; a phrase naming the final score beats a later one
    assert read_score("score of 2 ... score of 4", (1, 5)).value == 4
    assert read_score("Final score: 2. A score of 4 was tempting.", (1, 5)).value == 2
    # what was set aside is visible for audit
    kept = score_candidates("It would have earned a 5 out of 5; it is a 4 out of 5.")
    assert [c.value for c in kept] == [4.0]


def test_a_decision_names_its_span_and_rule() -> None:
    found = read_score("Helpful, though verbose. Rating: [[7]]", (1, 10))
    assert (found.value, found.matched, found.rule) == (7, "Rating: [[7]]", "score phrase")


def test_yes_no_opens_the_reply() -> None:
    assert read_yes_no("Yes, the candidate is correct.").value == "yes"
    assert read_yes_no("  no. It names the wrong city.").value == "no"
    with pytest.raises(ParseFailure, match="does not start with Yes or No"):
        read_yes_no("The candidate is partially correct.")


# ---------------------------------------------------------------- reasoning models
@pytest.mark.parametrize(
    ("raw", "answer", "thinking", "state"),
    [
        ("Score: 4", "Score: 4", "", "none"),
        ("<think>weigh it</think>\nScore: 4", "Score: 4", "weigh it", "closed"),
        ("<THINKING>a</THINKING>x<think>b</think>y", "xy", "a\nb", "closed"),
        ("<think>cut off mid-thought", "", "cut off mid-thought", "unclosed"),
        ("reasoning without an opening tag</think>Score: 4", "Score: 4", "reasoning without an opening tag",
         "close_only"),
    ],
)
def test_split_thinking_keeps_everything(raw: str, answer: str, thinking: str, state: str) -> None:
    reply = parsing.split_thinking(raw)
    assert (reply.answer, reply.thinking, reply.state) == (answer, thinking, state)


def test_a_reply_that_is_only_thinking_is_its_own_reason() -> None:
    with pytest.raises(ParseFailure, match="^thinking only: the reasoning block never closes") as unclosed:
        parsing.extract_json_object('<think>{"score": 4} is what I will say')
    assert unclosed.value.status == "parse_error"
    with pytest.raises(ParseFailure, match="^thinking only: the reply has reasoning but no answer"):
        parsing.answer_text("<think>done</think>  ")
    with pytest.raises(ParseFailure, match="^empty output$"):
        parsing.answer_text("   ")


def test_json_and_refusals_ignore_the_thinking() -> None:
    raw = '<think>{"score": 1, "explanation": "draft"} - no.</think>{"score": 4, "explanation": "ok"}'
    assert parsing.extract_json_object(raw)["score"] == 4
    # a refusal considered while thinking is not a refusal of the task
    thought = "<think>I can't help with that? No, it is a normal summary.</think>no JSON here"
    assert parsing.classify_failure(thought, ParseFailure("x")).status == "parse_error"
    assert parsing.classify_failure("I can't help with that.", ParseFailure("x")).status == "refusal"


# ---------------------------------------------------------------- the rubric kinds read through the layer
DIRECT = """\
name: free_text_score
version: "1"
kind: direct_score
mode: direct
required_fields: [prompt, response]
candidate_fields: [response]
scale: {min: 1, max: 5}
criteria:
  - {name: clarity, definition: Is the answer clear?, weight: 1}
output: {format: pattern}
templates: {user: "t.j2"}
verdict: {rule: weighted_mean}
"""
PAIRWISE = """\
name: free_text_pairwise
version: "1"
kind: pairwise
mode: pairwise
required_fields: [prompt, response_a, response_b]
candidate_fields: [response_a, response_b]
criteria:
  - {name: overall_quality, definition: Which answer is better?, weight: 1}
output: {format: pattern}
templates: {user: "t.j2"}
verdict: {rule: the judge's winner}
"""


def _rubric(tmp_path: Path, spec: str, template: str):  # type: ignore[no-untyped-def]
    (tmp_path / "t.j2").write_text(template)
    (tmp_path / "r.yaml").write_text(spec)
    return load_rubric(tmp_path / "r.yaml")


def test_direct_score_pattern_reads_free_text_scores(tmp_path: Path) -> None:
    rubric = _rubric(tmp_path, DIRECT, "Rate {{ item.response }} from 1 to 5.")
    request = rubric.requests({"item_id": "1", "prompt": "q", "response": "a"})[0]
    rows = {r.key.criterion: r for r in rubric.parse("<think>a 2?</think>Clear but brief. Score: 4/5", request)}
    assert rows["clarity"].score == 4 and rows["overall"].score == 4
    assert rows["clarity"].detail["matched"] == "Score: 4/5"
    assert rows["clarity"].detail["justification"] == "Clear but brief. Score: 4/5"
    with pytest.raises(ParseFailure, match="clarity 3.5 in .give it a 3.5. is not a whole number"):
        rubric.parse("I would give it a 3.5", request)
    with pytest.raises(ParseFailure, match="outside the scale 1-5"):
        rubric.parse("Score: 9", request)


def test_pairwise_pattern_reads_verdict_tokens_in_both_orders(tmp_path: Path) -> None:
    rubric = _rubric(tmp_path, PAIRWISE, "{{ response_a }} vs {{ response_b }}")
    item = {"item_id": "1", "prompt": "q", "response_a": "x", "response_b": "y"}
    original = rubric.requests(item)[0]
    swapped = rubric.requests(item, swapped=True)[0]
    assert {r.key.criterion: r.winner for r in rubric.parse("Reasoning... [[A>>B]]", original)} == {
        "overall_quality": "A", "overall": "A"}
    rows = rubric.parse("Reasoning... [[A>>B]]", swapped)  # the judge saw B first: its "A" is the original B
    assert {r.winner for r in rows} == {"B"} and rows[-1].detail["shown_winner"] == "A"
    assert rubric.parse("Tie. [[C]]", original)[-1].winner == "TIE"
    with pytest.raises(ParseFailure, match="no verdict found"):
        rubric.parse("Both have merits.", original)


def test_pairwise_pattern_needs_one_criterion(tmp_path: Path) -> None:
    two = PAIRWISE.replace("criteria:\n", "criteria:\n  - {name: accuracy, definition: Correct?, weight: 1}\n")
    with pytest.raises(RubricSpecError, match="exactly one criterion, not 2"):
        _rubric(tmp_path, two, "{{ response_a }} vs {{ response_b }}")


def test_json_rubrics_keep_their_contract_and_skip_the_thinking() -> None:
    rubric = load_rubric("reference_gold", degraded=True)
    item = {"item_id": "1", "question": "q", "gold_answer": "g", "candidate_answer": "c"}
    request = rubric.requests({**item, **{f: "x" for f in rubric.required_fields if f not in item}})[0]
    reply = ('<think>{"scores": {"correctness": 1}}</think>'
             '{"scores": {"correctness": 5}, "verdict": "match", "delta": "none", "decision_basis": "same"}')
    rows = {r.key.criterion: r for r in rubric.parse(reply, request)}
    assert rows["correctness"].score == 5 and rows["overall"].verdict == "match"
    with pytest.raises(ParseFailure, match="no JSON object"):
        rubric.parse("Score: 5", request)  # a JSON rubric does not fall back to free text


def test_chess_commentary_line_skips_the_thinking() -> None:
    rubric = load_rubric("chess_commentary")
    n = len(rubric.criterion_names)
    line = ",".join(["WINNER", "A", "A", *["4"] * n, str(4 * n), "B", *["3"] * n, str(3 * n)])
    parsed = rubric.parse_line(f"<think>WINNER,B,draft</think>\n{line}")
    assert parsed["winner"] == "A"


def test_direct_score_pattern_reads_a_declared_letter_map(tmp_path: Path) -> None:
    letters = DIRECT.replace("verdict:", "options: {letters: {A: 1, B: 2, C: 3, D: 4, E: 5}}\nverdict:")
    rubric = _rubric(tmp_path, letters, "Pick A-E for {{ item.response }}.")
    request = rubric.requests({"item_id": "1", "prompt": "q", "response": "a"})[0]
    assert rubric.parse("D. Clear, with one slip.", request)[0].score == 4
    with pytest.raises(ParseFailure, match="as a word, not as an option letter"):
        rubric.parse("A clear answer.", request)
    with pytest.raises(RubricSpecError, match="options.letters"):
        _rubric(tmp_path, letters.replace("E: 5", "E: 6"), "x")
