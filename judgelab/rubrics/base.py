"""The contract between a rubric and the engine.

The engine knows nothing about any particular rubric. It asks a rubric for the requests
one item needs (``requests``), sends each to a model, and hands the raw text back to the
rubric (``parse``), which returns one :class:`ParsedRow` per judgments-table row or raises
:class:`ParseFailure`. Verdicts (totals, winners, caps) are computed by the rubric's code,
never taken from the judge's text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from judgelab.conversations.messages import check_messages, looks_like_messages
from judgelab.errors import JudgelabError

__all__ = [
    "check_fields", "JudgeRequest", "MissingFieldError", "Mode", "ParsedRow", "ParseFailure", "RowKey",
    "Rubric", "swap_label",
]

Mode = Literal["direct", "pairwise", "reference"]


@dataclass(frozen=True)
class RowKey:
    """Which judgments-table row a parsed value belongs to."""

    criterion: str
    side: str | None = None  # pairwise per-candidate scores: "A"/"B" in ORIGINAL labels
    turn: int | None = None  # a judgment of one turn of a conversation (1, 2 ...); None: the whole item


@dataclass(frozen=True)
class JudgeRequest:
    """One model call an item needs, plus what the parser must know about it."""

    messages: list[dict[str, str]]
    expected_rows: tuple[RowKey, ...]  # rows written for this call; all unscored if it fails
    swapped: bool = False  # pairwise: candidates shown in reversed order
    response_format: dict[str, Any] | None = None  # JSON schema / {"type": "json_object"} when supported
    logprob_criterion: str | None = None  # criterion whose score token gets a logprob-weighted score
    max_tokens: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)  # anything the parser needs (e.g. item values)

    def prompt_hash(self) -> str:
        blob = json.dumps(self.messages, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclass
class ParsedRow:
    """One parsed judgments-table row (status "ok")."""

    key: RowKey
    score: float | None = None
    winner: str | None = None  # "A", "B" or "TIE" in ORIGINAL labels
    verdict: str | None = None
    confidence: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def swap_label(label: str | None) -> str | None:
    """Map a label seen in a swapped prompt back to the original candidate."""
    return {"A": "B", "B": "A"}.get(label, label) if label is not None else None


class ParseFailure(Exception):
    """The raw output could not be turned into rows; ``reason`` says why, precisely."""

    def __init__(self, reason: str, status: Literal["parse_error", "refusal"] = "parse_error") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@runtime_checkable
class Rubric(Protocol):
    """What the engine needs from a rubric."""

    name: str
    version: str
    mode: Mode
    required_fields: tuple[str, ...]
    scale: tuple[int, int] | None
    default_temperature: float | None

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]: ...

    def parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]: ...

    def fingerprint(self) -> str:
        """A hash of everything in the rubric that changes a prompt or a parse (for cache keys)."""
        ...


class MissingFieldError(JudgelabError, KeyError):
    """An item lacks a field the rubric requires."""

    def __init__(self, item_id: str, fields: list[str], rubric: str) -> None:
        self.item_id, self.fields, self.rubric = item_id, fields, rubric
        super().__init__(f"item {item_id!r} lacks field(s) {', '.join(map(repr, fields))} required by rubric {rubric!r}")

    def __str__(self) -> str:  # KeyError would quote the message
        return self.args[0]


def check_fields(item: Mapping[str, Any], rubric: Rubric) -> None:
    """Raise MissingFieldError if the item lacks a required field, or it is NaN/None/blank text."""
    missing = []
    for f in rubric.required_fields:
        v = item.get(f)
        if v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip()):
            missing.append(f)
    if missing:
        raise MissingFieldError(str(item.get("item_id", "?")), missing, rubric.name)
    for name, value in item.items():  # a conversation in any field is checked whole before any call
        if looks_like_messages(value):
            check_messages(value, item_id=item.get("item_id", "?"), field=str(name))
