"""Conflicting verdicts are not guessed: when a reply holds more than one candidate verdict and they
disagree, the reply is unparsed with a reason starting "conflicting verdicts" that names both.

The rule (the parsing tiers that decide among agreeing or revising candidates are in
:mod:`judgelab.rubrics.verdict_text`):

1. **Formal verdicts** -- a JSON object with a verdict field (``score``, ``winner``, ``verdict``, ...), a
   ``[[N]]`` / ``[[A]]`` token, ``[RESULT] N`` -- close a judgement. Two formal verdicts of the judge's own
   that disagree are a conflict (two JSON objects with different scores or winners, ``[[A]]`` then
   ``[[B]]``, a JSON object and a ``[[4]]``). JSON objects are compared field by field on the verdict
   fields they share (explanations and other text are not compared); objects that agree are accepted.
2. **A statement after a formal verdict** that disagrees with it (``{"score": 2}`` ... "Score: 5") is a
   conflict. Statements BEFORE the formal verdict are the reasoning that led to it.
3. **A quoted verdict** -- inside "double quotes", “curly quotes”, a fenced code block or a ``>`` line:
   the judge citing the response under review ("the response tried to make me output {...}") or the
   instructions -- is not the judge's verdict. When the quoted verdicts name ONE value and it differs
   from the judge's own, the reply is a conflict (an injected verdict is never stored as the score);
   quoted verdicts that between them name several values are an echo of the instructions' options
   (Output "[[A]]" if A is better, "[[B]]" if B is better) and are set aside. A reply whose only
   verdicts are quoted is read from them (a judge that wraps its whole answer in a code block).

Agreeing duplicates (the same score twice, an echoed ``{"score": 4}`` beside the answer ``{"score": 4}``)
are accepted. Plain score phrases that revise each other ("A score of 3 seemed right ..., so the score is
4") are NOT conflicts: the tiers of :mod:`~judgelab.rubrics.verdict_text` read them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from judgelab.rubrics.reply_text import JsonObject

__all__ = ["CONFLICTING", "SCORE_KEYS", "VERDICT_KEYS", "Mark", "json_conflict", "mark_conflict", "strongest", "verdict_leaves"]

CONFLICTING = "conflicting verdicts"
SCORE_KEYS = frozenset({"score", "rating", "grade", "final_score", "overall_score", "total_score"})
# keys whose value is (or holds) a verdict; numbers and booleans anywhere below them count as verdict fields
VERDICT_KEYS = SCORE_KEYS | frozenset({"scores", "ratings", "winner", "verdict", "label", "decision", "preference",
                                       "choice", "evaluation", "comparison"})


@dataclass(frozen=True)
class Mark:
    """One candidate verdict in a reply: its value, where it starts (in the answer), the text it came from,
    its tier, whether it is formal (JSON field, [[...]], [RESULT]) and whether it is quoted."""

    value: Any
    start: int
    text: str
    tier: int
    formal: bool = False
    quoted: bool = False


def _describe(mark: Mark, shown: Callable[[Any], str]) -> str:
    where = "quoted " if mark.quoted else ""
    span = " ".join(mark.text.split())
    span = span if len(span) <= 60 else span[:57] + "..."
    return f"{shown(mark.value)} in {where}{span!r}"


class _Tiered(Protocol):
    @property
    def tier(self) -> int: ...
    @property
    def quoted(self) -> bool: ...


_T = TypeVar("_T", bound=_Tiered)


def strongest(found: Sequence[_T]) -> _T:
    """The verdict the tiers pick from ``found`` (in text order): the last of the strongest tier among the
    judge's own, or among all when every one is quoted."""
    pool = [f for f in found if not f.quoted] or list(found)
    tier = min(f.tier for f in pool)
    return [f for f in pool if f.tier == tier][-1]


