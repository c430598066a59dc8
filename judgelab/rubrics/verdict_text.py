"""Verdicts written as free text: a score, a pairwise winner, an option letter, a yes/no.

Every reader takes the judge's raw reply, sets ``<think>`` reasoning aside
(:func:`judgelab.rubrics.reply_text.answer_text`), and returns a :class:`TextVerdict` (the value, the
span it came from, the rule that decided) or raises :class:`ParseFailure` saying what was wrong.
Nothing is guessed from a stray digit.

**Scores** (:func:`read_score`), in three tiers; a lower tier is consulted only when the one above
found nothing:

1. explicit score phrases: ``Score: 4``, ``Final score: 4/5``, ``Rating: [[8]]``, ``[RESULT] 4``,
   ``[[4]]``, ``a score of 4``, ``I would give it a 3.5``, ``I'd rate it 4``, ``scoring a 2``,
   ``it scores a 2.``, ``<label>: 4`` for the labels a caller names (e.g. the criterion).
2. bare marks: ``4/5``, ``4 out of 5``, ``★★★☆☆``, ``4 stars``, idioms ("is a 4 because ...", "a perfect 5
   in terms of ...", "irrelevant (1)." when it is the only parenthesized number); the last one wins.
3. a standalone number closing the reply (``... the summary misstates the scorer. 2.``) or alone on its
   first line before a rationale (``2\n\nThe reply stays on topic.``).

A verdict token -- a JSON ``score`` field (also ``rating``, ``grade``, ``final_score`` and the caller's
labels), ``[[N]]``, ``[RESULT] N`` -- decides over phrases when the reply has one. Otherwise, when a
tier holds several marks: marks on the scale beat marks on another scale; a mark in running
text beats the sub-scores of a list ("1. Grammar: 3/5", "* Accuracy: 5/5"); a phrase naming the
*final*/*overall*/*total* score (or ``[RESULT]``) beats the others; and among equals the LAST wins
(the verdict closes the reply; an echoed instruction or a self-correction comes earlier).

In tiers 1 and 2 a phrase in a hypothetical, negated or comparative context ("keeps it from being a
perfect 5", "to achieve a 5", "would have earned 5", "rather than a 3", "not a 5") is set aside.
"scored"/"scores" count only as "<it / the summary / this ...> scores a 2" with the number closing the
clause, never in "scored in the 87th minute" or "has scored 15 penalties"; ranges ("1-5", "3-1") and
other numbers inside the text never count.
The chosen value must be on the scale: out of range, on another scale, or a decimal where the scale
takes integers, it is a ParseFailure naming the value -- never a clamp, never a rounding.

**Pairwise winners** (:func:`read_winner`): ``[[A]]``/``[[B]]``/``[[C]]`` (MT-Bench; C is a tie),
``[[A>>B]]``/``[[A>B]]``/``[[A=B]]`` (Arena-Hard), then phrases ("Output (a) is better",
"Assistant B is better", "Winner: A", "I prefer Response B"), then a reply that starts with the
label ("Output (b)", "A", "(a)", "Tie", or a bare "1"/"2" alone on its first line). The last verdict of the strongest tier wins; a negated or
hypothetical phrase ("neither Output (a) nor Output (b) is better") does not count. A JSON ``winner``
field counts as a verdict token.

**Labels** (:func:`read_label`): the whole answer, "Label: X" / "Verdict: X" phrases, or a leading label,
among the labels a caller declares.

**Conflicting verdicts are not guessed** (:mod:`judgelab.rubrics.verdict_conflicts`): the tiers above choose
among candidates that agree or revise one another (a stated score after a first guess; a "final" score
after a draft). They never choose between verdicts that disagree: two verdict tokens (a JSON score/winner
field, ``[[N]]``, ``[[A]]``, ``[RESULT] N``) with different values, a statement after a verdict token that
differs from it, or a verdict in a quoted passage ("...", a code block, a ``>`` line: the response under
review or the instructions, cited) that differs from the judge's own make the reply a ParseFailure
"conflicting verdicts: <one> and <the other>". Quoted verdicts naming several values (the instructions'
list of options) are set aside; agreeing duplicates are read. A JSON object's own text never counts as a
phrase ("explanation": "a score of 3 was tempting" is not a second score).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.reply_text import (
    JsonObject,
    answer_text,
    json_objects,
    quoted_regions,
    strip_code_fences,
)
from judgelab.rubrics.verdict_conflicts import SCORE_KEYS, Mark, mark_conflict, strongest

__all__ = [
    "ScoreCandidate", "TextVerdict", "WinnerCandidate", "read_choice", "read_label", "read_score", "read_winner",
    "read_yes_no",
    "score_candidates", "winner_candidates",
]

_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10}
_WORD = "|".join(_WORDS)
# a number that is a whole token: not "87th", not part of "1-5" / "3-1" / "1 to 5", not a version "v2.5"
_NUM = rf"(?<![\w.])(?P<num>-?\d+(?:\.\d+)?|{_WORD})(?![\w])(?![ \t]*[-–][ \t]*\d)(?![ \t]+to[ \t]+\d)"
_DEN = r"(?:[ \t]*/[ \t]*(?P<den>\d+)(?![\w/]|\.\d)|[ \t]+out[ \t]+of[ \t]+(?P<den_w>\d+|five|ten)(?![\w]))?"
_BRACKETED = rf"\[{{0,2}}[ \t]*{_NUM}(?:[ \t]*\]{{1,2}})?{_DEN}"
# markdown emphasis, code and heading marks (a "* " list bullet stays: list items are told apart below)
_STRIP = re.compile(r"\*\*|__|`+|^[ \t]*#+[ \t]*|(?<=\w)\*|\*(?=\w)", re.MULTILINE)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*•]|\d{1,2}[.)]|[a-z][.)])[ \t]+", re.MULTILINE)


@dataclass(frozen=True)
class TextVerdict:
    """A value read from free text: ``matched`` is the span it came from, ``rule`` the rule that decided."""

    value: float | str
    matched: str
    rule: str
    tier: int = 1


@dataclass(frozen=True)
class ScoreCandidate:
    """One score mark found in a reply: where, its value (and denominator), tier 1-3 and rule."""

    start: int
    end: int
    value: float
    denominator: float | None
    tier: int
    final: bool
    rule: str
    text: str
    in_list: bool = False  # inside a list item ("1. Grammar: 3/5", "* Accuracy: 5/5"): a sub-score
    quoted: bool = False  # inside a quoted passage, code block or > line: cited, not said (verdict_conflicts)
    formal: bool = False  # a JSON score field, [[N]] or [RESULT] N: a verdict token


# ---------------------------------------------------------------- score phrases (one line each: [ \t], not \s)
_FINAL_WORDS = r"(?:final|overall|total)"
_SCORE_NOUN = r"(?:score|rating|grade|verdict)"
_LABEL_PHRASE = re.compile(
    rf"(?P<final>\b{_FINAL_WORDS}[ \t]+(?:[a-z]+[ \t]+)?)?\b{_SCORE_NOUN}\b[ \t]*(?:\([^()\n]{{0,20}}\)[ \t]*)?"
    rf"(?:(?:[:=]|-(?!\d)|\bis\b|\bof\b|\b(?:would|will|should)[ \t]+be\b)[ \t]*)?(?:(?:a|an)[ \t]+)?{_BRACKETED}"
)
_NOT_OBJECT = r"(?:for|than|to|in|on|of|and|or|but|from|by|about|up|only|more|less|because|if|when|out)"
# what may follow the number of a verb phrase: the clause ends, or the scale, a reason or a unit follows
_CLOSES = (r"(?=\s*(?:[.,;:!?)\n]|$|/|out\s+of\b|(?:for|on|in|because|as|since|and|but|overall|which|with|due|"
           r"given|based|points?|stars?)\b|\(|-\s*[a-z]))")
# "scores"/"scored" count only with the judged text (or "and" continuing its clause) as subject:
# "therefore it scores a 2." -- never "Kane scored in the 87th minute" or "has scored 15 penalties"
_VERB = (r"(?:\b(?:give|giving|assign|assigning|award|awarding|rate|rating|score|scoring|grade|grading)|"
         r"\b(?:it|this|which|that|summary|response|answer|output|text|and)[ \t]+"
         r"(?:(?:thus|therefore|so|only|also)[ \t]+)?(?:scores|scored))\b")
_VERB_PHRASE = re.compile(
    rf"{_VERB}(?P<gap>(?:[ \t]+(?!{_NOT_OBJECT}\b)[a-z'-]+){{0,5}}?)[ \t]+"
    rf"(?:(?:score|rating|grade)[ \t]+)?(?:of[ \t]+)?{_BRACKETED}{_CLOSES}"
)
_AS_PHRASE = re.compile(
    rf"\b(?:score|rate|grade|rank)\b(?:[ \t]+[a-z'-]+){{1,10}}?[ \t]+as[ \t]+(?:an?[ \t]+)?{_BRACKETED}{_CLOSES}"
)
_DOUBLE_BRACKET = re.compile(rf"\[\[[ \t]*{_NUM}[ \t]*\]\]")
_RESULT = re.compile(rf"\[result\][ \t]*:?[ \t]*{_NUM}")
_FRACTION = re.compile(rf"{_NUM}{_DEN.removesuffix('?')}")  # the denominator is required here
_STARS_WORD = re.compile(rf"{_NUM}{_DEN}[ \t]*(?:-[ \t]*)?stars?\b")
_STAR_GLYPHS = re.compile(r"(?P<filled>★+)(?P<empty>☆*)")
# "is a 4 because", "making it a perfect 5 in terms of coherence", "a 5, perfect relevance", "a perfect fluency, 5."
_IDIOM_CLOSES = r"(?=\s*(?:[.,;:!)\n]|$|in\s+terms\b|because\b|as\b|since\b|overall\b|for\s+[a-z]))"
_A_N = re.compile(rf"\ban?[ \t]+(?:(?:perfect|solid|strong)[ \t]+)?{_NUM}{_DEN}{_IDIOM_CLOSES}")
_PERFECT_NOUN_N = re.compile(rf"\bperfect[ \t]+[a-z]+[ \t]*,[ \t]*{_NUM}{_IDIOM_CLOSES}")
_PARENTHESIZED = re.compile(rf"(?<=[a-z])[ \t]*\([ \t]*{_NUM}{_DEN}[ \t]*\)")  # "irrelevant (1)"; one per reply
# after a sentence end or on its own line; never after a colon ("Downgrade: 2" is a label, not a score)
_FINAL_NUMBER = re.compile(
    r"(?:^|[.!?]\s+|\n\s*)\(?(?P<num>-?\d+(?:\.\d+)?)\)?(?:\s*/\s*(?P<den>\d+))?\s*[.!]?\s*$"
)
# a number alone on the answer's first line, a rationale after it (" 2\n\nThe reply is ..."): G-Eval's samples
_LEADING_NUMBER = re.compile(
    r"^\s*\(?(?P<num>-?\d+(?:\.\d+)?)\)?(?:[ \t]*/[ \t]*(?P<den>\d+))?[ \t]*[.!]?(?=[ \t]*\n\s*\S)"
)
# a phrase right after one of these (up to four plain words between) is hypothetical or comparative
_HYPOTHETICAL = re.compile(
    r"\b(?:from[ \t]+(?:being|reaching|achieving|getting|receiving|earning|attaining|a|an)|prevent\w*|"
    r"would[ \t]+have|could[ \t]+have|should[ \t]+have|might[ \t]+have|could[ \t]+be|might[ \t]+be|"
    r"to[ \t]+(?:achieve|reach|get|earn|receive|warrant|merit|deserve|justify|be|give|award|assign)|"
    r"rather[ \t]+than|instead[ \t]+of|than|not|no|nor|neither|never|if|unless|short[ \t]+of|"
    r"compared[ \t]+(?:to|with)|versus|vs|below|above|beyond|needs?[ \t]+to[ \t]+be|would[ \t]+need)"
    r"(?:[ \t]+[a-z'-]+){0,4}[ \t]*$"
)


# a verdict token followed by its condition is an option the instructions list, not a verdict:
# "[[A]] if assistant A is better", "[[C]] for a tie", "[[5]] means excellent"
_OPTION_AFTER = re.compile(r"[ \t]*[\"'”’]?[ \t]*(?:if|when|for[ \t]+(?:a[ \t]+)?ties?|means)\b")


# ---------------------------------------------------------------- exact shortcuts (speed only)
# A scan of the whole text by a pattern that opens with a lookbehind, a \b or an optional group tries a match at
# every position; most replies hold few of the words a verdict needs. The shortcuts below skip such scans, or
# try the pattern only where a match can begin, and never change a result: each one names the text a match
# cannot do without (a *gate*: no such text, no match) or every string a match can begin with (its *starts*),
# read off the pattern next to it. _FAST = False runs the plain scans: the reference the tests compare with
# (tests/rubrics/test_verdict_text_fast.py), and the way to check a new pattern's gate.
_FAST = True
_DIGIT = re.compile(r"\d")  # \d is any Unicode digit, as in _NUM (float() reads them)
_VERB_WORD = re.compile(  # a _VERB_PHRASE verb (either form) and the [ \t] its gap or number must open with
    r"(?:give|giving|assign|assigning|award|awarding|rate|rating|score|scoring|grade|grading|scores|scored)[ \t]"
)
_VERB_STEMS = ("giv", "assign", "award", "rat", "scor", "grad")  # every _VERB_WORD word begins with one of them
_AS_WORDS = (" as ", " as\t", "\tas ", "\tas\t")  # the [ \t]as[ \t] of _AS_PHRASE
# the characters from a _HYPOTHETICAL match to the window's end (\n: "$" also matches before a final newline)
_HYPOTHETICAL_RUN = re.compile(r"[\w' \t\n-]*")
# the characters from a _FINAL_NUMBER match to the end: the sentence end, spaces, the number, "/", parentheses
_FINAL_NUMBER_RUN = re.compile(r"[.!?\s()\d/-]*")


def _has_number(text: str) -> bool:
    """Whether ``text`` holds a digit or a number word: every pattern reading a number needs one (_NUM's
    ``num`` is digits or one of _WORDS; _FINAL_NUMBER and _LEADING_NUMBER need a digit)."""
    if text.isascii():  # its only digits are 0-9, and ten substring searches beat a character-by-character \d scan
        digit = any(d in text for d in "0123456789")
    else:
        digit = _DIGIT.search(text) is not None
    return digit or any(word in text for word in _WORDS)


def _has_verb(text: str) -> bool:
    """Whether a _VERB_WORD (a verb of _VERB_PHRASE followed by a space or tab) occurs: tried where a stem occurs."""
    return any(_VERB_WORD.match(text, i) for stem in _VERB_STEMS for i in _occurrences(text, stem))


def _list_items(text: str) -> list[int]:
    """Where the _LIST_ITEM matches begin. With _FAST, tried only where ``^`` can match (multiline: the start
    and after each newline); a match stays on its line, so one line's match never hides the next line's."""
    if not _FAST:
        return [m.start() for m in _LIST_ITEM.finditer(text)]
    starts = (0, *(i + 1 for i in _occurrences(text, "\n")))
    return [i for i in starts if _LIST_ITEM.match(text, i)]


def _occurrences(text: str, literal: str) -> list[int]:
    places = []
    i = text.find(literal)
    while i >= 0:
        places.append(i)
        i = text.find(literal, i + 1)
    return places


def _matches_at(pattern: re.Pattern[str], text: str, starts: Iterable[str]) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose every match is non-empty and begins with one of the
    literals ``starts``: ``pattern.match`` at each place one occurs (:func:`_matches_from`)."""
    return _matches_from(pattern, text, [i for literal in starts for i in _occurrences(text, literal)])


