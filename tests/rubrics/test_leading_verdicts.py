"""Verdicts that open the answer: a score alone on the first line before a rationale (G-Eval's sampled
answers, " 2\\n\\nThe reply ..."), and a three-class pairwise judge's first line ("Tie", "1\\n\\nReason: ...").
Generated answers; each test's docstring states the invariant."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab import parse_score, parse_winner

_RATIONALE = st.sampled_from([
    "The reply stays on topic and uses the fact.", "Reason: it answers the question.",
    "It is mostly fluent, with one awkward phrase.", "The response ignores the previous turn.",
])
_SPACE = st.sampled_from(["", " ", "  "])
_BREAK = st.sampled_from(["\n", "\n\n", "\n \n"])


@settings(max_examples=60, deadline=None)
@given(value=st.integers(0, 5), lead=_SPACE, end=st.sampled_from(["", ".", " "]), brk=_BREAK, rest=_RATIONALE)
def test_a_score_alone_on_the_first_line_is_read(value: int, lead: str, end: str, brk: str, rest: str) -> None:
    """Invariant: "<n>" alone on the first line, a rationale after it, reads n on a scale holding n (a
    "leading number", tier 3), and is refused with the scale in the reason when n is off the scale."""
    got = parse_score(f"{lead}{value}{end}{brk}{rest}", (1, 3))
    if 1 <= value <= 3:
        assert (got.value, got.rule) == (float(value), "leading number")
    else:
        assert got.value is None and "outside the scale 1-3" in (got.reason or "")


@settings(max_examples=40, deadline=None)
@given(first=st.integers(1, 3), second=st.integers(1, 3), rest=_RATIONALE)
def test_a_numbered_list_or_a_stated_score_is_not_a_leading_number(first: int, second: int, rest: str) -> None:
    """Invariant: "1. ..." list items are not a leading score, and a stated score later in the answer
    ("Score: n", tier 1) decides over a number on the first line."""
    listed = parse_score(f"{first}. {rest}\n{first + 1}. {rest}", (1, 5))
    assert listed.rule != "leading number"
    stated = parse_score(f"{first}\n\n{rest} Score: {second}", (1, 3))
    assert (stated.value, stated.rule) == (float(second), "score phrase")


@settings(max_examples=60, deadline=None)
@given(verdict=st.sampled_from(["Tie", "tie", "TIE", "Draw", "It's a tie", "1", "2"]), lead=_SPACE,
       end=st.sampled_from(["", ".", ":"]), brk=_BREAK, rest=_RATIONALE)
def test_a_three_class_first_line_is_a_winner(verdict: str, lead: str, end: str, brk: str, rest: str) -> None:
    """Invariant: an answer opening with "Tie"/"Draw" (then punctuation or a line break) reads TIE; a bare
    "1"/"2" alone on its line reads A/B; the rationale after it does not change that."""
    digit = verdict in ("1", "2")
    text = f"{lead}{verdict}{'' if digit else end}{brk}{rest}"
    want = {"1": "A", "2": "B"}.get(verdict, "TIE")
    assert parse_winner(text).value == want
    assert parse_winner(f"{lead}{verdict}").value == want


def test_openings_that_are_not_a_verdict() -> None:
    for text in ("1. The first response", "2) lists the steps", "12", "Tie-breaker: neither", "tied scores",
                 "1 of the responses is better", "Drawing on the context, both are fine"):
        assert parse_winner(text).value is None, text
    assert parse_winner("1\nOutput (b) is better.").value == "B"  # a stated winner decides over the first line
