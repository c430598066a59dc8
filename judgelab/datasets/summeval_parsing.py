"""Scores from the raw text of LLM_summeval judge outputs, read by judgelab's one parsing layer.

Each parser returns a :class:`ScoreParse`: a score on the 1-5 scale (decimals allowed, as the
authors' own rule allows "4.5"), or ``None`` with a reason naming what was wrong.

- ``rts`` / ``altrts`` (rate-then-explain and its variant) and ``stareval`` (stars):
  :func:`judgelab.rubrics.verdict_text.read_score` -- explicit score phrases first ("Score: 4",
  "a score of 3", "I would score it a 2 out of 5", "Fluency: 3"), then bare marks ("4 out of 5",
  "4/5", "Four stars"), then a final standalone number; hypothetical mentions ("keeps it from
  being a perfect 5 out of 5") never count.
- ``mcq`` / ``altmcq``: :func:`judgelab.rubrics.verdict_text.read_choice` with A=1 ... E=5.

:func:`publisher_score` is the authors' own extraction (``utils.py`` of DAMO-NLP-SG/LLM_summeval),
restated here so their numbers can be reproduced and every disagreement audited:

- rts: the first ``score: N`` (N in 1-5, one optional decimal), else ``score: <word>``, else the
  first digit 1-5 after "score"/"scoring" in the same sentence, else a number word there, else
  ``score of <word>``, else the LAST digit 1-5 anywhere in the text; nothing at all -> -1;
- mcq: the whole reply must be one letter A-E (anything else stops their script);
- stareval: the token before the first " star" (a number or a number word; else their script stops).

Their last-resort digit reads "3 out of 5" as 5 and "a 4 out of 5" as 5 when no "score" word is
present; their first-phrase rule reads "a score of 5 ... resulting in a score of 4" as 5.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from judgelab.errors import ConfigError
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.verdict_text import TextVerdict, read_choice, read_score

__all__ = ["LETTERS", "PARSERS", "ScoreParse", "parse_mcq", "parse_rts", "parse_stareval", "publisher_score"]

SCALE = (1, 5)
LETTERS: dict[str, float] = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 4.0, "E": 5.0}
_LABELS = ("score", "coherence", "consistency", "fluency", "relevance")


@dataclass(frozen=True)
class ScoreParse:
    score: float | None
    reason: str | None = None  # why there is no score
    matched: str | None = None  # the text span the score came from
    rule: str | None = None  # which rule of the parsing layer decided


def _wrap(read: Callable[[], TextVerdict]) -> ScoreParse:
    try:
        found = read()
    except ParseFailure as failure:
        return ScoreParse(None, failure.reason)
    return ScoreParse(float(found.value), None, found.matched, found.rule)


def parse_rts(text: str) -> ScoreParse:
    """A rate-then-explain reply: the score phrase that decides (see :func:`read_score`)."""
    return _wrap(lambda: read_score(text, SCALE, decimals=True, labels=_LABELS))


def parse_stareval(text: str) -> ScoreParse:
    """A star rating ("4 stars", "Four stars.", "3 out of 5 stars", "★★★★☆")."""
    return _wrap(lambda: read_score(text, SCALE, decimals=True, labels=_LABELS))


def parse_mcq(text: str) -> ScoreParse:
    """One option letter A-E, alone or leading the answer ("B", "(D)", "Answer: C. ...")."""
    return _wrap(lambda: read_choice(text, LETTERS))


PARSERS: dict[str, Callable[[str], ScoreParse]] = {
    "rts": parse_rts,
    "altrts": parse_rts,
    "mcq": parse_mcq,
    "altmcq": parse_mcq,
    "stareval": parse_stareval,
}

# ---------------------------------------------------------------- the authors' rule, for reproduction
_NUMBER_WORDS = ("one", "two", "three", "four", "five")
_WORD_RE = "|".join(_NUMBER_WORDS)


def _publisher_rts(text: str) -> float:
    lowered = text.lower()
    if m := re.search(r"score:\s*([1-5](?:\.\d)?)", lowered):
        return float(m.group(1))
    if m := re.search(rf"score:\s*({_WORD_RE})", lowered):
        return float(_NUMBER_WORDS.index(m.group(1)) + 1)
    if m := re.search(r"(?:score|scoring)[^.]+[1-5](?:\.\d)?", lowered):
        return float(re.search(r"[1-5](\.[1-5])?", m.group(0)).group(0))  # type: ignore[union-attr]
    for pattern in (rf"(?:score|scoring)[^.]+\s(?:{_WORD_RE})[\s.,]", rf"score of (?:{_WORD_RE})[\s.,]"):
        if m := re.search(pattern, lowered):  # their value: the FIRST number word inside the whole match
            return float(_NUMBER_WORDS.index(re.search(_WORD_RE, m.group(0)).group(0)) + 1)  # type: ignore[union-attr]
    if hits := re.findall(r"[1-5](?:\.\d\s)?(?:out of [1-5])?", lowered):
        return float(re.search(r"[1-5](\.[1-5])?", hits[-1]).group(0))  # type: ignore[union-attr]
    return -1.0


def _publisher_stars(text: str) -> float | None:
    m = re.search(r"(\S+)\sstar", text.lower())
    if m is None:
        return None
    token = m.group(1)
    if token in _NUMBER_WORDS:
        return float(_NUMBER_WORDS.index(token) + 1)
    try:
        return float(token)
    except ValueError:
        return None


def publisher_score(method: str, text: str) -> float | None:
    """The score the LLM_summeval authors' script extracts (-1: their "cannot extract" for rts).

    ``None`` where their script would stop with an error (an mcq reply that is not one letter, a
    stareval reply without "<n> star").
    """
    if method in ("rts", "altrts"):
        return _publisher_rts(text)
    if method in ("mcq", "altmcq"):
        return LETTERS.get(text.strip())
    if method == "stareval":
        return _publisher_stars(text)
    raise ConfigError(f"unknown LLM_summeval method {method!r}; known: {', '.join(PARSERS)}")
