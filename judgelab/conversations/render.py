"""The one renderer of a conversation into prompt text: fenced, escaped, numbered, with long tool outputs cut.

A conversation shown to a judge is untrusted text twice over (the user's turns and the model's), so it is
laid out in tags only the renderer can write::

    <conversation id="3f2a...">
    <message turn="1" role="user">
    What is the weather in Paris?
    </message>
    <message turn="1" role="assistant">
    <tool_call id="call_1">{"name":"weather","arguments":{"city":"Paris"}}</tool_call>
    </message>
    <message turn="1" role="tool" tool_call_id="call_1">
    {"temp": 12, ... <cut chars="1834"/> ... "unit": "C"}
    </message>
    </conversation id="3f2a...">

* **Escaped.** In a message's text every ``</`` becomes ``<\\/`` and every ``<`` that opens one of the
  renderer's own tag names (conversation, message, tool_call, tool_result, cut) becomes ``<\\``, so no
  message can close its message or the conversation, nor forge a message, a tool call or a cut marker.
  Tool-call JSON is escaped the JSON way (``\\u003c``), so it stays valid JSON.
* **Fenced.** The conversation's id is a hash of the rendered inside (as :func:`judgelab.rubrics.prompting.fence`).
* **Turns.** A turn starts at each user message; messages before the first (a system prompt) are turn 0.
* **Cut.** A tool output longer than ``max_tool_chars`` keeps its first and last halves around a
  ``<cut chars="N"/>`` marker; ``N`` is exactly the number of characters left out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from judgelab.conversations.messages import (
    ConversationError,
    as_message_list,
    check_messages,
    message_text_parts,
)

__all__ = ["DEFAULT_MAX_TOOL_CHARS", "FRAME_TAGS", "cut_text", "escape_text", "message_turns", "render_conversation"]

DEFAULT_MAX_TOOL_CHARS = 2000
FRAME_TAGS: tuple[str, ...] = ("conversation", "message", "tool_call", "tool_result", "cut")
_OPENER = re.compile(r"<(?=/|(?:" + "|".join(FRAME_TAGS) + r")(?![A-Za-z0-9_\-]))", re.IGNORECASE)
_JSON_OPENER = re.compile(r"<(?=/|(?:" + "|".join(FRAME_TAGS) + r")(?![A-Za-z0-9_\-]))", re.IGNORECASE)


def escape_text(text: str) -> str:
    """``text`` with no closing tag and no opener of the renderer's own tags left (``</`` -> ``<\\/``,
    ``<message`` -> ``<\\message`` ...)."""
    return _OPENER.sub("<\\\\", text)


def _escape_json(text: str) -> str:
    return _JSON_OPENER.sub("\\\\u003c", text)


def cut_text(text: str, limit: int) -> tuple[str, int]:
    """``text`` escaped and cut to ``limit`` characters of its own (its head and tail around a marker), and how
    many were cut."""
    if limit < 0:
        raise ConversationError(f"max_tool_chars must be 0 or more, not {limit}")
    if len(text) <= limit:
        return escape_text(text), 0
    head = (limit + 1) // 2
    tail = limit - head
    cut = len(text) - limit
    return escape_text(text[:head]) + f'<cut chars="{cut}"/>' + (escape_text(text[-tail:]) if tail else ""), cut


def message_turns(messages: list[Mapping[str, Any]]) -> list[int]:
    """The turn of each message: 1 from the first user message on, +1 at every later user message; 0 before."""
    turn, out = 0, []
    for m in messages:
        if m.get("role") == "user":
            turn += 1
        out.append(turn)
    return out


def _attr(value: Any) -> str:
    """An attribute value the text cannot break out of (quotes and angle brackets as JSON escapes)."""
    return json.dumps(str(value), ensure_ascii=False)[1:-1].replace("<", "\\u003c").replace(">", "\\u003e")


def _call_json(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass  # kept as the text the model wrote: malformed arguments are what a judge should see
    shown = {"name": function.get("name"), "arguments": arguments}
    return _escape_json(json.dumps(shown, ensure_ascii=False, separators=(",", ":"), default=str))


def render_conversation(value: Any, *, max_tool_chars: int = DEFAULT_MAX_TOOL_CHARS, upto_turn: int | None = None,
                        item_id: Any = None, field: str | None = None) -> str:
    """A conversation (a checked chat-message list) as fenced prompt text; see the module docstring.

    ``upto_turn`` keeps the messages of turns 0..upto_turn only. A list that is not a chat-message list
    raises :class:`ConversationError` naming ``item_id`` and ``field`` when given.
    """
    if isinstance(max_tool_chars, bool) or not isinstance(max_tool_chars, int):
        raise ConversationError(f"max_tool_chars must be a whole number, not {max_tool_chars!r:.40}")
    messages = check_messages(value, item_id=item_id, field=field)
    turns = message_turns(messages)
    lines: list[str] = []
    for message, turn in zip(messages, turns, strict=True):
        if upto_turn is not None and turn > upto_turn:
            break
        role = message["role"]
        attrs = f'turn="{turn}" role="{role}"'
        if role == "tool" and message.get("tool_call_id"):
            attrs += f' tool_call_id="{_attr(message["tool_call_id"])}"'
        if message.get("name"):
            attrs += f' name="{_attr(message["name"])}"'
        lines.append(f"<message {attrs}>")
        text = "\n".join(message_text_parts(message.get("content")))
        if message.get("refusal") and message.get("content") is None:
            text = str(message["refusal"])
        if role in ("tool", "function"):
            shown, _ = cut_text(text, max_tool_chars)
        else:
            shown = escape_text(text)
        if shown:
            lines.append(shown)
        for call in as_message_list(message.get("tool_calls")) or []:
            call_id = f' id="{_attr(call["id"])}"' if call.get("id") else ""
            lines.append(f"<tool_call{call_id}>{_call_json(call)}</tool_call>")
        lines.append("</message>")
    inside = "\n".join(lines)
    marker = hashlib.sha256(inside.encode("utf-8")).hexdigest()[:12]
    return f'<conversation id="{marker}">\n{inside}\n</conversation id="{marker}">'
