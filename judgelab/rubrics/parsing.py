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
template and then answers), the LAST one that parses is used; score fields are read from their
key, never by a regex over the whole text, so words like "downgrade: 2" cannot hijack them.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from judgelab.rubrics.base import ParseFailure

__all__ = [
    "PARSING_VERSION", "THINKING_ONLY", "Reply", "answer_text", "split_thinking", "as_bool", "as_choice",
    "as_integer_score", "as_number", "as_text", "classify_failure",
    "extract_json_object", "last_score_token", "looks_like_refusal", "match_criterion_entries", "require",
    "strip_code_fences", "word_count",
]

PARSING_VERSION = "2"  # 2: <think> blocks set aside; free-text verdicts (verdict_text); no clamping

THINKING_ONLY = "thinking only"
_THINK_TAG = re.compile(r"<(/?)(think|thinking)>", re.IGNORECASE)


@dataclass(frozen=True)
class Reply:
    """A raw reply split into the answer the parser reads and the reasoning it sets aside.

    ``state``: "none" (no reasoning tags), "closed" (every block closed), "unclosed" (a block never
    closes: the reply stopped while reasoning), "close_only" (a ``</think>`` with no opening tag,
    as when the chat template opens the block in the prompt: the text before it is reasoning).
    """

    answer: str
    thinking: str
    state: Literal["none", "closed", "unclosed", "close_only"]


def split_thinking(raw: str | None) -> Reply:
    """Separate ``<think>``/``<thinking>`` reasoning from the answer (nothing is lost: answer + thinking)."""
    text = raw or ""
    answer, thinking = [], []
    state: Literal["none", "closed", "unclosed", "close_only"] = "none"
    pos, inside = 0, False
    for tag in _THINK_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if not closing and not inside:
            answer.append(text[pos : tag.start()])
            inside, pos, state = True, tag.end(), "closed" if state == "none" else state
        elif closing:
            # inside a block: it ends here; outside (no opening tag): everything since the last tag was reasoning
            thinking.append(text[pos : tag.start()])
            if not inside:
                state = "close_only"
            inside, pos = False, tag.end()
    if inside:
        thinking.append(text[pos:])
        state = "unclosed"
    else:
        answer.append(text[pos:])
    return Reply("".join(answer).strip(), "\n".join(t.strip() for t in thinking if t.strip()), state)


def answer_text(raw: str | None) -> str:
    """The answer part of a reply; ParseFailure when it is empty (naming a reasoning-only reply)."""
    reply = split_thinking(raw)
    if reply.answer:
        return reply.answer
    if reply.state == "unclosed":
        raise ParseFailure(f"{THINKING_ONLY}: the reasoning block never closes, so there is no answer "
                           "(the reasoning probably used up the token budget)")
    if reply.thinking:
        raise ParseFailure(f"{THINKING_ONLY}: the reply has reasoning but no answer after it")
    raise ParseFailure("empty output")

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?|```")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
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


def strip_code_fences(text: str) -> str:
    return _FENCE.sub("", text)


def _span_from(text: str, start: int) -> str | None:
    """The balanced ``{...}`` starting at ``start`` (quotes honoured), or None if it never closes."""
    depth, quote, escaped = 0, "", False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _candidate_objects(text: str, max_starts: int = 400) -> list[tuple[int, int, str]]:
    """(end, start, span) for every brace that opens a balanced object; an unclosed or broken
    object (e.g. an echoed template) does not hide a later, valid one."""
    starts = [i for i, ch in enumerate(text) if ch == "{"][-max_starts:]
    out = []
    for s in starts:
        span = _span_from(text, s)
        if span is not None:
            out.append((s + len(span), s, span))
    return out


def _load_object(span: str) -> Any:
    for candidate in (span, _TRAILING_COMMA.sub(r"\1", span)):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    # Python-literal dicts: the editorial paper's template itself uses {'score': '...'}
    pythonish = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", span)))
    for candidate in (span, pythonish, _TRAILING_COMMA.sub(r"\1", pythonish)):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    return None


def extract_json_object(raw: str) -> dict[str, Any]:
    """The last JSON object in the answer, leniently extracted; ParseFailure when there is none."""
    text = strip_code_fences(answer_text(raw))
    candidates = _candidate_objects(text)
    if not candidates:
        raise ParseFailure("no JSON object found in the output")
    # the last object in the text; among objects ending at the same place, the outermost
    for _end, _start, span in sorted(candidates, key=lambda c: (-c[0], c[1])):
        value = _load_object(span)
        if isinstance(value, dict):
            return value
    raise ParseFailure("found text between braces but it is not a valid JSON object")


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
    previous answer" are not read as scores.
    """
    pattern = re.compile(rf"(?<![A-Za-z_]){re.escape(label)}\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
    hits = pattern.findall(answer_text(text))
    if not hits:
        raise ParseFailure(f"no '{label}: N' found in the output")
    return as_integer_score(hits[-1], low, high, label)


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
