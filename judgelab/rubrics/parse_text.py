"""Text in, numbers out: read a judge's free-text answer as a score, a pairwise winner or a label, with the
same parsing layer the rubrics use, and get a small typed result back -- never an exception.

>>> from judgelab import parse_score, parse_winner
>>> parse_score("The reply stays on topic. Coherence: 3", scale=(1, 3), labels=["coherence"]).value
3.0
>>> parse_score("2", scale=(1, 3)).value
2.0
>>> parse_score("Score: 0.5", scale=(0, 1)).value
0.5
>>> parse_score("I cannot tell.", scale=(1, 3)).reason
"no score found: no 'score: N', 'N/3', 'N out of 3', '[[N]]', '[RESULT] N' or final number in 'I cannot tell.'"
>>> parse_winner("Both are fine, but Output (b) is better.").value
'B'

Each function returns a :class:`Parsed`: ``value`` (None when unreadable), ``reason`` (why not),
``status`` ("ok", "parse_error", or "refusal" when the judge declined), ``tier`` (which tier of the
rule decided: 1 an explicit phrase or verdict token, 2 a bare mark, 3 a final number or leading label),
``matched`` (the span read) and ``rule``. The rules -- score phrases, bare marks, final numbers;
pairwise tokens and phrases; hypothetical mentions set aside; conflicting verdicts refused -- are
:func:`judgelab.rubrics.verdict_text.read_score`, :func:`~judgelab.rubrics.verdict_text.read_winner` and
:mod:`judgelab.rubrics.verdict_conflicts`. A value off the scale is unreadable (never clamped).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.parsing import classify_failure
from judgelab.rubrics.verdict_text import TextVerdict, read_label, read_score, read_winner

__all__ = ["Parsed", "parse_label", "parse_score", "parse_winner"]


@dataclass(frozen=True)
class Parsed:
    """The result of reading one answer: the value, or None with the reason it could not be read."""

    value: float | str | None
    reason: str | None = None
    status: Literal["ok", "parse_error", "refusal"] = "ok"
    tier: int | None = None
    matched: str | None = None
    rule: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


def _as_text(text: Any) -> str | None:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    if isinstance(text, bool):
        return str(text)
    if isinstance(text, int):
        return str(text)
    if isinstance(text, float):
        return f"{text:.17g}" if not text.is_integer() else str(int(text))
    return str(text)


def _read(text: Any, read: Callable[[str], TextVerdict]) -> Parsed:
    raw = _as_text(text)
    if raw is None or not raw.strip():
        return Parsed(None, "empty output", "parse_error")
    try:
        found = read(raw)
    except ParseFailure as failure:
        failure = classify_failure(raw, failure)
        return Parsed(None, failure.reason, failure.status)
    except Exception as exc:  # a parser bug must not lose the row: it becomes its reason  # noqa: BLE001
        return Parsed(None, f"the parser raised {type(exc).__name__}: {exc}", "parse_error")
    return Parsed(found.value, None, "ok", found.tier, found.matched, found.rule)


def _scale(scale: Any) -> tuple[float, float] | str:
    try:
        low, high = (float(x) for x in scale)
    except (TypeError, ValueError):
        return f"scale must be (low, high), not {scale!r}"
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        return f"scale must be (low, high) with finite low < high, not {scale!r}"
    return low, high


def parse_score(text: Any, scale: tuple[float, float] = (1, 5), labels: Sequence[str] | None = None, *,
                decimals: bool = True) -> Parsed:
    """The score on ``scale`` (low, high) a judge's answer gives, or None with the reason.

    ``labels`` names the criteria whose ``<label>: N`` counts as an explicit score (``"Coherence: 3"``
    with ``labels=["coherence"]``); "score", "rating" and "grade" phrases always count. With
    ``decimals=False`` a decimal ("2.5") on the scale is unreadable (the scale takes integers). Never
    raises: a bad ``scale`` is a Parsed with the reason.
    """
    bounds = _scale(scale)
    if isinstance(bounds, str):
        return Parsed(None, bounds, "parse_error")
    bad = _bad_labels(labels, optional=True)
    if bad is not None:
        return bad
    names = ("score", *(labels or ()))
    return _read(text, lambda raw: read_score(raw, bounds, decimals=decimals, labels=names))


def parse_winner(text: Any) -> Parsed:
    """The pairwise winner ("A", "B" or "TIE", in the labels the judge saw) an answer names, or None with the
    reason: ``[[A]]``/``[[B]]``/``[[C]]``, ``[[A>B]]``, "Output (a) is better", "Winner: B", a reply that
    opens with the label."""
    return _read(text, read_winner)


def _bad_labels(labels: Any, *, optional: bool) -> Parsed | None:
    """A Parsed giving the reason when ``labels`` is not a list of texts (never raised: see the module)."""
    if optional and labels is None:
        return None
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence | set | frozenset):
        return Parsed(None, f"labels= must be a list of label texts, not {type(labels).__name__}", "parse_error")
    return None


def parse_label(text: Any, labels: Sequence[str]) -> Parsed:
    """Which of the declared ``labels`` an answer gives (the label's declared spelling), or None with the
    reason: the whole answer, ``Label: X`` / ``Answer: X`` / ``Verdict: X`` phrases, or an answer that
    opens with the label ("Yes, because ..."). Two different labels in such phrases are unreadable."""
    bad = _bad_labels(labels, optional=False)
    if bad is not None:
        return bad
    names = [str(label) for label in labels]
    if not names:
        return Parsed(None, "labels= is empty: declare the labels to read", "parse_error")
    return _read(text, lambda raw: read_label(raw, names))
