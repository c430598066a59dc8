"""The reply readers (judgelab.backends.reply) are total: any body, any field of any type, gives a ModelReply that
the cache can store and give back, never an exception; only text that really is text becomes an answer."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.backends.reply import MAX_TOKEN_COUNT, ModelReply, reply_from_body, reply_from_dict

# any JSON-like value, including what strict JSON forbids but Python's parser gives (NaN, lone surrogates)
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
                   st.sampled_from(["\ud800", "stop", "length", "content_filter", "", '{"score": 3}']))
VALUES = st.recursive(LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                      max_leaves=20)
PARTS = st.lists(st.one_of(st.fixed_dictionaries({"type": st.sampled_from(["text", "thinking", "image_url", "x"]),
                                                  "text": VALUES}), VALUES), max_size=3)


@st.composite
def completions(draw: st.DrawFn) -> dict[str, Any]:
    """Chat-completion bodies whose every field may be missing or of any type."""
    message = draw(st.one_of(VALUES, st.fixed_dictionaries(
        {"role": st.just("assistant"), "content": st.one_of(VALUES, PARTS)},
        optional={"refusal": VALUES, "reasoning_content": VALUES})))
    choice = draw(st.one_of(VALUES, st.fixed_dictionaries(
        {"message": st.just(message)}, optional={"finish_reason": VALUES, "logprobs": VALUES, "index": VALUES})))
    body = draw(st.fixed_dictionaries({}, optional={
        "choices": st.one_of(VALUES, st.lists(st.just(choice), min_size=1, max_size=2)),
        "usage": st.one_of(VALUES, st.fixed_dictionaries({}, optional={
            "prompt_tokens": VALUES, "completion_tokens": VALUES, "completion_tokens_details": VALUES})),
        "system_fingerprint": VALUES, "error": VALUES}))
    return body


def _valid_text(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check(reply: ModelReply) -> None:
    assert isinstance(reply.text, str) and _valid_text(reply.text)
    for count in (reply.input_tokens, reply.output_tokens, reply.reasoning_tokens):
        assert count is None or (type(count) is int and 0 <= count <= MAX_TOKEN_COUNT)
    assert math.isnan(reply.cost_usd) or (math.isfinite(reply.cost_usd) and reply.cost_usd >= 0)
    for text in (reply.finish_reason, reply.reasoning, reply.refusal, reply.system_fingerprint, reply.unreadable):
        assert text is None or (isinstance(text, str) and _valid_text(text))
    # what the cache stores (JSON) gives the same reply back (compared as JSON text: NaN == NaN there)
    stored = json.dumps(reply.to_json(), ensure_ascii=True, default=str, sort_keys=True)
    back = ModelReply.from_json(json.loads(stored))
    assert json.dumps(back.to_json(), ensure_ascii=True, default=str, sort_keys=True) == stored


@settings(max_examples=400, deadline=None)
@given(body=completions(), cost=st.floats(allow_nan=True, allow_infinity=True))
def test_any_completion_body_reads_without_raising(body, cost):
    """Invariant: reply_from_dict never raises; counts are counts or unknown, the cost a price or unknown, every
    text field writable as UTF-8, and the cached form gives the reply back. An answer (unreadable is None) is
    read only from content that is text or a list of text parts; otherwise the reply keeps the body whole."""
    reply = reply_from_dict(body, 0.1, cost_usd=cost)
    _check(reply)
    choices = body.get("choices")
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
        else None
    content = message.get("content") if isinstance(message, dict) else None
    if reply.unreadable is None:
        assert isinstance(message, dict)
        assert content is None or isinstance(content, str | list)
        if isinstance(content, str):
            assert reply.text == content
    else:
        assert reply.text == json.dumps(body, ensure_ascii=True, default=repr)  # the body whole, as received


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(st.binary(max_size=300), VALUES.map(lambda v: json.dumps(v).encode()),
                      completions().map(lambda c: json.dumps(c).encode())))
def test_any_body_bytes_give_a_reply_or_none(data):
    """Invariant: reply_from_body on any bytes never raises; it gives None exactly when the bytes are no chat
    completion (not a JSON object with choices or usage), else a reply whose text is writable."""
    reply = reply_from_body(data, 0.0)
    try:
        decoded = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        decoded = None
    is_completion = isinstance(decoded, dict) and ("choices" in decoded or "usage" in decoded)
    assert (reply is not None) == is_completion
    if reply is not None:
        _check(reply)


@settings(max_examples=200, deadline=None)
@given(entry=VALUES)
def test_any_cache_entry_reads_back_as_a_reply(entry):
    """Invariant: whatever a cache file holds (a damaged or foreign entry), from_json gives a reply, never raises."""
    _check(ModelReply.from_json(entry))


def test_the_shapes_the_api_allows_read_as_answers():
    def body(content: Any, **message: Any) -> dict[str, Any]:
        return {"choices": [{"message": {"role": "assistant", "content": content, **message},
                             "finish_reason": "stop"}], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}

    parts = reply_from_dict(body([{"type": "text", "text": '{"sc'}, {"type": "text", "text": 'ore": 4}'}]))
    assert parts.text == '{"score": 4}' and parts.unreadable is None
    thinking = reply_from_dict(body([{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "A"}]))
    assert (thinking.text, thinking.reasoning) == ("A", "hmm")
    refused = reply_from_dict(body(None, refusal="I can't"))
    assert (refused.text, refused.refusal, refused.unreadable) == ("", "I can't", None)
    assert (parts.input_tokens, parts.output_tokens) == (7, 3)
    number = reply_from_dict(body(4))
    assert number.unreadable == "the message content is a number (4), not text"
    assert json.loads(number.text)["choices"][0]["message"]["content"] == 4  # the reply as received
    odd = reply_from_dict({**body("x"), "usage": {"prompt_tokens": -5, "completion_tokens": "3"}}, cost_usd=0.5)
    assert (odd.input_tokens, odd.output_tokens) == (None, None) and math.isnan(odd.cost_usd)
    assert any("usage.prompt_tokens -5 is not a token count" in n for n in odd.notes)
    bad_bytes = reply_from_body(json.dumps(body("caf\u00e9")).encode().replace(b"caf", b"\xff\xfe"), 0.0)
    assert bad_bytes is not None and bad_bytes.unreadable.startswith("the reply body is not valid UTF-8")
