"""Raw judge text -> fields, or a typed :class:`ParseFailure` saying precisely why not.

Reasoning first: a reasoning model's ``<think>...</think>`` (or ``<thinking>``) block is set aside
before anything is read (:func:`split_thinking`, :func:`answer_text`); the raw output keeps it, so
``split_thinking(raw_output).thinking`` recovers the reasoning the parser set aside. A reply that is
only reasoning (the block never closes, or nothing follows it) is a failure whose reason starts
with :data:`THINKING_ONLY`. Free-text verdicts (scores, winners, letters) are read by
:mod:`judgelab.rubrics.verdict_text`.

Extraction is lenient (code fences, prose around the JSON, trailing commas, Python-style
single-quoted dicts as in the editorial paper's template); validation is strict (every field
present, every score an integer on the scale). A failure never becomes a score.

Pitfalls handled (see PEERS.md): when several JSON objects appear (e.g. the judge echoes the
template and then answers), the LAST one with a verdict field is used -- unless the objects disagree on a
verdict field they share, or a score/winner stated after the answer differs from it: then the reply is a
ParseFailure "conflicting verdicts: ..." naming both (never the last one silently; the rule is in
:mod:`judgelab.rubrics.verdict_conflicts`). Score fields are read from their key, never by a regex over
the whole text, so words like "downgrade: 2" cannot hijack them. The reply text helpers (reasoning,
JSON objects, quoted passages) live in :mod:`judgelab.rubrics.reply_text`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.reply_text import (
    THINKING_ONLY,
    JsonObject,
    Reply,
    answer_text,
    json_objects,
    quoted_regions,
    split_thinking,
    strip_code_fences,
)
from judgelab.rubrics.verdict_conflicts import SCORE_KEYS, Mark, json_conflict, mark_conflict, verdict_leaves
from judgelab.rubrics.verdict_text import score_candidates, winner_candidates

__all__ = [
    "PARSING_VERSION", "THINKING_ONLY", "Reply", "answer_text", "split_thinking", "as_bool", "as_choice",
    "as_integer_score", "as_number", "as_text", "classify_failure",
    "extract_json_object", "last_score_token", "looks_like_refusal", "match_criterion_entries", "require",
    "strip_code_fences", "word_count",
]

# 2: <think> blocks set aside; free-text verdicts (verdict_text); no clamping. Not bumped for the conflicting-
# verdicts rule: the version is part of every rubric's fingerprint and so of the request cache key, and a
# stricter reading of the same answers must not make a rerun pay for them again (reparse re-reads a table).
PARSING_VERSION = "2"

_REFUSAL = re.compile(
    r"\b(i\s*(?:can(?:no|')t|cannot|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|won't|will\s+not)"
    r"\s+(?:help|assist|comply|provide|do\s+that|evaluate|judge|rate|score|fulfil|fulfill|complete)"
    r"|as\s+an\s+ai(?:\s+language\s+model)?,?\s+i\s+(?:can(?:no|')t|cannot|am\s+unable)"
    r"|i\s+(?:must|have\s+to)\s+(?:decline|refuse)|i'm\s+sorry,?\s+but\s+i)",
    re.IGNORECASE,
)


def looks_like_refusal(raw: str) -> bool:
    """True when the answer (reasoning set aside) reads as the model declining the task."""
    return bool(_REFUSAL.search(split_thinking(raw).answer))


def classify_failure(raw: str, failure: ParseFailure) -> ParseFailure:
    """Re-label a parse failure as a refusal when the text is a refusal."""
    if failure.status == "parse_error" and looks_like_refusal(raw):
        return ParseFailure(f"the judge refused: {failure.reason}", status="refusal")
    return failure


def extract_json_object(raw: str) -> dict[str, Any]:
    """The judge's JSON object, leniently extracted; ParseFailure when there is none or when verdicts conflict.

    Of the top-level objects in the answer (code fences set aside), the last one with a verdict field
    (:data:`~judgelab.rubrics.verdict_conflicts.VERDICT_KEYS`) is the answer, or the last one when none
    has such a field. Objects that give different values for a verdict field they share, or a score /
    winner stated after the object that differs from its single score / winner, are a ParseFailure
    "conflicting verdicts: ..." (:mod:`judgelab.rubrics.verdict_conflicts`).
    """
    answer = answer_text(raw)
    objects = json_objects(strip_code_fences(answer))
    if not objects:
        if "{" in answer and "}" in answer:
            raise ParseFailure("found text between braces but it is not a valid JSON object")
        raise ParseFailure("no JSON object found in the output")
    with_verdicts = [o for o in objects if verdict_leaves(o.value)]
    conflict = json_conflict(with_verdicts)
    if conflict is not None:
        raise ParseFailure(conflict)
    chosen = (with_verdicts or objects)[-1]
    conflict = _statement_after(answer, chosen, objects)
    if conflict is not None:
        raise ParseFailure(conflict)
    return chosen.value


def _statement_after(answer: str, chosen: JsonObject, objects: list[JsonObject]) -> str | None:
    """The conflict, if any, between the JSON answer's single score / winner and the reply's text around the
    JSON objects: another verdict token, a statement after the answer, a quoted verdict (the rule of
    :mod:`judgelab.rubrics.verdict_conflicts`, as the free-text readers apply it)."""
    leaves = verdict_leaves(chosen.value)
    scores = {v for path, v in leaves.items() if path[-1] in SCORE_KEYS and isinstance(v, float)}
    winners = {str(v).upper() for path, v in leaves.items() if path == ("winner",)}
    if len(scores) != 1 and len(winners) != 1:
        return None
    text = list(answer)
    for o in objects:  # their fields were compared above; only the text around them is read here
        text[o.start : o.end] = " " * (o.end - o.start)
    blanked = "".join(text)
    if not blanked.strip():
        return None
    offset = len(blanked) - len(blanked.lstrip())  # the readers' positions start at the first non-blank
    shown = " ".join(answer[chosen.start : chosen.end].split())
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    marks: list[Mark] = []
    if len(scores) == 1:
        answer_mark = Mark(next(iter(scores)), chosen.start, shown, 1, formal=True)
        marks = [Mark(c.value, c.start + offset, c.text, c.tier, c.formal, c.quoted)
                 for c in score_candidates(blanked) if not c.in_list and c.tier <= 2]
        statement_tier, show = 1, (lambda v: f"{v:g}")
    else:
        winner = next(iter(winners))
        answer_mark = Mark({"C": "TIE"}.get(winner, winner), chosen.start, shown, 1, formal=True)
        marks = [Mark(w.value, w.start + offset, w.text, w.tier, w.formal, w.quoted)
                 for w in winner_candidates(blanked) if w.tier <= 2]
        statement_tier, show = 2, str
    if not marks:
        return None
    ordered = sorted([answer_mark, *marks], key=lambda m: m.start)
    return mark_conflict(answer_mark, ordered, statement_tier=statement_tier, quoted_tier=2, shown=show)


def require(obj: Mapping[str, Any], key: str, where: str = "") -> Any:
    """obj[key], or ParseFailure naming the missing field."""
    if not isinstance(obj, Mapping):
        raise ParseFailure(f"{where or 'output'} is not a JSON object")
    if key not in obj or obj[key] is None:
        raise ParseFailure(f"missing field {where + '.' if where else ''}{key}")
    return obj[key]


def as_integer_score(value: Any, low: int, high: int, field: str) -> int:
    """An integer score in [low, high]; accepts 4, 4.0 and "4"; anything else is a ParseFailure."""
    if isinstance(value, bool):
        raise ParseFailure(f"{field} is a boolean, expected an integer {low}-{high}")
    number: float
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*-?\d+(?:\.0+)?\s*", value):
        number = float(value)
    else:
        raise ParseFailure(f"{field}={value!r} is not an integer score {low}-{high}")
    if number != int(number):
        raise ParseFailure(f"{field}={value!r} is not a whole number")
    if not low <= number <= high:
        raise ParseFailure(f"{field}={int(number)} is outside the scale {low}-{high}")
    return int(number)


def as_number(value: Any, low: float, high: float, field: str) -> float:
    """A number in [low, high] (accepts numeric strings)."""
    if isinstance(value, bool):
        raise ParseFailure(f"{field} is a boolean, expected a number {low}-{high}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParseFailure(f"{field}={value!r} is not a number") from None
    if number != number or not low <= number <= high:
        raise ParseFailure(f"{field}={value!r} is outside {low}-{high}")
    return number


def as_bool(value: Any, field: str) -> bool:
    """A JSON boolean (also "true"/"false"/"yes"/"no" strings)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "false", "no"}:
        return value.strip().lower() in {"true", "yes"}
    raise ParseFailure(f"{field}={value!r} is not a boolean")