def _matches_from(pattern: re.Pattern[str], text: str, places: list[int]) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern whose every match is non-empty and begins at one of ``places``:
    ``pattern.match`` at each, in order, from the end of the last match (as finditer resumes).
    ``match(text, i)`` sees the text before ``i`` (lookbehinds, \\b) as a scan does."""
    places.sort()  # a place found twice fails twice, or lies before the end of the match made there
    found: list[re.Match[str]] = []
    end = 0
    for i in places:
        if i >= end and (m := pattern.match(text, i)) is not None:
            found.append(m)
            end = m.end()
    return found


def _scan(pattern: re.Pattern[str], text: str, gate: bool = True,
          starts: Iterable[str] | None = None) -> Iterable[re.Match[str]]:
    """``pattern.finditer(text)``: nothing when the caller's ``gate`` is False, else the matches at ``starts``
    (:func:`_matches_at`) or a plain scan. With _FAST off, always the plain scan."""
    if not _FAST:
        return pattern.finditer(text)
    if not gate:
        return ()
    return pattern.finditer(text) if starts is None else _matches_at(pattern, text, starts)


_BLANK_RUN = re.compile(r"[ \t]*")
_TOKEN_RUN = re.compile(r"[\w.-]*")


def _fraction_starts(text: str) -> list[int]:
    """Every place a _FRACTION match can begin. Its denominator opens with "/" or "out" after [ \\t]
    characters only, and its number (digits, a decimal point, a sign, or a number word: \\w . - characters)
    ends where those begin: the number begins in the run of \\w . - characters ending there."""
    rev, n = text[::-1], len(text)
    places: list[int] = []
    for k in (*_occurrences(text, "/"), *_occurrences(text, "out")):
        end = n - _BLANK_RUN.match(rev, n - k).end()  # rev[n - k] is text[k - 1]: runs read backwards from k
        places.extend(range(n - _TOKEN_RUN.match(rev, n - end).end(), end))
    return places


def _parenthesized_starts(text: str) -> list[int]:
    """Every place a _PARENTHESIZED match can begin: at a "(" or in the run of [ \\t] characters before it."""
    rev, n = text[::-1], len(text)
    return [i for k in _occurrences(text, "(") for i in range(n - _BLANK_RUN.match(rev, n - k).end(), k + 1)]


def _run_start(run: re.Pattern[str], text: str) -> int:
    """Where the longest suffix of ``text`` made of ``run``'s characters begins (read on the reversed text)."""
    return len(text) - run.match(text[::-1]).end() if _FAST else 0