def mark_conflict(chosen: Mark, marks: Sequence[Mark], *, statement_tier: int, quoted_tier: int,
                  shown: Callable[[Any], str] = str) -> str | None:
    """The reason ("conflicting verdicts: ...") when ``marks`` disagree by the module's rule, else None.

    ``chosen`` is the verdict the tiers picked; ``statement_tier`` is the weakest tier that counts as a
    statement after a formal verdict, ``quoted_tier`` the weakest that counts inside a quote.
    """
    own = [m for m in marks if not m.quoted]
    formal = [m for m in own if m.formal]
    for m in formal:
        if m.value != formal[-1].value:
            return f"{CONFLICTING}: {_describe(m, shown)} and {_describe(formal[-1], shown)}"
    if formal:
        last = formal[-1]
        later = [m for m in own if m.start > last.start and not m.formal and m.tier <= statement_tier]
        for m in later:
            if m.value != last.value:
                return f"{CONFLICTING}: {_describe(last, shown)} and, after it, {_describe(m, shown)}"
    quoted = [m for m in marks if m.quoted and m.tier <= quoted_tier]
    if own and quoted and len({m.value for m in quoted}) == 1 and quoted[0].value != chosen.value:
        return f"{CONFLICTING}: the judge's {_describe(chosen, shown)} and {_describe(quoted[0], shown)}"
    return None


# ---------------------------------------------------------------- JSON objects
_NUMBER = re.compile(r"\s*-?\d+(?:\.\d+)?\s*")


def _normal(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return float(value) if _NUMBER.fullmatch(value) else " ".join(value.split()).lower()
    return value


def _placeholder(value: Any) -> bool:
    """A template's slot, not a verdict: "<score between 1 and 5>", "...", "A | B | TIE", ""."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    return not text or ("<" in text and ">" in text) or "..." in text or "|" in text


def _element_name(element: Any, index: int) -> str:
    if isinstance(element, Mapping):
        for key in ("criterion", "name", "id"):
            if isinstance(element.get(key), str):
                return str(element[key]).strip().lower()
    return str(index)


def verdict_leaves(obj: Any) -> dict[tuple[str, ...], Any]:
    """The verdict fields of a JSON value: path -> normalized value.

    A field counts when its key is a verdict key (:data:`VERDICT_KEYS`) and it holds a number, boolean or
    text, or when it is a number or boolean anywhere below a verdict key (``scores.coherence``); a
    template's slot ("<score between 1 and 5>", "...", "A | B") is no verdict, and a number written as
    text ("4") equals the number. List
    elements are named by their ``criterion`` / ``name`` field when they have one (else their position).
    """
    out: dict[tuple[str, ...], Any] = {}

    def walk(value: Any, path: tuple[str, ...], keyed: bool, inside: bool) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                key = str(k).strip().lower()
                walk(v, (*path, key), key in VERDICT_KEYS, inside or key in VERDICT_KEYS)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, _element_name(v, i)), keyed, inside)
        elif value is not None and not _placeholder(value) and (
                isinstance(value, bool | int | float) and inside or keyed and isinstance(value, str | bool | int | float)):
            out[path] = _normal(value)

    walk(obj, (), False, False)
    return out


def _leaf(path: tuple[str, ...], value: Any) -> str:
    shown = f"{value:g}" if isinstance(value, float) else repr(value)
    return f"{'.'.join(path)}={shown}"


def json_conflict(objects: Sequence[JsonObject]) -> str | None:
    """The reason when two of the objects give different values for a verdict field they share, else None."""
    seen: dict[tuple[str, ...], tuple[Any, JsonObject]] = {}
    for obj in objects:
        for path, value in verdict_leaves(obj.value).items():
            if path in seen and seen[path][0] != value:
                before = seen[path][1]
                return (f"{CONFLICTING}: the JSON object at character {before.start} says "
                        f"{_leaf(path, seen[path][0])}, the one at character {obj.start} says {_leaf(path, value)}")
            seen.setdefault(path, (value, obj))
    return None
