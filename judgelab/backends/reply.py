"""What judgelab keeps of one model reply, read from a reply of ANY shape without ever raising.

A reply that arrived (HTTP 2xx, a chat completion) was paid for, so it must end as rows whatever it
holds. The readers here turn a litellm response object or a raw response body into a
:class:`ModelReply`; what cannot be read as an answer (no choices, a ``null`` message, content that
is a number, text that is not valid UTF-8 ...) sets :attr:`ModelReply.unreadable` to the reason, and
``text`` then holds the raw reply as received, so that it is stored and shown, never guessed at.

Values that are not what the API documents (a negative or absurd token count, a non-finite cost, a
``finish_reason`` that is not text) are recorded as unknown and said in :attr:`ModelReply.notes`;
nothing is coerced into a plausible value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

# the bound on a token count is pricing's (a reply's cost is priced there); pricing imports nothing from here
from judgelab.backends.pricing import MAX_TOKEN_COUNT

__all__ = ["MAX_TOKEN_COUNT", "ModelReply", "body_is_completion", "decode_body", "reasoning_token_count",
           "reply_from_body", "reply_from_dict", "reply_from_response"]


@dataclass
class ModelReply:
    """What judgelab keeps of one completion (all of it JSON-serialisable, for the cache)."""

    text: str
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float = math.nan
    latency_s: float = math.nan
    system_fingerprint: str | None = None
    logprobs: list[dict[str, Any]] | None = None  # OpenAI shape: [{token, logprob, top_logprobs: [...]}]
    extra: dict[str, Any] = field(default_factory=dict)
    # a reasoning model's thinking, kept apart from ``text`` (litellm moves a leading <think> block and a
    # provider's reasoning_content there), and its token count (already inside output_tokens and the cost)
    reasoning: str | None = None
    reasoning_tokens: int | None = None
    # why this reply holds no answer that can be read (``text`` is then the raw reply as received)
    unreadable: str | None = None
    refusal: str | None = None  # the provider's own refusal field (OpenAI ``message.refusal``)
    notes: list[str] = field(default_factory=list)  # values recorded as unknown, and why

    def to_json(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d["cost_usd"] = None if math.isnan(self.cost_usd) else self.cost_usd
        d["latency_s"] = None if math.isnan(self.latency_s) else self.latency_s
        return d

    @classmethod
    def from_json(cls, d: Any) -> ModelReply:
        """A reply from its cached form; a cache entry that is not one (a foreign or damaged file, a future
        version's fields) becomes an unreadable reply holding the entry, never an exception."""
        if not isinstance(d, Mapping) or not isinstance(d.get("text"), str):
            return cls(text=_dump(d), unreadable="the cached entry is not a reply judgelab wrote")
        known = {k: v for k, v in d.items() if k in _FIELDS}
        notes = [f"cached field {k!r} is not one judgelab writes; ignored" for k in d if k not in _FIELDS]
        for name, check in _CACHED_TYPES.items():
            if name in known and not check(known[name]):
                notes.append(f"cached {name} {_short(known.pop(name))} has the wrong type; recorded as unknown")
        for name in ("cost_usd", "latency_s"):
            known[name] = math.nan if known.get(name) is None else float(known[name])
        reply = cls(**known)
        if notes:
            reply.notes = [*reply.notes, *notes]
        return reply


_FIELDS = frozenset(f.name for f in fields(ModelReply))


def _is_count(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_TOKEN_COUNT)


def _is_number(v: Any) -> bool:
    return v is None or (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v))


def _is_text(v: Any) -> bool:
    return v is None or isinstance(v, str)