def _hypothetical(window: str) -> bool:
    """Whether a hypothetical or comparative lead-in closes ``window`` (:data:`_HYPOTHETICAL`). A match and
    everything after it up to the end are _HYPOTHETICAL_RUN characters, so no match begins before the
    window's last run of them; the character before that run is not a word character, so \\b sees the same."""
    return _HYPOTHETICAL.search(window, _run_start(_HYPOTHETICAL_RUN, window)) is not None


def _number(token: str) -> float:
    return float(_WORDS.get(token, token))


def _den(m: re.Match[str]) -> float | None:
    groups = m.groupdict()
    den = groups.get("den") or groups.get("den_w")
    return _number(den) if den else None


def _label_names(labels: Sequence[str]) -> list[str]:
    """The caller's labels as the lowered text reads them (blank ones left out)."""
    return [label.strip().lower() for label in labels if label and label.strip()]


def _labelled(labels: Sequence[str]) -> re.Pattern[str] | None:
    names = [re.escape(name) for name in _label_names(labels)]
    if not names:
        return None
    return re.compile(rf"\b(?:{'|'.join(names)})\b[ \t]*(?:\([^()\n]{{0,20}}\)[ \t]*)?(?:[:=]|-(?!\d))[ \t]*"
                      rf"{_BRACKETED}")