def as_choice(value: Any, choices: Iterable[str], field: str, *, upper: bool = False) -> str:
    """One of the allowed labels (case-insensitive); returns the canonical spelling."""
    allowed = list(choices)
    if isinstance(value, str):
        for c in allowed:
            if value.strip().lower() == c.lower():
                return c
    raise ParseFailure(f"{field}={value!r} is not one of {', '.join(allowed)}")


def as_text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise ParseFailure(f"{field} is not a string")
    return value.strip()


def word_count(text: str) -> int:
    return len(re.findall(r"\S+", text or ""))


def last_score_token(text: str, low: int, high: int, label: str = "score") -> int:
    """The LAST ``<label>: N`` in free text (the rationale comes first); strict on range.

    Only the exact label followed by a colon/equals counts, so "downgrade: 2" or "score of the
    previous answer" are not read as scores. A ``<label>: N`` inside a quoted passage (quotes, a code
    block, a ``>`` line) is cited, not said: it is read only when nothing else is, and one that differs
    from the judge's own is a ParseFailure "conflicting verdicts" (:mod:`judgelab.rubrics.verdict_conflicts`).
    """
    answer = answer_text(text)
    pattern = re.compile(rf"(?<![A-Za-z_]){re.escape(label)}\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
    quoted = quoted_regions(answer, json_objects(strip_code_fences(answer)))
    numbers = {m.start(): m.group(1) for m in pattern.finditer(answer)}
    marks = [Mark(float(m.group(1)), m.start(), m.group(0), 1,
                  quoted=any(s <= m.start() and m.end() <= e for s, e in quoted)) for m in pattern.finditer(answer)]
    if not marks:
        raise ParseFailure(f"no '{label}: N' found in the output")
    chosen = ([m for m in marks if not m.quoted] or marks)[-1]
    conflict = mark_conflict(chosen, marks, statement_tier=1, quoted_tier=1, shown=lambda v: f"{v:g}")
    if conflict is not None:
        raise ParseFailure(conflict)
    return as_integer_score(numbers[chosen.start], low, high, label)


def match_criterion_entries(entries: list[Any], criteria: Sequence[Any]) -> dict[str, Mapping[str, Any]]:
    """Entries by criterion name (matched on name or label, case-insensitive); strict."""
    lookup = {}
    for c in criteria:
        lookup[c.name.lower()] = c.name
        lookup[c.label.lower()] = c.name
        lookup[c.name.replace("_", " ").lower()] = c.name
    found: dict[str, Mapping[str, Any]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise ParseFailure(f"scores[{i}] is not a JSON object")
        if len(criteria) == 1 and "criterion" not in entry:
            name = criteria[0].name
        else:
            label = str(require(entry, "criterion", f"scores[{i}]")).strip().lower()
            if label not in lookup:
                raise ParseFailure(f"scores[{i}].criterion={entry['criterion']!r} is not a criterion of this rubric")
            name = lookup[label]
        if name in found:
            raise ParseFailure(f"criterion {name!r} is scored twice")
        found[name] = entry
    missing = [c.name for c in criteria if c.name not in found]
    if missing:
        raise ParseFailure(f"no score for criterion {', '.join(missing)}")
    return found
