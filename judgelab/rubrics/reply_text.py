"""The text of a judge's reply before any verdict is read from it: the answer with its reasoning set aside,
the JSON objects it holds, and the passages it quotes.

- :func:`split_thinking` / :func:`answer_text`: a reasoning model's ``<think>...</think>`` (or
  ``<thinking>``) block is set aside; a reply that is only reasoning is a failure starting with
  :data:`THINKING_ONLY`.
- :func:`json_objects`: every top-level ``{...}`` that parses as an object (leniently: trailing commas,
  Python-style quotes and literals), in text order. An unclosed or broken object (an echoed template)
  does not hide a later valid one.
- :func:`quoted_regions`: the spans the judge quotes rather than says -- double-quoted passages
  ("..." and “...”), fenced code blocks and ``>`` block-quote lines. The verdict readers use them to tell
  the judge's own verdict from one it cites (:mod:`judgelab.rubrics.verdict_text`).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from judgelab.rubrics.base import ParseFailure

__all__ = ["THINKING_ONLY", "JsonObject", "Reply", "answer_text", "json_objects", "quoted_regions",
           "split_thinking", "strip_code_fences"]

THINKING_ONLY = "thinking only"
# _FAST = False turns off the shortcuts that skip work on a reply without the mark it looks for (a tag's "<", a
# brace, a quote, a fence, a > line): the reference the fast path is tested against
# (tests/rubrics/test_verdict_text_fast.py)
_FAST = True
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
    if _FAST and "<" not in text:
        return Reply(text.strip(), "", "none")  # every tag opens with "<": no tag, all answer (as the loop gives)
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


def strip_code_fences(text: str) -> str:
    return _FENCE.sub(lambda m: " " * len(m.group(0)), text)  # blanks keep every position in place


def _span_end(text: str, start: int) -> int | None:
    """The end of the balanced ``{...}`` starting at ``start`` (quotes honoured), or None if it never closes."""
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
                return i + 1
    return None


def _load_object(span: str) -> Any:
    for candidate in (span, _TRAILING_COMMA.sub(r"\1", span)):
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            pass
    # Python-literal dicts: the editorial paper's template itself uses {'score': '...'}
    pythonish = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", span)))
    for candidate in (span, pythonish, _TRAILING_COMMA.sub(r"\1", pythonish)):
        try:
            return ast.literal_eval(candidate)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
    return None


@dataclass(frozen=True)
class JsonObject:
    """A JSON object found in a reply: its span ``[start, end)`` in the text searched, and its value."""

    start: int
    end: int
    value: dict[str, Any]


def json_objects(text: str, max_starts: int = 400) -> list[JsonObject]:
    """Every top-level ``{...}`` of ``text`` that parses as an object, in text order (positions in ``text``).

    Only the last ``max_starts`` opening braces are tried (a bound on the work for huge replies).
    """
    if _FAST and "{" not in text:
        return []  # no opening brace, no object
    starts = [i for i, ch in enumerate(text) if ch == "{"][-max_starts:]
    found: list[JsonObject] = []
    for s in starts:
        if found and s < found[-1].end:
            continue  # inside an object already kept: not top level
        end = _span_end(text, s)
        if end is None:
            continue
        value = _load_object(text[s:end])
        if isinstance(value, dict):
            found.append(JsonObject(s, end, value))
    return found


_FENCED_BLOCK = re.compile(r"```[^\n`]*\n?.*?(?:```|\Z)", re.DOTALL)
_BLOCK_QUOTE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_CURLY = re.compile(r"“[^”]*”")


def quoted_regions(text: str, objects: list[JsonObject] | None = None) -> list[tuple[int, int]]:
    """The spans of ``text`` the judge quotes: fenced code blocks, ``>`` lines, "..." and “...” passages.

    Straight double quotes are paired in order within a paragraph, outside code blocks and outside the
    JSON objects of ``objects`` (whose keys are quoted by syntax, not cited); a quote left unpaired at a
    blank line or at the end quotes nothing.
    """
    # each kind needs its mark: a fence's ```, a > line's >, a “ (a gate that only skips scans that find nothing)
    fast = _FAST
    regions = [(m.start(), m.end()) for m in _FENCED_BLOCK.finditer(text)] if not fast or "```" in text else []
    if not fast or ">" in text:
        regions += [(m.start(), m.end()) for m in _BLOCK_QUOTE.finditer(text)]
    if not fast or "“" in text:
        regions += [(m.start(), m.end()) for m in _CURLY.finditer(text)]
    if fast and '"' not in text:
        return sorted(regions)  # masking only blanks characters: no straight quote in the text, none to pair
    masked = list(text)
    for s, e in [*regions, *((o.start, o.end) for o in objects or ())]:
        masked[s:e] = " " * (e - s)
    opening: int | None = None
    for i, ch in enumerate(masked):
        if ch == "\n" and opening is not None and text.startswith("\n", i + 1):
            opening = None  # a quote left open at a paragraph break quotes nothing
        elif ch == '"':
            if opening is None:
                opening = i
            else:
                regions.append((opening, i + 1))
                opening = None
    return sorted(regions)