def _labelled_names(labels: Sequence[str]) -> tuple[re.Pattern[str] | None, list[str]]:
    """:func:`_labelled` and the names it matches (where its matches begin); with _FAST, kept per tuple of labels
    (building the pattern and looking it up in re's cache cost more than a short reply's scans)."""
    if _FAST:
        try:
            return _labelled_names_kept(tuple(labels))
        except TypeError:  # an unhashable label: the plain call raises or answers as before
            pass
    return _labelled(labels), _label_names(labels)


@functools.lru_cache(maxsize=64)
def _labelled_names_kept(labels: tuple[str, ...]) -> tuple[re.Pattern[str] | None, list[str]]:
    return _labelled(labels), _label_names(labels)


def _clean(text: str) -> tuple[str, Sequence[int]]:
    """The text without markdown marks (:data:`_STRIP`), and for each of its characters the position it
    had in ``text`` (plus one past the end); lowercase keeps the length (so positions stay valid)."""
    if _FAST and "*" not in text and "__" not in text and "`" not in text and "#" not in text:
        return text, range(len(text) + 1)  # every _STRIP alternative needs one of these: nothing to strip
    pieces: list[str] = []
    origin: list[int] = []
    pos = 0
    for m in _STRIP.finditer(text):
        pieces.append(text[pos : m.start()])
        origin.extend(range(pos, m.start()))
        pos = m.end()
    pieces.append(text[pos:])
    origin.extend(range(pos, len(text)))
    origin.append(len(text))
    return "".join(pieces), origin


def _lower(text: str) -> str:
    if text.isascii():  # each ASCII character lowers to one character: str.lower is the same, ~100x faster
        return text.lower()
    return "".join(ch.lower() if len(ch.lower()) == 1 else ch for ch in text)


