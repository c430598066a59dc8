"""Conversations and agent trajectories as items: chat-message lists checked, rendered fenced for a judge.

An item field may hold an OpenAI-format chat-message list (:mod:`judgelab.conversations.messages`);
every template renders it with the one renderer of :mod:`judgelab.conversations.render` (the sandbox's
``conversation`` filter), and a judgment that targets one turn carries it in the table's ``turn`` column.
"""

from __future__ import annotations

from judgelab.conversations.messages import ROLES, ConversationError, check_messages, looks_like_messages
from judgelab.conversations.render import (
           DEFAULT_MAX_TOOL_CHARS,
           FRAME_TAGS,
           message_turns,
           render_conversation,
)

__all__ = ["DEFAULT_MAX_TOOL_CHARS", "FRAME_TAGS", "ROLES", "ConversationError", "check_messages",
           "looks_like_messages", "message_turns", "render_conversation"]