_CACHED_TYPES = {
    "finish_reason": _is_text, "system_fingerprint": _is_text, "reasoning": _is_text, "unreadable": _is_text,
    "refusal": _is_text, "input_tokens": _is_count, "output_tokens": _is_count, "reasoning_tokens": _is_count,
    "cost_usd": _is_number, "latency_s": _is_number,
    "logprobs": lambda v: v is None or isinstance(v, list), "extra": lambda v: isinstance(v, dict),
    "notes": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
}


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(value)[:10_000]


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def _field(obj: Any, name: str) -> Any:
    """A field of a JSON object (dict) or of a litellm/pydantic object alike."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _valid_text(s: str) -> bool:
    """Whether ``s`` can be written as UTF-8 (a JSON ``\\ud800`` escape gives a lone surrogate, which cannot)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _escaped(s: str) -> str:
    return s.encode("utf-8", "backslashreplace").decode("utf-8")


class _Reading:
    """The notes and the first reason for unreadability gathered while one reply is read."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.unreadable: str | None = None
        self.bad_usage = False  # a token count is missing or not a count: a price computed from it is not one

    def fail(self, reason: str) -> None:
        if self.unreadable is None:
            self.unreadable = reason

    def text_field(self, value: Any, where: str) -> str | None:
        """An optional text field (finish_reason, reasoning, fingerprint): text or unknown, never coerced."""
        if value is None or (isinstance(value, str) and _valid_text(value)):
            return value
        if isinstance(value, str):
            self.notes.append(f"{where} holds a lone UTF-16 surrogate; kept with it escaped")
            return _escaped(value)
        self.notes.append(f"{where} is {_kind(value)} ({_short(value)}), not text; recorded as unknown")
        return None

    def count(self, value: Any, where: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)  # 12.0 is the number 12; JSON does not tell integers apart
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT:
            return value
        self.notes.append(f"{where} {_short(value)} is not a token count; recorded as unknown")
        self.bad_usage = True
        return None


def _content_text(content: Any, reading: _Reading) -> tuple[str, str | None]:
    """(the answer text, thinking found in content parts) of a message's ``content``; sets the reason when
    the content is not text (a number, an object, a part that is not text)."""
    if content is None:
        return "", None  # no content at all: an empty answer (the parser says "empty output")
    if isinstance(content, str):
        if not _valid_text(content):
            reading.fail("the message content holds a lone UTF-16 surrogate, which is not text")
            return "", None
        return content, None
    if isinstance(content, list):
        texts, thoughts = [], []
        for i, part in enumerate(content):
            kind = _field(part, "type") if isinstance(part, Mapping) else None
            value = part.get("text") if isinstance(part, Mapping) else None
            if kind in ("thinking", "reasoning") and isinstance(part, Mapping):
                thought = part.get("thinking") or part.get("text") or part.get("reasoning")
                if isinstance(thought, str) and _valid_text(thought):
                    thoughts.append(thought)
                    continue
            if kind in ("text", "output_text", None) and isinstance(value, str) and _valid_text(value):
                texts.append(value)
                continue
            reading.fail(f"content part {i} is {_kind(part)}"
                         + (f" of type {kind!r}" if isinstance(kind, str) else "") + " with no text")
            return "", None
        return "".join(texts), ("\n".join(thoughts) or None)
    reading.fail(f"the message content is {_kind(content)} ({_short(content)}), not text")
    return "", None


def _usage(usage: Any, reading: _Reading) -> tuple[int | None, int | None, int | None]:
    if usage is None or (not isinstance(usage, Mapping) and not hasattr(usage, "prompt_tokens")):
        reading.notes.append("the reply has no usage; token counts unknown" if usage is None else
                             f"usage is {_kind(usage)}, not an object; token counts unknown")
        reading.bad_usage = True
        return None, None, None
    tokens_in = reading.count(_field(usage, "prompt_tokens"), "usage.prompt_tokens")
    tokens_out = reading.count(_field(usage, "completion_tokens"), "usage.completion_tokens")
    return tokens_in, tokens_out, reasoning_token_count(usage)


def _logprobs(choice: Any, reading: _Reading) -> list[dict[str, Any]] | None:
    lp = _field(choice, "logprobs")
    if lp is None:
        return None
    try:
        content = _field(lp, "content")
        if not content:
            return None
        out = []
        for tok in content:
            t = tok if isinstance(tok, Mapping) else tok.model_dump()
            top = t.get("top_logprobs") or []
            out.append({"token": t.get("token"), "logprob": t.get("logprob"),
                        "top_logprobs": [{"token": _field(x, "token"), "logprob": _field(x, "logprob")} for x in top]})
        json.dumps(out, allow_nan=True)  # what the cache will store must serialise
        return out
    except Exception as exc:  # noqa: BLE001 - a malformed logprobs block is recorded as absent, with why
        reading.notes.append(f"logprobs could not be read ({type(exc).__name__}); recorded as absent")
        return None


_FROM_RESPONSE = object()  # read the usage block from the response itself


def _read(response: Any, latency_s: float, cost_usd: float, extra: dict[str, Any] | None,
          raw: str | None, usage: Any = _FROM_RESPONSE) -> ModelReply:
    reading = _Reading()
    choices = _field(response, "choices")
    choice = message = None
    if not isinstance(choices, list | tuple) or not choices:
        error = _field(response, "error")
        said = f" (it holds an error: {_short(_field(error, 'message') or error, 200)})" if error else ""
        reading.fail(("the reply has no choices" if not choices else f"choices is {_kind(choices)}") + said)
    else:
        choice = choices[0]
        if not isinstance(choice, Mapping) and not hasattr(choice, "message"):
            reading.fail(f"choice 0 is {_kind(choice)}, not an object")
            choice = None
        else:
            message = _field(choice, "message")
            if message is None or (not isinstance(message, Mapping) and not hasattr(message, "content")):
                reading.fail(f"choice 0 has no message (it is {_kind(message)})")
                message = None
    text, thought = _content_text(_field(message, "content"), reading) if message is not None else ("", None)
    reasoning = None
    if message is not None:
        reasoning = reading.text_field(_field(message, "reasoning_content") or _field(message, "reasoning"),
                                       "message.reasoning_content")
    reasoning = "\n".join(x for x in (thought, reasoning) if x) or None
    tokens_in, tokens_out, tokens_reasoning = _usage(
        _field(response, "usage") if usage is _FROM_RESPONSE else usage, reading)
    if not (isinstance(cost_usd, float) and (math.isnan(cost_usd) or (math.isfinite(cost_usd) and cost_usd >= 0))):
        reading.notes.append(f"the provider's cost {_short(cost_usd)} is not a price; recorded as unknown")
        cost_usd = math.nan
    if reading.bad_usage:
        cost_usd = math.nan  # a price computed from counts that are not counts (or zeros put for none) is not one
    reply = ModelReply(
        text=text,
        finish_reason=reading.text_field(_field(choice, "finish_reason"), "finish_reason") if choice is not None else None,
        input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost_usd, latency_s=latency_s,
        system_fingerprint=reading.text_field(_field(response, "system_fingerprint"), "system_fingerprint"),
        logprobs=_logprobs(choice, reading) if choice is not None else None,
        extra=dict(extra or {}),
        reasoning=reasoning, reasoning_tokens=tokens_reasoning,
        refusal=reading.text_field(_refusal(message), "message.refusal") if message is not None else None,
    )
    if reading.unreadable is not None:
        reply.unreadable = reading.unreadable
        reply.text = raw if raw is not None else _response_text(response)
    reply.notes = reading.notes
    return reply


def _refusal(message: Any) -> Any:
    # litellm moves OpenAI's message.refusal into provider_specific_fields
    found = _field(message, "refusal")
    if found is None:
        extra = _field(message, "provider_specific_fields")
        found = _field(extra, "refusal") if isinstance(extra, Mapping) else None
    return found


def _response_text(response: Any) -> str:
    dump = getattr(response, "model_dump", None)
    try:
        return _escaped(_dump(dump() if callable(dump) else response))
    except Exception:  # noqa: BLE001 - a response that cannot even be dumped is kept as its repr
        return _escaped(repr(response)[:100_000])


def reply_from_response(response: Any, latency_s: float, extra: dict[str, Any] | None = None, *,
                        usage: Any = _FROM_RESPONSE) -> ModelReply:
    """What judgelab keeps of a litellm ModelResponse (shared by every call path: direct, Router, local).

    Never raises: a response with no choices, no message or content that is not text is an unreadable
    reply holding the response as JSON. ``usage``: the raw body's usage block, when the caller has the
    body (litellm turns a missing usage into zeros and the string "5" into 5; the raw block says what the
    server sent)."""
    from judgelab.backends.pricing import response_cost

    try:
        cost = response_cost(response)
    except Exception:  # noqa: BLE001 - pricing a malformed response may fail: the price is then unknown
        cost = math.nan
    try:
        return _read(response, latency_s, cost, extra, None, usage)
    except Exception as exc:  # noqa: BLE001 - the readers are total; this is the last guard, with the reason
        return ModelReply(text=_response_text(response), latency_s=latency_s, extra=dict(extra or {}),
                          unreadable=f"the reply could not be read ({type(exc).__name__}: {_short(str(exc), 200)})")


def body_is_completion(data: Any) -> bool:
    """Whether a decoded 2xx body is a chat completion (an answer, billed): a JSON object with ``choices``
    or ``usage``. Anything else (an HTML page, an error object, an empty body) is not an answer."""
    return isinstance(data, Mapping) and ("choices" in data or "usage" in data)


def decode_body(body: bytes) -> tuple[Any, str, str | None]:
    """(the decoded JSON value or None, the body as text, why the body is not valid UTF-8 or None)."""
    bad_utf8 = None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_utf8 = f"the reply body is not valid UTF-8 (byte {body[exc.start]:#04x} at offset {exc.start})"
        text = body.decode("utf-8", "backslashreplace")
    try:
        data = json.loads(body.decode("utf-8", "replace") if bad_utf8 else text)
    except (ValueError, RecursionError):  # not JSON, nested past the parser's depth, or a 5000-digit number
        data = None
    return data, text, bad_utf8


def reply_from_body(body: bytes, latency_s: float, *, cost_usd: float = math.nan,
                    extra: dict[str, Any] | None = None) -> ModelReply | None:
    """The reply to keep from a raw 2xx body that is a chat completion (see :func:`body_is_completion`),
    read by judgelab itself (litellm could not read it); None when the body is no completion at all."""
    data, text, bad_utf8 = decode_body(body)
    if not body_is_completion(data):
        return None
    reply = reply_from_dict(data, latency_s, cost_usd=cost_usd, extra=extra, raw_text=text)
    if bad_utf8 is not None:  # a paid answer whose bytes are damaged: kept whole, never read
        reply.unreadable, reply.text = bad_utf8, text
    return reply


def reply_from_dict(data: Mapping[str, Any], latency_s: float = math.nan, *, cost_usd: float = math.nan,
                    extra: dict[str, Any] | None = None, raw_text: str | None = None) -> ModelReply:
    """The reply to keep from a decoded chat-completion body (a raw reply, a batch output line's body).
    Never raises; ``raw_text`` (default: the body as JSON) is what an unreadable reply keeps as its text."""
    try:
        return _read(data, latency_s, cost_usd, extra, raw_text if raw_text is not None else _escaped(_dump(data)))
    except Exception as exc:  # noqa: BLE001 - the readers are total; this is the last guard, with the reason
        return ModelReply(text=raw_text if raw_text is not None else _escaped(_dump(data)), latency_s=latency_s,
                          extra=dict(extra or {}),
                          unreadable=f"the reply could not be read ({type(exc).__name__}: {_short(str(exc), 200)})")


def reasoning_token_count(usage: Any) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens`` (OpenAI's field; litellm maps other providers' to it),
    from a litellm usage object or a raw response body's ``usage`` dict (the batch path).

    They are part of ``completion_tokens`` already, so the cost counts them once."""
    details = _field(usage, "completion_tokens_details") if usage else None
    value = _field(details, "reasoning_tokens") if details is not None else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT else None