def _inside(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return bool(spans) and any(s <= start and end <= e for s, e in spans)  # (no spans: no generator to set up)


def _json_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(?:\.\d+)?\s*", value):
        return float(value)
    return None


def _preview_object(obj: JsonObject, answer: str) -> str:
    span = " ".join(answer[obj.start : obj.end].split())
    return span if len(span) <= 60 else span[:57] + "..."


def score_candidates(raw: str, labels: Sequence[str] = ()) -> list[ScoreCandidate]:
    """Every score mark in the answer that counts, in text order, with its tier (for auditing a parse).

    Hypothetical and comparative mentions, and any mark inside one, are already set aside. Positions are
    in the answer (reasoning set aside); ``quoted`` marks a candidate the judge cites rather than says,
    ``formal`` a verdict token (a JSON score field, ``[[N]]``, ``[RESULT] N``). A JSON object's own
    fields are read from its keys; phrases inside a JSON object's text never count.
    """
    answer = answer_text(raw)
    objects = json_objects(strip_code_fences(answer))
    quoted = quoted_regions(answer, objects)
    cleaned, origin = _clean(answer)
    lowered = _lower(cleaned)
    shown = cleaned
    found: list[ScoreCandidate] = []
    set_aside: list[tuple[int, int]] = []

    lead_ins: dict[int, bool] = {}  # position -> whether a hypothetical lead-in ends there (several marks share one)

    def hypothetical(s: int) -> bool:
        if s not in lead_ins:
            lead_ins[s] = _hypothetical(lowered[max(0, s - 60) : s])
        return lead_ins[s]

    def add(m: re.Match[str], tier: int, rule: str, final: bool = False, value: float | None = None,
            denominator: float | None = None) -> None:
        starts = {m.start()}
        if "num" in m.re.groupindex and m.group("num"):
            starts.add(m.start("num"))
        if tier < 3 and any(hypothetical(s) for s in starts):
            set_aside.append((m.start(), m.end()))
            return
        v = _number(m.group("num")) if value is None else value
        d = _den(m) if denominator is None else denominator
        begin = m.start("num") if tier == 3 else m.start()
        span = shown[begin : m.end()].strip(" .!")
        formal = rule in ("[[N]]", "[RESULT] N") or "[[" in m.group(0)
        found.append(ScoreCandidate(m.start(), m.end(), v, d, tier, final, rule, span, formal=formal))

    # the gates and starts of each scan, read off its pattern (see _scan); no number, no numeric mark
    number = _has_number(lowered)
    for m in _scan(_LABEL_PHRASE, lowered, number, ("final", "overall", "total", "score", "rating", "grade",
                                                    "verdict")):  # the optional final word, else the noun
        add(m, 1, "score phrase", final=bool(m.group("final")))
    for m in _scan(_VERB_PHRASE, lowered, number and _has_verb(lowered)):
        add(m, 1, "score phrase")
    as_phrase = number and any(word in lowered for word in _AS_WORDS)
    for m in _scan(_AS_PHRASE, lowered, as_phrase, ("score", "rate", "grade", "rank")):
        add(m, 1, "score phrase")
    for m in _scan(_DOUBLE_BRACKET, lowered, number and "[[" in lowered):
        if not _OPTION_AFTER.match(lowered, m.end()):
            add(m, 1, "[[N]]")
    for m in _scan(_RESULT, lowered, number and "[result]" in lowered):
        add(m, 1, "[RESULT] N", final=True)
    pattern, names = _labelled_names(labels)
    if pattern is not None:
        for m in _scan(pattern, lowered, number, names):
            add(m, 1, "labelled score")
    fraction = number and ("/" in lowered or "out" in lowered)  # the required _DEN
    for m in (_matches_from(_FRACTION, lowered, _fraction_starts(lowered)) if _FAST and fraction
              else _scan(_FRACTION, lowered, fraction)):
        add(m, 2, "N/D mark")
    for m in _scan(_STARS_WORD, lowered, number and "star" in lowered):
        add(m, 2, "N stars")
    for m in _scan(_STAR_GLYPHS, lowered, "★" in lowered):
        filled, empty = len(m.group("filled")), len(m.group("empty"))
        add(m, 2, "star glyphs", value=float(filled), denominator=float(filled + empty) if empty else None)
    for m in _scan(_A_N, lowered, number, ("a ", "a\t", "an ", "an\t")):  # "a"/"an" and the [ \t] after it
        add(m, 2, "'a N' idiom")
    for m in _scan(_PERFECT_NOUN_N, lowered, number and "perfect" in lowered and "," in lowered):
        add(m, 2, "'a N' idiom")
    paren = number and "(" in lowered and ")" in lowered
    parenthesized = (_matches_from(_PARENTHESIZED, lowered, _parenthesized_starts(lowered)) if _FAST and paren
                     else list(_scan(_PARENTHESIZED, lowered, paren)))
    if len(parenthesized) == 1:  # several are an enumeration "(1) ... (2) ...", not a verdict
        add(parenthesized[0], 2, "(N) after a word")
    if number:
        tail = lowered.rstrip()  # a match and all after it are _FINAL_NUMBER_RUN characters: none begins before
        m = _FINAL_NUMBER.search(tail, _run_start(_FINAL_NUMBER_RUN, tail))
        if m:
            add(m, 3, "final number")
        m = _LEADING_NUMBER.match(lowered)
        if m:
            add(m, 3, "leading number")
    kept = [c for c in found if not _inside(c.start, c.end, set_aside)]
    items = _list_items(lowered)
    if items:
        kept = [replace(c, in_list=True) if _in_list_item(lowered, c.start, items) else c for c in kept]
    located = []
    object_spans = [(o.start, o.end) for o in objects]
    for c in _strongest_per_number(kept):  # to the answer's positions; phrases inside JSON text never count
        start, end = origin[c.start], origin[max(c.start, c.end - 1)] + 1
        if not _inside(start, end, object_spans):
            inside = _inside(start, end, quoted)
            located.append(c if (start, end, inside) == (c.start, c.end, False)
                           else replace(c, start=start, end=end, quoted=inside))
    # (only with objects to read: _labelled_names made the same calls on the labels above, so nothing raises here)
    keys = SCORE_KEYS | set(_label_names(labels)) if objects else set()
    for obj in objects:
        for key, value in obj.value.items():
            number = _json_number(value)
            if str(key).strip().lower() in keys and number is not None:
                located.append(ScoreCandidate(obj.start, obj.end, number, None, 1, True, "JSON field",
                                              _preview_object(obj, answer), quoted=_inside(obj.start, obj.end, quoted),
                                              formal=True))
    return sorted(located, key=lambda c: (c.start, c.tier))


def _in_list_item(text: str, position: int, item_starts: list[int]) -> bool:
    line_start = text.rfind("\n", 0, position) + 1
    return line_start in item_starts or any(line_start <= s < position for s in item_starts)


def _strongest_per_number(found: list[ScoreCandidate]) -> list[ScoreCandidate]:
    """One candidate per number (a phrase "Score: 4/5" also matches as the mark "4/5"): the strongest tier."""
    best: dict[int, ScoreCandidate] = {}
    for c in found:
        if c.end not in best or (c.tier, not c.final) < (best[c.end].tier, not best[c.end].final):
            best[c.end] = c
    return list(best.values())


def _fmt(value: float) -> str:
    return f"{value:g}"


def _decide_score(candidates: Sequence[ScoreCandidate], high: float) -> ScoreCandidate:
    """The tier rule (module docstring) over one pool of candidates; a formal verdict token decides."""
    formal = [c for c in candidates if c.formal and not c.in_list]
    if formal:
        return formal[-1]
    tier = min(c.tier for c in candidates)
    pool = [c for c in candidates if c.tier == tier]
    on_scale = [c for c in pool if c.denominator is None or c.denominator == high]
    pool = on_scale or pool
    pool = [c for c in pool if not c.in_list] or pool  # a stated score beats the sub-scores of a breakdown
    finals = [c for c in pool if c.final]
    return (finals or pool)[-1]


def _score_marks(candidates: Sequence[ScoreCandidate], high: float) -> list[Mark]:
    """The candidates that can conflict: not a sub-score of a list, not on another scale."""
    return [Mark(c.value, c.start, c.text, c.tier, c.formal, c.quoted) for c in candidates
            if not c.in_list and (c.denominator is None or c.denominator == high)]


def read_score(raw: str, scale: tuple[float, float], *, decimals: bool = False,
               labels: Sequence[str] = ("score",), field: str = "score") -> TextVerdict:
    """The judge's score on ``scale`` (low, high) read from free text; see the module doc for the rule.

    ``decimals=False`` (an integer scale) makes "3.5" a ParseFailure naming 3.5; ``labels`` adds
    ``<label>: N`` phrases (a criterion name) to the explicit phrases. Candidates that disagree by the
    rule of :mod:`judgelab.rubrics.verdict_conflicts` are a ParseFailure "conflicting verdicts: ...".
    """
    text = answer_text(raw)
    low, high = scale
    candidates = score_candidates(text, labels)
    if not candidates:
        raise ParseFailure(f"no {field} found: no 'score: N', 'N/{_fmt(high)}', 'N out of {_fmt(high)}', '[[N]]', "
                           f"'[RESULT] N' or final number in {_preview(text)}")
    own = [c for c in candidates if not c.quoted]
    chosen = _decide_score(own or candidates, high)
    conflict = mark_conflict(Mark(chosen.value, chosen.start, chosen.text, chosen.tier, chosen.formal),
                             _score_marks(candidates, high), statement_tier=1, quoted_tier=2, shown=_fmt)
    if conflict is not None:
        raise ParseFailure(conflict)
    span = chosen.text
    where = f"{field} {_fmt(chosen.value)}" + ("" if span == _fmt(chosen.value) else f" in {span!r}")
    if chosen.denominator is not None and chosen.denominator != high:
        raise ParseFailure(f"{where} is on a scale to {_fmt(chosen.denominator)}, not {_fmt(low)}-{_fmt(high)}")
    if not low <= chosen.value <= high:
        raise ParseFailure(f"{where} is outside the scale {_fmt(low)}-{_fmt(high)}")
    if not decimals and chosen.value != int(chosen.value):
        raise ParseFailure(f"{where} is not a whole number; the scale {_fmt(low)}-{_fmt(high)} takes integers")
    return TextVerdict(chosen.value, span, chosen.rule, chosen.tier)


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= 60 else flat[:57] + "...")


