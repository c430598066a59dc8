"""Chat-message lists as item values: recognising them and checking them against the OpenAI chat format.

Any item field may hold a conversation: a list of messages ``{"role": ..., "content": ...}`` where
``content`` is text, a list of content parts (``{"type": "text", "text": ...}``, images, audio ...) or,
for an assistant message that calls tools, ``None`` beside ``tool_calls`` (``[{"id", "type": "function",
"function": {"name", "arguments"}}]``); a ``tool`` message answers one call (``tool_call_id``).

A field is taken for a conversation when it is a list whose entries are all mappings and at least one
has a ``role`` (:func:`looks_like_messages`); such a list is then checked whole (:func:`check_messages`),
so a message list with one broken message is refused in one sentence naming the item, the field and the
message, never rendered half-way nor printed as Python text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["ROLES", "ConversationError", "as_message_list", "check_messages", "looks_like_messages",
           "message_text_parts"]

ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool", "function")


class ConversationError(JudgelabError, ValueError):
    """A chat-message list that does not follow the chat format; the message names the item, field and message."""


def as_message_list(value: Any) -> list[Any] | None:
    """``value`` as a Python list when it is list-like (a list, a tuple, a numpy array read from Parquet), else None."""
    if isinstance(value, list | tuple):
        return list(value)
    if hasattr(value, "tolist") and not isinstance(value, str | bytes) and getattr(value, "ndim", 0) == 1:
        return list(value.tolist())
    return None


def looks_like_messages(value: Any) -> bool:
    """True for a non-empty list of mappings of which at least one has a ``role``: a (maybe broken) conversation."""
    entries = as_message_list(value)
    return bool(entries) and all(isinstance(m, Mapping) for m in entries) and any("role" in m for m in entries)


def check_messages(value: Any, *, item_id: Any = None, field: str | None = None) -> list[dict[str, Any]]:
    """The messages of ``value`` as plain dicts, checked; :class:`ConversationError` (one sentence) otherwise."""
    where = _where(item_id, field)
    entries = as_message_list(value)
    if entries is None:
        raise ConversationError(f"{where} is a {type(value).__name__}, not a list of chat messages")
    if not entries:
        raise ConversationError(f"{where} is an empty list of chat messages; a conversation needs at least one message")
    out = []
    for i, message in enumerate(entries, start=1):
        problem = _message_problem(message)
        if problem:
            raise ConversationError(f"{where}: message {i} {problem} (OpenAI chat format: role, content, "
                                    "tool_calls, tool_call_id)")
        out.append(dict(message))
    return out


def _where(item_id: Any, field: str | None) -> str:
    parts = []
    if item_id is not None:
        parts.append(f"item {str(item_id)!r}")
    if field is not None:
        parts.append(f"field {field!r}")
    return ", ".join(parts) if parts else "the conversation"


def _message_problem(message: Any) -> str | None:
    if not isinstance(message, Mapping):
        return f"is a {type(message).__name__}, not a mapping with a role and content"
    role = message.get("role")
    if role not in ROLES:
        return f"has role {role!r:.40}; roles are {', '.join(ROLES)}"
    content = message.get("content")
    calls = message.get("tool_calls")
    if content is None:
        if role != "assistant" or not (calls or message.get("refusal")):
            return "has no content (only an assistant message that calls tools may leave it empty)"
    else:
        problem = _content_problem(content)
        if problem:
            return problem
    if calls is not None:
        if role != "assistant":
            return f"has tool_calls but role {role!r} (only an assistant calls tools)"
        problem = _calls_problem(calls)
        if problem:
            return problem
    if role == "tool" and not isinstance(message.get("tool_call_id", ""), str):
        return "has a tool_call_id that is not text"
    for key in ("name", "refusal"):
        if message.get(key) is not None and not isinstance(message.get(key), str):
            return f"has a {key} that is not text"
    return None


def _content_problem(content: Any) -> str | None:
    if isinstance(content, str):
        return None
    parts = as_message_list(content)
    if parts is None:
        return f"has content of type {type(content).__name__}; content is text or a list of content parts"
    for k, part in enumerate(parts, start=1):
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            return f"has content part {k} without a text 'type'"
        if part["type"] == "text" and not isinstance(part.get("text"), str):
            return f"has text part {k} whose 'text' is not text"
        if part["type"] == "refusal" and not isinstance(part.get("refusal"), str):
            return f"has refusal part {k} whose 'refusal' is not text"
    return None


def _calls_problem(calls: Any) -> str | None:
    entries = as_message_list(calls)
    if entries is None:
        return f"has tool_calls of type {type(calls).__name__}, not a list"
    for k, call in enumerate(entries, start=1):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            return f"has tool call {k} without a function name"
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str | Mapping):
            return f"has tool call {k} whose arguments are neither JSON text nor an object"
        if call.get("id") is not None and not isinstance(call.get("id"), str):
            return f"has tool call {k} whose id is not text"
    return None


def message_text_parts(content: Any) -> Sequence[str]:
    """The text of a message's content, a part at a time (non-text parts are named, never inlined)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    out = []
    for part in as_message_list(content) or []:
        kind = part.get("type")
        if kind == "text":
            out.append(part["text"])
        elif kind == "refusal":
            out.append(part["refusal"])
        else:
            out.append(f"[{kind} part]")
    return out
