"""The verdict readers' shortcuts change no result: the fast path and the plain scans agree on every reply.

``verdict_text._FAST`` and ``reply_text._FAST`` switch on the exact shortcuts (gates on the text a pattern
cannot match without, matches tried only where a pattern can begin, bounded searches for the patterns
anchored at a text's end, skipped quote and JSON scans). With both off every pattern scans the whole text as
before: the reference. The replies are built from a grammar of the constructs the parsers know (score phrases
with every noun, verb and label, fractions, stars, verdict tokens, JSON fields, quotes, fences, markdown,
lists, hypothetical lead-ins, number words, ranges, decimals, reasoning blocks, pairwise and label verdicts)
mixed with random text, so that gates and starts are exercised on both sides of their conditions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab.rubrics import reply_text, verdict_text
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.parse_text import parse_label, parse_score, parse_winner
from tests.rubrics.parse_corpus.corpus import records

Pick = Callable[[Sequence[str]], str]

_NUMBERS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "0", "-1", "3.5", "4.0", "0.5", "12", "87", "٣", "one", "two",
            "three", "four", "five", "ten", "zero", "seven")
_NOUNS = ("score", "rating", "grade", "verdict", "Score", "RATING", "Final score", "overall rating",
          "total grade", "final coherence score", "Overall Verdict", "scorer", "scores")
_LINKS = (":", ": ", " = ", " - ", " is ", " of ", " would be ", " ", "", " (out of 5): ", " (1-5) : ", " is a ",
          ":\t", " should be an ")
_VERBS = ("give", "giving", "assign", "award", "awarding", "rate", "rating", "score", "scoring", "grade",
          "grading", "it scores", "this scored", "the summary therefore scores", "which thus scored", "and scores",
          "Kane scored", "has scored", "I'd rate", "I would give it", "assigning", "gives", "rated", "grades")
_GAPS = ("", " it", " this response", " the answer a", " a", " an", " a solid", " for", " only", " it a score of",
         " it a rating of", " the text a grade")
_CLOSERS = ("", ".", ",", " because", " for clarity", " overall", " points", " stars", " out of 5", "/5", " (",
            " - good", " in the 87th minute", " which", "!", "\n", " and", " minutes", "th")
_DENS = ("", "/5", " / 10", "/3", " out of 5", "\t/5", " \t/ 4", "\tout of 5", " out of ten", " out of five", "/ 5", "/5.", "/50", " out of 5.5",
         "/")
_LEADS = ("", "would have earned ", "not ", "rather than ", "to achieve ", "keeps it from being ",
          "could be ", "it is not a ", "compared to ", "unless ", "never ", "needs to be ", "it prevents ",
          "instead of ", "short of ", "if it were ", "than ")
_LABELS = ("coherence", "relevance", "fluency", "Relevant", "not relevant", "yes", "no", "A", "B", "tie")
_JUNK_WORDS = ("the", "summary", "keeps", "a", "an", "as", "is", "main", "claim", "but", "omits", "detail", "out",
               "of", "for", "perfect", "solid", "star", "stars", "to", "in", "on", "it", "this", "and", "rank",
               "results", "final", "overall", "total", "verdict", "grader", "rated", "assistant", "output",
               "response", "better", "winner", "choice", "wins", "prefer", "tie", "draw", "label", "answer",
               "judgment", "decision", "v2.5", "1-5", "3 to 5", "87th", "3-1", "1–5", "2x", "ß", "İ", "Σ",
               "é", "—", "…", "ﬁ", "\u0130", "🙂", "x_y", "__init__", "*", "#", "`", "{", "}", "[", "]", "(", ")",
               '"', "'", "“", "”", ">", "/", ":", ";", "!", "?", ".", ",", "-", "\t", "\n", "\n\n", "  ")
_AS_LINKS = (" as ", " as", "\tas ", " as\t", "\tas\t", " AS ")
_SEPARATORS = (" ", " ", "\n", ". ", "\n\n", ", ", "", "; ", " - ", "\n* ", "\n1. ", "\n- ", "\n> ", "\n# ")


def _number(pick: Pick) -> str:
    return pick(_NUMBERS)


def _fragment(pick: Pick) -> str:
    """One construct the parsers know (or a near miss of one), chosen by ``pick``."""
    n = _number(pick)
    kind = pick(("phrase", "verb", "as", "token", "mark", "stars", "idiom", "json", "quote", "markdown", "list",
                 "think", "label", "winner", "final", "junk", "junk", "range"))
    lead = pick(_LEADS) if pick(("", "lead")) else ""
    if kind == "phrase":
        open_, close = pick((("", ""), ("[[", "]]"), ("[", "]"), ("**", "**"), ("(", ")")))
        body = f"{pick(_NOUNS)}{pick(_LINKS)}{pick(('', 'a ', 'an '))}{open_}{n}{close}{pick(_DENS)}"
    elif kind == "verb":
        body = f"{pick(_VERBS)}{pick(_GAPS)} {pick(('', 'score ', 'rating ', 'of '))}{n}{pick(_DENS)}{pick(_CLOSERS)}"
    elif kind == "as":
        body = f"I {pick(('score', 'rate', 'grade', 'rank', 'Rate'))} {pick(('this', 'the answer overall', 'it'))}" \
               f"{pick(_AS_LINKS)}{pick(('', 'a ', 'an '))}{n}{pick(_DENS)}" \
               f"{pick(_CLOSERS)}"
    elif kind == "token":
        body = pick((f"[[{n}]]", f"[[ {n} ]]", f"[RESULT] {n}", f"[result]: {n}", f"[[{n}]] if the reply is good",
                     f"[[{n}]] means excellent", "[[A]]", "[[B]]", "[[C]]", "[[A>>B]]", "[[B>A]]", "[[A=B]]",
                     "[[tie]]", f"[[{n}]]”"))
    elif kind == "mark":
        body = f"{n}{pick(_DENS)}{pick(_CLOSERS)}"
    elif kind == "stars":
        body = pick((f"{n} stars", f"{n}-star", f"{n} / 5 stars", "★★★☆☆", "★★★★★", "★☆", f"{n} star rating"))
    elif kind == "idiom":
        body = pick((f"a {n}{pick(_CLOSERS)}", f"a perfect {n} in terms of coherence", f"an {n}, perfect",
                     f"a solid {n} because", f"perfect relevance, {n}.", f"perfect fluency,{n}", f"is a {n} since", f"irrelevant ({n}).", f"fluent\t({n})", f"bad({n}).", f"weak \t ( {n} )",
                     f"good ({n}/5)", f"a strong {n} overall", f"a {n} for fluency"))
    elif kind == "json":
        key = pick(("score", "rating", "grade", "final_score", "coherence", "winner", "Score", "label", "other"))
        value = pick((n, f'"{n}"', "true", "null", '"A"', '"b"', '"tie"', '"relevant"', "[1, 2]"))
        body = pick((f'{{"{key}": {value}, "explanation": "a score of {n} was tempting"}}', f"{{'{key}': {value}}}",
                     f'{{"{key}": {value},}}', f'{{"{key}": ', f'```json\n{{"{key}": {value}}}\n```',
                     f'{{"a": {{"{key}": {value}}}}}', f'{{{key}: {value}}}'))
    elif kind == "quote":
        inner = _fragment(pick)
        body = pick((f'"{inner}"', f"“{inner}”", f"```\n{inner}\n```", f"> {inner}", f"'{inner}'", f'"{inner}',
                     f"```python {inner}"))
    elif kind == "markdown":
        body = pick((f"**Score:** {n}", f"# Score: {n}", f"__Rating__: {n}", f"`{n}`", f"*{n}*/5",
                     f"## Final verdict\n{n}", f"**{n}**", f"Score: **{n}/5**"))
    elif kind == "list":
        body = pick((f"1. Grammar: {n}/5", f"* Accuracy: {n}/5", f"- Coherence: {n}", f"a) relevance {n} out of 5",
                     f"2) fluency: {n}", f"• Score: {n}"))
    elif kind == "think":
        body = pick((f"<think>Score: {n}</think>", "<think>", "</think>", f"<thinking>{n}/5</thinking>",
                     f"<THINK>maybe {n}</THINK>"))
    elif kind == "label":
        body = pick((f"{pick(_LABELS)}", f"Label: {pick(_LABELS)}", f"Verdict - {pick(_LABELS)}",
                     f"My answer is {pick(_LABELS)}", f"final decision: {pick(_LABELS)}", f"Judgement: {pick(_LABELS)}",
                     f"classification = {pick(_LABELS)}", f"Category - {pick(_LABELS)}", f"result: {pick(_LABELS)}", f"({pick(_LABELS)})",
                     f"{pick(_LABELS)}: {n}", f"Coherence (1-5): {n}", f"relevance = {n}"))
    elif kind == "winner":
        side = pick(("A", "B", "(a)", "(b)", "1", "2"))
        body = pick((f"Output {side} is better", f"Assistant {side} is clearly the winner", f"Winner: {side}",
                     f"I prefer Response {side}", f"{side} is better", f"Model {side} wins", "Tie", "it is a tie",
                     f"verdict is {side}", f"the better answer is {side}", f"neither Output {side} nor",
                     f"Output {side} is the best", f"Preferred response: {side}", f"preferred: Output {side}", f"{side}\tis better",
                     f"I select Output {side}", f"I pick {side}", f"Response {side} is stronger",
                     f"preferable: {side}", f"candidate {side} is preferable",
                     f"I would choose system {side}", "winner: draw", f"Answer: {side}", f"{side}\n\nbecause"))
    elif kind == "final":
        body = pick((f"{n}", f"{n}.", f"({n})", f"{n}/5", f"{n}\n\nThe reply is fine.", f"{n} !", f"-{n}"))
    elif kind == "range":
        body = pick((f"{n}-5", f"{n} to 5", f"{n} – 3", f"v{n}", f"{n}th", f"{n}.{n}", f"{n}x", f"#{n}"))
    else:
        body = " ".join(pick(_JUNK_WORDS) for _ in range(int(pick(("1", "2", "3", "5", "8")))))
    if pick(("", "", "", "upper")):
        body = body.upper()
    return lead + body


def _reply(pick: Pick, parts: int) -> str:
    return "".join(_fragment(pick) + pick(_SEPARATORS) for _ in range(parts)).strip(pick(("", " ", "\n")))


@contextmanager
def _reference() -> Iterator[None]:
    """The plain scans: every shortcut off (restored after)."""
    before = verdict_text._FAST, reply_text._FAST
    verdict_text._FAST = reply_text._FAST = False
    try:
        yield
    finally:
        verdict_text._FAST, reply_text._FAST = before


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ParseFailure as failure:
        return ("ParseFailure", str(failure))


_SCALES = ((1, 5), (1, 10), (0, 1), (1, 3), (0, 100))
_LABEL_SETS = (None, ["coherence"], ["relevance", "fluency"], ["Final score"], ["score", "(a)"])
_LABEL_CHOICES = (["yes", "no"], ["relevant", "not relevant"], ["A", "B", "tie"], ["Relevant", "partially relevant"])


def _results(text: str) -> list[Any]:
    """Everything the readers derive from ``text``: the candidates and the Parsed of every reader."""
    out: list[Any] = []
    for i, labels in enumerate(_LABEL_SETS):
        out.append(_outcome(lambda labels=labels: verdict_text.score_candidates(text, labels or ())))
        out.append(parse_score(text, _SCALES[i], labels))
        out.append(parse_score(text, _SCALES[-1 - i], labels, decimals=False))
    out.append(_outcome(lambda: verdict_text.winner_candidates(text)))
    out.append(parse_winner(text))
    out.extend(parse_label(text, labels) for labels in _LABEL_CHOICES)
    return out


def _assert_same(text: str) -> None:
    fast = _results(text)
    with _reference():
        reference = _results(text)
    assert fast == reference, text


@st.composite
def _replies(draw: st.DrawFn) -> str:
    pick: Pick = lambda options: draw(st.sampled_from(options))  # noqa: E731
    parts = [_fragment(pick) if draw(st.integers(0, 3)) else draw(st.text(max_size=12))
             for _ in range(draw(st.integers(1, 6)))]
    return "".join(part + pick(_SEPARATORS) for part in parts)


_SETTINGS = settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_replies())
def test_fast_readers_equal_the_plain_scans_on_judge_like_replies(text: str) -> None:
    """Invariant: for every reply built from the grammar (and random text), score_candidates and
    winner_candidates give equal candidate lists (or the same ParseFailure), and parse_score (several scales,
    labels, decimals on and off), parse_winner and parse_label give equal Parsed (value, reason, status, tier,
    matched span, rule), with the shortcuts on and off."""
    _assert_same(text)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.text(alphabet=st.sampled_from("0123456789 \t\n.,:;/-–()[]{}*#_`>\"“”'!?★☆aenorstvfilgd٣İ"), max_size=80))
def test_fast_readers_equal_the_plain_scans_on_random_characters(text: str) -> None:
    """Invariant: the same equality on short strings of the characters the patterns and gates turn on
    (digits, separators, brackets, quotes, markdown marks, glyphs, the letters of the keywords)."""
    _assert_same(text)


def _fuzz(count: int, seed: int) -> None:
    rng = random.Random(seed)
    pick: Pick = rng.choice
    for _ in range(count):
        text = _reply(pick, rng.randint(1, 8))
        if rng.random() < 0.2:  # a sprinkle of random characters in random places
            chars = list(text)
            for _ in range(rng.randint(1, 4)):
                chars.insert(rng.randint(0, len(chars)), rng.choice("0123456789 \n.:/()[]{}*#`>\"'★aens-"))
            text = "".join(chars)
        _assert_same(text)


def test_fast_readers_equal_the_plain_scans_on_each_construct_alone() -> None:
    """Invariant: the same equality on 3,000 seeded replies of one construct each (with or without a lead-in
    and surrounding text), where no other mark can stand in for one a wrong shortcut drops."""
    rng = random.Random(7)
    for _ in range(3_000):
        text = _fragment(rng.choice)
        _assert_same(rng.choice(("", "The reply is fine. ", "ok\n")) + text + rng.choice(("", ".", "\n", " because")))


def test_fast_readers_equal_the_plain_scans_on_a_seeded_fuzz() -> None:
    """Invariant: the same equality on 400 seeded random replies from the grammar, some with random
    characters inserted (a short run of the long fuzz below)."""
    _fuzz(400, seed=28)


@pytest.mark.long
@pytest.mark.timeout(3600)  # ~11 min of CPU on an idle machine, more on a shared one
def test_fast_readers_equal_the_plain_scans_on_a_long_seeded_fuzz() -> None:
    """Invariant: the same equality on 200,000 seeded random replies (pytest --long)."""
    _fuzz(200_000, seed=2028)


@pytest.mark.long
@pytest.mark.timeout(3600)  # ~2 min on an idle machine, more on a shared one
def test_fast_readers_equal_the_plain_scans_on_the_parse_corpus(data_dir: Path) -> None:
    """Invariant: the same equality on every distinct real judge reply of the parse corpus (LLMBar, LLM_summeval,
    OpenQA-eval: 25,045 replies, a few minutes; pytest --long)."""
    texts = sorted({r.text for r in records(data_dir)})
    assert len(texts) > 20_000
    for text in texts:
        _assert_same(text)


def test_the_reference_switch_reaches_the_plain_scans() -> None:
    """The switch the tests rely on does turn the shortcuts off: with it, a reply without markdown still goes
    through _clean's character map (a list), with the shortcuts the identity range."""
    _, origin = verdict_text._clean("Score: 4")
    assert isinstance(origin, range)
    with _reference():
        _, origin = verdict_text._clean("Score: 4")
    assert origin == list(range(9))