# ---------------------------------------------------------------- pairwise winners
_SIDE = r"(?:output|assistant|response|answer|model|summary|candidate|option|system)"
_LABEL = rf"(?:\b{_SIDE}[ \t]*(?:\((?P<l1>[ab12])\)|(?P<l4>[ab12])(?![\w]))|\((?P<l2>[ab])\))"
_BRACKET_VERDICT = re.compile(r"\[\[\s*(?P<v>a\s*(?:>>|>|=|<<|<)\s*b|b\s*(?:>>|>|=|<<|<)\s*a|a|b|c|tie)\s*\]\]")
_WINNER_PHRASES = (
    re.compile(rf"{_LABEL}\s+(?:is|was|seems|appears)\s+(?:clearly\s+|slightly\s+|much\s+|significantly\s+)?"
               r"(?:the\s+)?(?:better|superior|stronger|preferred|preferable|winner|best)\b"),
    re.compile(rf"\b(?:winner|verdict|choice|preferred(?:\s+\w+)?|better\s+\w+|answer)\s*(?:is|:|=|-)\s*{_LABEL}"),
    re.compile(r"\b(?:winner|verdict|choice|better[ \t]+(?:response|answer|output|one))\s*(?:is|:|=|-)\s*"
               r"\(?(?P<l3>[ab])\)?(?=\s*(?:[.,;:!)\n]|$))"),
    re.compile(r"(?<![\w'])(?P<l3>[ab])[ \t]+(?:is|was)[ \t]+(?:clearly[ \t]+|slightly[ \t]+|much[ \t]+)?"
               r"(?:the[ \t]+)?(?:better|superior|preferred|winner)\b"),
    re.compile(rf"\bi\s+(?:would\s+)?(?:choose|prefer|pick|select)\s+{_LABEL}"),
    re.compile(rf"{_LABEL}\s+wins\b"),
)
_WINNER_TIE = re.compile(r"\b(?:winner|verdict|choice)\s*(?:is|:|=|-)\s*(?:a\s+)?(?P<t>tie|draw)\b")
_LEADING = re.compile(rf"^\s*(?:{_LABEL}|\(?(?P<l3>[ab])\)?)(?=\s*(?:[.:,!)\n]|$|is\b))")
# three-class judges that answer on the first line: "Tie" / "Tie." / "tie\n\nReason: ...", or a bare "1" / "2"
# alone on its line ("1\n\nReason: ..."; never "1." or "1)", which open numbered lists)
_LEADING_TIE = re.compile(r"^\s*(?:it\s+is\s+a\s+|it's\s+a\s+|a\s+)?(?:tie|draw)(?=[ \t]*(?:[.:!\n]|$))")
_LEADING_DIGIT = re.compile(r"^\s*(?P<l4>[12])(?=[ \t]*(?:\n|$))")
# where each of _WINNER_PHRASES can begin (see _scan; None: anywhere), and the words one of which it cannot match
# without (None: no such word).
# _LABEL begins with a _SIDE word or "(a)"/"(b)"; "preferred" and "preferable" both hold "prefer".
_SIDE_STARTS = ("output", "assistant", "response", "answer", "model", "summary", "candidate", "option", "system", "(")
_WINNER_SHORTCUTS: tuple[tuple[tuple[str, ...] | None, tuple[str, ...] | None], ...] = (
    (_SIDE_STARTS, ("better", "superior", "stronger", "prefer", "winner", "best")),
    (("winner", "verdict", "choice", "preferred", "better", "answer"), None),
    (("winner", "verdict", "choice", "better"), None),
    (("a ", "a\t", "b ", "b\t"), ("better", "superior", "preferred", "winner")),  # [ab][ \t]+
    (None, ("choose", "prefer", "pick", "select")),
    (_SIDE_STARTS, ("wins",)),
)


