"""judgelab.parse_score / parse_winner / parse_label: text in, a typed result out, never an exception; the
same layer the rubrics read free text with."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import judgelab
from judgelab import Parsed, parse_score, parse_winner
from judgelab.rubrics.parse_text import parse_label
from judgelab.rubrics.verdict_text import read_score, read_winner

ANSWERS = st.one_of(
    st.text(max_size=80),
    st.lists(st.sampled_from(["Score:", "Coherence:", "[[", "]]", "3", "0.5", "7", "/5", "{", "}", '"score":',
                              "Output (a) is better.", "[[B]]", '"', "\n", "```", "> ", "<think>", "</think>",
                              "not a 5", "I can't help with that.", "out of", "★", "☆"]),
             max_size=12).map(" ".join),
    st.none(), st.integers(), st.floats(), st.booleans(),
)
SCALES = st.one_of(st.tuples(st.integers(-3, 3), st.integers(0, 10)), st.just((1, 3)), st.just((0, 1)),
                   st.just("1-5"), st.just((math.nan, 1)), st.just((5, 1)))


@settings(max_examples=300, deadline=None)
@given(text=ANSWERS, scale=SCALES)
def test_parse_score_never_raises_and_a_value_is_on_the_scale(text: object, scale: object) -> None:
    """Invariant: any input (text, None, numbers, a bad scale) gives a Parsed; exactly one of value/reason is
    set; a value is a number within the scale; the status says ok / parse_error / refusal."""
    parsed = parse_score(text, scale)  # type: ignore[arg-type]
    assert isinstance(parsed, Parsed)
    assert (parsed.value is None) != (parsed.reason is None)
    if parsed.ok:
        low, high = scale  # type: ignore[misc]
        assert parsed.status == "ok" and low <= parsed.value <= high  # type: ignore[operator]
    else:
        assert parsed.status in ("parse_error", "refusal") and parsed.reason


@settings(max_examples=200, deadline=None)
@given(text=ANSWERS)
def test_parse_winner_never_raises_and_agrees_with_the_rubrics_reader(text: object) -> None:
    """Invariant: parse_winner never raises, and on text it gives exactly what the pairwise rubrics read."""
    parsed = parse_winner(text)
    assert parsed.value in (None, "A", "B", "TIE")
    if isinstance(text, str) and text.strip():
        try:
            expected = read_winner(text).value
        except Exception:  # noqa: BLE001
            expected = None
        assert parsed.value == expected


@pytest.mark.parametrize(("text", "scale", "labels", "value"), [
    ("2", (1, 3), None, 2), ("Coherence: 3", (1, 3), ["coherence"], 3), ("Score: 0.5", (0, 1), None, 0.5),
    ("0", (0, 1), None, 0), ("1", (0, 1), None, 1),
    ("The response continues the dialogue naturally and stays on the fact. 3", (1, 3), None, 3),
    ("The reply is on topic but adds nothing.\nEngagingness: 1", (0, 1), ["engagingness"], 1),
    ("The response is coherent. Coherence: 2", (1, 3), ["coherence"], 2),
    ("Score: 5", (1, 3), None, None), ("Coherence: 3", (1, 3), None, None), ("", (1, 3), None, None),
])
def test_the_dialogue_studys_answers_on_1_3_and_0_1(text: str, scale: tuple[int, int], labels: list[str] | None,
                                                     value: float | None) -> None:
    assert parse_score(text, scale, labels).value == value


def test_one_layer_serves_the_rubrics_and_the_public_functions() -> None:
    text = "Clear but brief. I would rate it a 4 out of 5."
    found = read_score(text, (1, 5))
    parsed = parse_score(text, (1, 5), decimals=False)
    assert (parsed.value, parsed.matched, parsed.rule, parsed.tier) == (found.value, found.matched, found.rule,
                                                                        found.tier)
    assert parse_score("I would give it a 3.5", (1, 5), decimals=False).reason.endswith("takes integers")
    assert parse_score("I can't help with that.", (1, 5)).status == "refusal"


def test_labels_winners_and_the_public_names() -> None:
    assert parse_label("Relevant.", ["relevant", "not relevant"]).value == "relevant"
    assert parse_label("Verdict: not relevant", ["relevant", "not relevant"]).value == "not relevant"
    assert parse_label("Label: yes ... Label: no", ["yes", "no"]).reason.startswith("conflicting verdicts")
    assert parse_winner("Assistant B is better. [[B]]").value == "B"
    assert parse_winner("Both are equally good. [[C]]").value == "TIE"
    assert {"parse_score", "parse_winner", "parse_label", "Parsed"} <= set(judgelab.__all__)


def test_the_module_examples_are_true() -> None:
    import doctest

    from judgelab.rubrics import parse_text

    assert doctest.testmod(parse_text).failed == 0
