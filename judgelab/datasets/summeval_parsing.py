"""Scores from the raw text of LLM_summeval judge outputs, one parser per prompt style.

Each parser returns a :class:`ScoreParse`: a score on the 1-5 scale, or ``None`` with a reason
naming what was wrong. Nothing is ever guessed from a stray digit: a response with no explicit
score phrase is unparseable, not a 0 and not "the last number in the text".

- ``mcq`` / ``altmcq``: the answer is one option letter A-E (A=1 ... E=5).
- ``stareval``: "<n> star(s)" with a digit or a number word; the first such phrase is the verdict.
- ``rts`` / ``altrts`` (rate-then-explain and its variant): an explicit score phrase such as
  "Score: 4", "score of 3", "scoring a 2", "Final score: 5 (...)", "4/5" or "4 out of 5"; when a
  response states several, the last "score" phrase wins (the verdict usually closes the text).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PARSERS", "ScoreParse", "parse_mcq", "parse_rts", "parse_stareval"]

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
_NUM = r"(\d+(?:\.\d+)?|one|two|three|four|five)"
_OUT_OF = r"(?:\s*/\s*(\d+)|\s+out\s+of\s+(\d+|five|ten))?"


@dataclass(frozen=True)
class ScoreParse:
    score: float | None
    reason: str | None = None  # why there is no score
    matched: str | None = None  # the text span the score came from


def _number(token: str) -> float:
    return float(_WORDS.get(token.lower(), token))


def _checked(value: float, span: str, denominator: str | None) -> ScoreParse:
    if denominator and _number(denominator.replace("ten", "10")) != 5:
        return ScoreParse(None, f"score {span!r} is not on the 1-5 scale", span)
    if not 1 <= value <= 5:
        return ScoreParse(None, f"score {value:g} in {span!r} is outside 1-5", span)
    return ScoreParse(value, None, span)


_MCQ = re.compile(r"^\s*(?:answer\s*:?\s*|option\s*)?\(?([A-E])\)?\s*(?:[.):]\s*)?(?:$|\s)", re.IGNORECASE)


def parse_mcq(text: str) -> ScoreParse:
    """One option letter A-E, alone or leading the answer ("B", "(D)", "Answer: C. ...")."""
    stripped = text.strip()
    if not stripped:
        return ScoreParse(None, "empty response")
    m = _MCQ.match(stripped)
    if m is None or (
        len(stripped) > 3 and not m.group(0).strip().endswith((".", ")", ":")) and " " in stripped[:2]
    ):
        return ScoreParse(None, f"no option letter A-E at the start of {stripped[:60]!r}")
    return ScoreParse(float("ABCDE".index(m.group(1).upper()) + 1), None, m.group(0).strip())


_STARS = re.compile(rf"\b{_NUM}{_OUT_OF}\s*(?:-\s*)?stars?\b", re.IGNORECASE)


def parse_stareval(text: str) -> ScoreParse:
    """The first "<n> star(s)" phrase ("4 stars", "Four stars.", "3 out of 5 stars")."""
    m = _STARS.search(text)
    if m is None:
        return ScoreParse(None, f"no '<n> stars' phrase in {text.strip()[:60]!r}")
    return _checked(_number(m.group(1)), m.group(0), m.group(2) or m.group(3))


_CRITERIA = r"(?:coherence|consistency|fluency|relevance|overall)"
_NUM_LOWER = r"(\d+(?:\.\d+)?|one|two|three|four|five)"
_OUT_OF_LOWER = r"(?:\s*/\s*(\d+)|\s+out\s+of\s+(\d+|five|ten))?"
# Tier 1: explicit score statements. Tier 2: idioms some judges use instead ("making it a 5",
# "a perfect relevance (5)"), consulted only when tier 1 has no in-range score. Patterns run on
# the lower-cased text, each only when its literal cue occurs (plain `in` checks are far cheaper
# than a case-insensitive regex scan of a long reply).
_TIER_1: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (
        ("scor", "rat"),
        re.compile(
            rf"\b(?:scor(?:e|es|ed|ing)|rat(?:e|es|ed|ing))\b[^.\n\d]{{0,80}}?\(?{_NUM_LOWER}\)?{_OUT_OF_LOWER}"
        ),
    ),
    (("/", "out of"), re.compile(rf"\b{_NUM_LOWER}(?:\s*/\s*(\d+)|\s+out\s+of\s+(\d+|five|ten))")),
    ((":",), re.compile(rf"\b{_CRITERIA}\s*:\s*{_NUM_LOWER}{_OUT_OF_LOWER}")),
)
_TIER_2: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    (
        ("a ",),
        re.compile(r"\ba\s+(?:perfect\s+)?([1-5])(?:\s+in\s+terms\b|\s*,|\s+because\b|\s+for\b|\s*\.)()()"),
    ),
    (("(",), re.compile(r"\(([1-5])\)()()")),
)


def parse_rts(text: str) -> ScoreParse:
    """The last in-range explicit score statement; idioms only when there is none (see module doc)."""
    if not text.strip():
        return ScoreParse(None, "empty response")
    lowered = text.lower()
    rejected: list[ScoreParse] = []
    for tier in (_TIER_1, _TIER_2):
        found = sorted(
            (
                (m.start(), _checked(_number(m.group(1)), m.group(0), m.group(2) or m.group(3)))
                for cues, pattern in tier
                if any(cue in lowered for cue in cues)
                for m in pattern.finditer(lowered)
            ),
            key=lambda pair: pair[0],
        )
        valid = [parse for _, parse in found if parse.score is not None]
        if valid:  # a phrase about the article ("scored 15 goals") is not the verdict
            return valid[-1]
        rejected.extend(parse for _, parse in found)
    if rejected:
        return rejected[0]
    return ScoreParse(None, f"no explicit score ('score: n', 'n/5', 'n out of 5') in {text.strip()[:60]!r}")


PARSERS: dict[str, Callable[[str], ScoreParse]] = {
    "rts": parse_rts,
    "altrts": parse_rts,
    "mcq": parse_mcq,
    "altmcq": parse_mcq,
    "stareval": parse_stareval,
}