def _side(m: re.Match[str]) -> str:
    label = next(m.group(g) for g in ("l1", "l2", "l3", "l4") if g in m.re.groupindex and m.group(g))
    return {"a": "A", "1": "A", "b": "B", "2": "B"}[label]


def _bracket_winner(token: str) -> str:
    token = re.sub(r"\s+", "", token)
    if token in ("c", "tie") or "=" in token:
        return "TIE"
    if len(token) == 1:
        return token.upper()
    first, last = token[0], token[-1]
    return (first if ">" in token else last).upper()


@dataclass(frozen=True)
class WinnerCandidate:
    """One pairwise verdict found in a reply: where (in the answer), "A"/"B"/"TIE", its tier (1: a verdict
    token or JSON ``winner`` field, 2: a phrase, 3: a leading label), the rule and the text."""

    start: int
    value: str
    tier: int
    rule: str
    text: str
    quoted: bool = False
    formal: bool = False


_JSON_WINNERS = {"a": "A", "b": "B", "tie": "TIE", "c": "TIE", "a=b": "TIE", "draw": "TIE"}


def winner_candidates(raw: str) -> list[WinnerCandidate]:
    """Every pairwise verdict in the answer, in text order (negated and hypothetical phrases set aside)."""
    answer = answer_text(raw)
    objects = json_objects(strip_code_fences(answer))
    quoted = quoted_regions(answer, objects)
    object_spans = [(o.start, o.end) for o in objects]
    cleaned, origin = _clean(answer)
    lowered = _lower(cleaned)
    found: list[WinnerCandidate] = []

    def add(start: int, end: int, value: str, tier: int, rule: str, text: str) -> None:
        a, b = origin[start], origin[max(start, end - 1)] + 1
        if not _inside(a, b, object_spans):
            found.append(WinnerCandidate(a, value, tier, rule, text.strip(), _inside(a, b, quoted), tier == 1))

    for m in _scan(_BRACKET_VERDICT, lowered, "[[" in lowered):
        if not _OPTION_AFTER.match(lowered, m.end()):
            add(m.start(), m.end(), _bracket_winner(m.group("v")), 1, "[[verdict]]", m.group(0))
    for pattern, (starts, needs) in zip(_WINNER_PHRASES, _WINNER_SHORTCUTS, strict=True):
        for m in _scan(pattern, lowered, needs is None or any(word in lowered for word in needs), starts):
            if not _hypothetical(lowered[max(0, m.start() - 60) : m.start()]):
                add(m.start(), m.end(), _side(m), 2, "winner phrase", m.group(0))
    tie = "tie" in lowered or "draw" in lowered
    for m in _scan(_WINNER_TIE, lowered, tie, ("winner", "verdict", "choice")):
        add(m.start(), m.end(), "TIE", 2, "winner phrase", m.group(0))
    m = _LEADING.match(lowered) or _LEADING_DIGIT.match(lowered)
    if m:
        add(m.start(), m.end(), _side(m), 3, "leading label", m.group(0))
    elif m := _LEADING_TIE.match(lowered):
        add(m.start(), m.end(), "TIE", 3, "leading label", m.group(0))
    for obj in objects:
        for key, value in obj.value.items():
            side = _JSON_WINNERS.get(value.strip().lower()) if isinstance(value, str) else None
            if str(key).strip().lower() == "winner" and side is not None:
                found.append(WinnerCandidate(obj.start, side, 1, "JSON field", _preview_object(obj, answer),
                                             _inside(obj.start, obj.end, quoted), True))
    return sorted(found, key=lambda c: (c.start, c.tier))


def read_winner(raw: str) -> TextVerdict:
    """The pairwise winner "A", "B" or "TIE" in the labels the judge saw; see the module doc for the rule."""
    text = answer_text(raw)
    candidates = winner_candidates(text)
    if not candidates:
        raise ParseFailure(f"no verdict found: no '[[A]]', '[[A>B]]', 'Output (a) is better', 'Winner: A' "
                           f"or leading label in {_preview(text)}")
    chosen = strongest(candidates)
    marks = [Mark(c.value, c.start, c.text, c.tier, c.formal, c.quoted) for c in candidates]
    conflict = mark_conflict(Mark(chosen.value, chosen.start, chosen.text, chosen.tier, chosen.formal), marks,
                             statement_tier=2, quoted_tier=2)
    if conflict is not None:
        raise ParseFailure(conflict)
    return TextVerdict(chosen.value, chosen.text, chosen.rule, chosen.tier)


# ---------------------------------------------------------------- declared labels
_LABEL_NOUN = r"(?:final[ \t]+)?(?:label|answer|verdict|judge?ment|decision|classification|category|rating|result)"


def read_label(raw: str, labels: Sequence[str]) -> TextVerdict:
    """Which declared label the answer gives (returned in its declared spelling).

    Tier 1: the whole answer is the label ("Relevant."), or a phrase names it ("Label: relevant",
    "Verdict - Not relevant", "My answer is yes"); tier 2: the answer opens with the label ("Yes, the
    candidate ..."). Labels are matched case-insensitively as whole words, longest first. Phrases naming
    different labels, or a quoted label that differs from the judge's, are "conflicting verdicts".
    """
    text = answer_text(raw)
    by_text = {str(label).strip().lower(): str(label) for label in labels}
    names = sorted(by_text, key=len, reverse=True)
    alternatives = "|".join(re.escape(n) for n in names if n)
    cleaned, origin = _clean(text)
    lowered = _lower(cleaned)
    bare = lowered.strip().strip(" .!\"'()[]").strip()
    if bare in by_text:
        return TextVerdict(by_text[bare], cleaned.strip(), "whole answer", 1)
    word = rf"(?<![\w])(?P<label>{alternatives})(?![\w])"
    quoted = quoted_regions(text)
    marks: list[Mark] = []
    phrase = re.compile(rf"\b{_LABEL_NOUN}\b[ \t]*(?:is|:|=|-)?[ \t]*[\"'(\[]?[ \t]*{word}")
    nouns = ("final", "label", "answer", "verdict", "judg", "decision", "classification", "category", "rating",
             "result")  # where the phrase can begin: the optional "final", else a _LABEL_NOUN
    for m in _scan(phrase, lowered, True, nouns):
        if _hypothetical(lowered[max(0, m.start() - 60) : m.start()]):
            continue
        start = origin[m.start()]
        marks.append(Mark(by_text[m.group("label")], start, m.group(0), 1, True,
                          _inside(start, origin[m.end() - 1] + 1, quoted)))
    leading = re.match(rf"^[\s\"'(\[]*{word}(?=\s*(?:[.,:;!)\]\n-]|$))", lowered)
    if leading:
        marks.append(Mark(by_text[leading.group("label")], 0, leading.group(0), 2))
    if not marks:
        raise ParseFailure(f"no label found: none of {[str(label) for label in labels]} as the answer, in "
                           f"'Label: X' / 'Answer: X' / 'Verdict: X', or opening {_preview(text)}")
    chosen = strongest(marks)
    conflict = mark_conflict(chosen, marks, statement_tier=1, quoted_tier=1)
    if conflict is not None:
        raise ParseFailure(conflict)
    return TextVerdict(chosen.value, chosen.text.strip(), "label phrase" if chosen.tier == 1 else "leading label",
                       chosen.tier)


# ---------------------------------------------------------------- option letters and yes/no
def read_choice(raw: str, choices: Mapping[str, float | str]) -> TextVerdict:
    """An option letter a rubric or loader declared (``{"A": 1, ..., "E": 5}``) -> its value.

    The answer must open with the letter: alone ("B"), in parentheses ("(d)"), introduced ("Answer: C",
    "Option E") or followed by punctuation ("C. The summary ..."). "A good summary" is not the letter A.
    """
    text = answer_text(raw)
    letters = "".join(re.escape(k) for k in choices)
    m = re.match(rf"^\s*(?P<intro>(?:the\s+)?answer\s*(?:is\s*)?:?\s*|option\s*)?(?P<open>\()?"
                 rf"(?P<letter>[{letters}])(?P<close>\))?", text, re.IGNORECASE)
    lookup = {k.upper(): v for k, v in choices.items()}
    if m is None or m.group("letter").upper() not in lookup:
        raise ParseFailure(f"no option letter {'/'.join(choices)} at the start of {_preview(text)}")
    after = text[m.end():]
    marked = bool(m.group("intro") or m.group("open") or m.group("close"))
    if after.strip() and after[0] not in ".):,;-\n" and not (after[0].isspace() and marked):
        raise ParseFailure(f"{_preview(text)} opens with {m.group('letter')!r} as a word, not as an option letter")
    return TextVerdict(lookup[m.group("letter").upper()], m.group(0).strip(), "option letter")


_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def read_yes_no(raw: str) -> TextVerdict:
    """A leading "Yes"/"No" (OpenQA-eval's rule: the verdict opens the reply) -> "yes" / "no"."""
    text = answer_text(raw)
    m = _YES_NO.match(text)
    if m is None:
        raise ParseFailure(f"reply does not start with Yes or No: {_preview(text)}")
    return TextVerdict(m.group(1).lower(), m.group(0).strip(), "leading yes/no")
