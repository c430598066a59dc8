"""The space of replies the chaos server draws from: every way a provider (or what stands in front of it) can
answer a chat-completion request badly, as exact bytes.

Each kind builds one :class:`Wire` (status line, headers, body, framing, timing) and a *label*, what the
client owes that reply:

- ``retry``: no answer arrived (a reset, a timeout, a 5xx, a 2xx that is no chat completion): the client
  may retry; nothing was paid;
- ``reject``: a 4xx that refuses this request for good (400, 413, 418, 422): an ``api_error`` row;
- ``paid_valid``: a chat completion holding the answer in a form the API allows (any 2xx, odd headers, text
  parts, usage missing or nonsense): it must be kept and scored with exactly the scores it holds;
- ``paid_maybe``: the answer in an unusual wrapping (a code fence, prose before it, scores as text, cut at
  max_tokens): kept; scored or not, but if scored then with exactly the scores it holds;
- ``paid_invalid``: a chat completion with no usable answer (no choices, content a number, a NaN score,
  bytes that are not UTF-8, a refusal ...): kept, and never scored.

``marker`` is a string the client must keep somewhere (cache or table) for a paid reply: it is written into
the answer text when there is one, else into the reply's ``system_fingerprint`` (which an unreadable reply
keeps as part of its raw body); None when the reply carries nothing to keep (an empty answer).

The valid answer is the built-in ``direct_score`` rubric's, with the scores tests/support/fault_server.py's
``direct_score_answer`` gives each conversation, so a score that was not in the reply cannot pass as one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.support.fault_server import REFUSAL_TEXT, direct_score_answer

__all__ = ["FAMILIES", "KINDS", "LABELS", "PAID", "ReplySpace", "ScriptedSpace", "Wire"]

LABELS = ("retry", "reject", "paid_valid", "paid_maybe", "paid_invalid")
PAID = ("paid_valid", "paid_maybe", "paid_invalid")


@dataclass(frozen=True)
class Wire:
    """The exact bytes (and timing) of one reply, and what the client owes it."""

    kind: str
    label: str
    head: bytes  # status line and headers, through the blank line
    body: bytes = b""
    marker: str | None = None
    scores: Mapping[str, int] = field(default_factory=dict)
    close: bool = False  # close the connection after the reply (framing the client cannot reuse)
    chunk: int = 0  # write the body this many bytes at a time (0: at once)
    pause_s: float = 0.0  # between two chunks
    head_delay_s: float = 0.0  # before the status line
    reset_at: int | None = None  # send this many body bytes, then reset the connection (0: before the head)


@dataclass
class _Ctx:
    rng: random.Random
    body: Mapping[str, Any]
    key: str
    marker: str
    timeout_s: float

    def answer(self) -> dict[str, Any]:
        """The valid direct_score answer for this conversation, the marker in its summary."""
        data = json.loads(direct_score_answer(self.body, self.key))
        data["summary"] = f"stub summary {self.marker}"
        return data

    def scores(self) -> dict[str, int]:
        return {s["criterion"]: s["score"] for s in self.answer()["scores"]}


def _head(status: int | str, headers: Sequence[tuple[str, str]], reason: str = "X") -> bytes:
    line = f"HTTP/1.1 {status} {reason}\r\n" if isinstance(status, int) else status
    return (line + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode("latin-1")


def _completion(ctx: _Ctx, content: Any = None, *, finish: Any = "stop", usage: Any = "default",
                message: Any = "default", choices: Any = "default", **extra: Any) -> dict[str, Any]:
    msg = {"role": "assistant", "content": content} if message == "default" else message
    out: dict[str, Any] = {
        "id": f"chatcmpl-{ctx.marker}", "object": "chat.completion", "created": 1_700_000_000, "model": "chaos",
        "system_fingerprint": ctx.marker,
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}] if choices == "default" else choices,
    }
    if usage == "default":
        out["usage"] = {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}
    elif usage is not _ABSENT:
        out["usage"] = usage
    out.update(extra)
    return out


_ABSENT = object()


def _json(value: Any) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


def _reply(kind: str, label: str, body: bytes, *, status: int | str = 200, ctype: str | None = "application/json",
           extra_headers: Sequence[tuple[str, str]] = (), length: int | None = None, marker: str | None = None,
           scores: Mapping[str, int] | None = None, close: bool = False, **timing: Any) -> Wire:
    headers: list[tuple[str, str]] = []
    if ctype is not None:
        headers.append(("content-type", ctype))
    headers.append(("content-length", str(len(body) if length is None else length)))
    headers.extend(extra_headers)
    if close:
        headers.append(("connection", "close"))
    return Wire(kind, label, _head(status, headers), body, marker, dict(scores or {}), close, **timing)


def _paid(kind: str, ctx: _Ctx, data: dict[str, Any], label: str = "paid_valid", *, raw: bytes | None = None,
          marker: str | None = "", **kw: Any) -> Wire:
    """A 2xx chat completion; ``marker=""`` means the context's marker (in the text or the fingerprint)."""
    scores = ctx.scores() if label in ("paid_valid", "paid_maybe") else {}
    return _reply(kind, label, raw if raw is not None else _json(data), marker=ctx.marker if marker == "" else marker,
                  scores=scores, **kw)


def _text(ctx: _Ctx) -> str:
    return json.dumps(ctx.answer())


def _with_score(ctx: _Ctx, value: Any, raw_value: str | None = None) -> str:
    """The valid answer with the first criterion's score replaced (``raw_value``: verbatim JSON text)."""
    data = ctx.answer()
    data["scores"][0]["score"] = "@@SCORE@@" if raw_value is not None else value
    text = json.dumps(data, allow_nan=True)
    return text.replace('"@@SCORE@@"', raw_value) if raw_value is not None else text


def _conflicting(ctx: _Ctx) -> str:
    other = ctx.answer()
    for s in other["scores"]:
        s["score"] = 1 + s["score"] % 5
    return (f"{_text(ctx)}\nThe response under review asked me to output this instead: "
            f"{json.dumps(other)}")


# -- the kinds ---------------------------------------------------------------------------------------------
# each builder: ctx -> Wire. Grouped by family; the weights in ReplySpace give each family its share.

def _ok_family() -> dict[str, Callable[[_Ctx], Wire]]:
    def parts(ctx: _Ctx) -> list[dict[str, Any]]:
        text = _text(ctx)
        cut = ctx.rng.randrange(1, len(text))
        return [{"type": "text", "text": text[:cut]}, {"type": "text", "text": text[cut:]}]

    return {
        "ok": lambda c: _paid("ok", c, _completion(c, _text(c))),
        "ok_status_201": lambda c: _paid("ok_status_201", c, _completion(c, _text(c)), status=201),
        "ok_status_203": lambda c: _paid("ok_status_203", c, _completion(c, _text(c)), status=203),
        "ok_status_299": lambda c: _paid("ok_status_299", c, _completion(c, _text(c)), status=299),
        "ok_no_reason_phrase": lambda c: _paid("ok_no_reason_phrase", c, _completion(c, _text(c)),
                                               status="HTTP/1.1 200 \r\n"),
        "ok_ctype_html": lambda c: _paid("ok_ctype_html", c, _completion(c, _text(c)), ctype="text/html"),
        "ok_ctype_none": lambda c: _paid("ok_ctype_none", c, _completion(c, _text(c)), ctype=None),
        "ok_ctype_octets": lambda c: _paid("ok_ctype_octets", c, _completion(c, _text(c)),
                                           ctype="application/octet-stream"),
        "ok_trickled_fast": lambda c: _paid("ok_trickled_fast", c, _completion(c, _text(c)), chunk=97,
                                            pause_s=0.001),
        "ok_close_delimited": lambda c: Wire("ok_close_delimited", "paid_valid", _head(200, [
            ("content-type", "application/json"), ("connection", "close")]), _json(_completion(c, _text(c))),
            c.marker, c.scores(), close=True),
        "ok_extra_fields": lambda c: _paid("ok_extra_fields", c, _completion(
            c, message={"role": "assistant", "content": _text(c), "audio": None, "tool_calls": [], "x_unknown": {}},
            service_tier="default", x_chaos=[1, {"a": None}])),
        "ok_text_parts": lambda c: _paid("ok_text_parts", c, _completion(c, parts(c))),
        "ok_thinking_part": lambda c: _paid("ok_thinking_part", c, _completion(
            c, [{"type": "thinking", "thinking": "Let me weigh the evidence."}, {"type": "text", "text": _text(c)}])),
        "ok_reasoning_content": lambda c: _paid("ok_reasoning_content", c, _completion(
            c, message={"role": "assistant", "content": _text(c), "reasoning_content": "I think 4 fits."})),
        "ok_reasoning_wrong_type": lambda c: _paid("ok_reasoning_wrong_type", c, _completion(
            c, message={"role": "assistant", "content": _text(c), "reasoning_content": 5})),
        "ok_usage_missing": lambda c: _paid("ok_usage_missing", c, _completion(c, _text(c), usage=_ABSENT)),
        "ok_usage_null": lambda c: _paid("ok_usage_null", c, _completion(c, _text(c), usage=None)),
        "ok_usage_negative": lambda c: _paid("ok_usage_negative", c, _completion(
            c, _text(c), usage={"prompt_tokens": -50, "completion_tokens": -1, "total_tokens": -51})),
        "ok_usage_huge": lambda c: _paid("ok_usage_huge", c, _completion(
            c, _text(c), usage={"prompt_tokens": 10**30, "completion_tokens": 2**70, "total_tokens": 10**31})),
        "ok_usage_nonfinite": lambda c: _paid("ok_usage_nonfinite", c, _completion(
            c, _text(c), usage={"prompt_tokens": float("nan"), "completion_tokens": float("inf"), "total_tokens": 1})),
        "ok_usage_1e400": lambda c: _paid("ok_usage_1e400", c, {}, raw=_json(_completion(
            c, _text(c), usage={"prompt_tokens": 7, "completion_tokens": 8, "total_tokens": 15})).replace(
            b'"completion_tokens": 8', b'"completion_tokens": 1e400')),
        "ok_usage_strings": lambda c: _paid("ok_usage_strings", c, _completion(
            c, _text(c), usage={"prompt_tokens": "50", "completion_tokens": "ten", "total_tokens": None})),
        "ok_usage_wrong_type": lambda c: _paid("ok_usage_wrong_type", c, _completion(c, _text(c), usage=[50, 10])),
        "ok_logprobs_garbage": lambda c: _paid("ok_logprobs_garbage", c, _completion(
            c, choices=[{"index": 0, "message": {"role": "assistant", "content": _text(c)}, "finish_reason": "stop",
                         "logprobs": {"content": [1, "x", None]}}])),
        "ok_two_choices": lambda c: _paid("ok_two_choices", c, _completion(
            c, choices=[{"index": 0, "message": {"role": "assistant", "content": _text(c)}, "finish_reason": "stop"},
                        {"index": 1, "message": {"role": "assistant", "content": 7}, "finish_reason": None}])),
        "maybe_fenced": lambda c: _paid("maybe_fenced", c, _completion(c, f"```json\n{_text(c)}\n```"), "paid_maybe"),
        "maybe_prose_first": lambda c: _paid("maybe_prose_first", c, _completion(
            c, f"Having read the response carefully, here is my verdict.\n{_text(c)}"), "paid_maybe"),
        "maybe_scores_as_text": lambda c: _paid("maybe_scores_as_text", c, _completion(
            c, json.dumps({**c.answer(), "scores": [{**s, "score": str(s["score"])} for s in c.answer()["scores"]]})),
            "paid_maybe"),
        "maybe_cut_at_length": lambda c: _paid("maybe_cut_at_length", c, _completion(c, _text(c), finish="length"),
                                               "paid_maybe"),
        "maybe_finish_reason_odd": lambda c: _paid("maybe_finish_reason_odd", c, _completion(
            c, _text(c), finish=c.rng.choice([7, "banana", None, ["stop"], ""])), "paid_maybe"),
        "maybe_huge_prose": lambda c: _paid("maybe_huge_prose", c, _completion(
            c, "I considered every sentence. " * c.rng.randrange(2_000, 12_000) + _text(c)), "paid_maybe"),
        "maybe_control_chars": lambda c: _paid("maybe_control_chars", c, _completion(
            c, _text(c).replace("stub summary", "stub\x00\x1b[31m summary\u2028")), "paid_maybe"),
    }


def _content_family() -> dict[str, Callable[[_Ctx], Wire]]:
    bad = "paid_invalid"
    score_values: dict[str, tuple[Any, str | None]] = {
        "score_nan": (float("nan"), None), "score_infinity": (float("inf"), None),
        "score_minus_infinity": (float("-inf"), None), "score_1e400": (None, "1e400"),
        "score_5000_digits": (None, "9" * 5000), "score_out_of_range": (9, None), "score_zero": (0, None),
        "score_fraction": (3.5, None), "score_boolean": (True, None), "score_null": (None, "null"),
        "score_word": ("five", None), "score_object": ({"value": 3}, None), "score_list": ([3], None),
        "score_negative": (-2, None), "score_huge_float": (1.7e308, None),
    }
    out: dict[str, Callable[[_Ctx], Wire]] = {
        "empty_content": lambda c: _paid("empty_content", c, _completion(c, ""), bad, marker=None),
        "whitespace_content": lambda c: _paid("whitespace_content", c, _completion(c, " \n\t "), bad, marker=None),
        "null_content": lambda c: _paid("null_content", c, _completion(c, None), bad, marker=None),
        "refusal_text": lambda c: _paid("refusal_text", c, _completion(c, f"{REFUSAL_TEXT} ({c.marker})"), bad),
        "refusal_field": lambda c: _paid("refusal_field", c, _completion(
            c, message={"role": "assistant", "content": None, "refusal": f"I cannot judge this ({c.marker})."}), bad),
        "content_filter": lambda c: _paid("content_filter", c, _completion(c, _text(c), finish="content_filter"), bad),
        "truncated_answer": lambda c: _paid("truncated_answer", c, _completion(
            c, f"{c.marker} " + _text(c)[: c.rng.randrange(1, _text(c).index("}"))]), bad),
        "malformed_answer": lambda c: _paid("malformed_answer", c, _completion(
            c, f"score = four out of five, roughly ({c.marker})"), bad),
        "criterion_missing": lambda c: _paid("criterion_missing", c, _completion(
            c, json.dumps({**c.answer(), "scores": c.answer()["scores"][:1]})), bad),
        "criterion_twice": lambda c: _paid("criterion_twice", c, _completion(c, json.dumps(
            {**c.answer(), "scores": [*c.answer()["scores"], {**c.answer()["scores"][0],
                                                             "score": 1 + c.answer()["scores"][0]["score"] % 5}]})),
            bad),
        "scores_not_a_list": lambda c: _paid("scores_not_a_list", c, _completion(
            c, json.dumps({"scores": c.rng.choice([None, "4", 4, {"a": 1}]), "summary": c.marker})), bad),
        "answer_twice_in_a_list": lambda c: _paid("answer_twice_in_a_list", c, _completion(
            c, json.dumps([c.answer(), c.answer()])), "paid_maybe"),
        "deeply_nested_content": lambda c: _paid("deeply_nested_content", c, _completion(
            c, c.marker + " " + "[" * c.rng.randrange(5_000, 60_000)), bad),
        "deeply_nested_object": lambda c: _paid("deeply_nested_object", c, _completion(
            c, c.marker + ' {"scores": ' + '{"a": ' * 3_000 + "1" + "}" * 3_001), bad),
        "huge_garbage": lambda c: _paid("huge_garbage", c, _completion(
            c, c.marker + " " + "".join(c.rng.choice("{}[]\":,0123456789abc \n") for _ in range(2_000)) * 100), bad),
        "conflicting_verdicts": lambda c: _paid("conflicting_verdicts", c, _completion(c, _conflicting(c)), bad),
        "lone_surrogate": lambda c: _paid("lone_surrogate", c, {}, bad, raw=_json(_completion(
            c, _text(c))).replace(b"stub summary", b"stub \\ud800 summary")),
        "invalid_utf8": lambda c: _paid("invalid_utf8", c, {}, bad, raw=_json(_completion(
            c, _text(c))).replace(b"stub summary", b"stub \xff\xfe\x80 summary")),
    }
    for name, (value, raw) in score_values.items():
        out[name] = (lambda c, name=name, value=value, raw=raw:
                     _paid(name, c, {}, bad, raw=_json(_completion(c, _with_score(c, value, raw)))))
    return out


def _structure_family() -> dict[str, Callable[[_Ctx], Wire]]:
    bad = "paid_invalid"

    def shape(name: str, **kw: Any) -> Callable[[_Ctx], Wire]:
        return lambda c: _paid(name, c, _completion(c, _text(c), **kw), bad)

    return {
        "no_choices_key": lambda c: _paid("no_choices_key", c, {k: v for k, v in _completion(c, "x").items()
                                                               if k != "choices"}, bad),
        "choices_null": shape("choices_null", choices=None),
        "choices_empty": shape("choices_empty", choices=[]),
        "choices_object": shape("choices_object", choices={"0": {"message": {"content": "x"}}}),
        "choices_text": shape("choices_text", choices="the answer is 4"),
        "choice_null": shape("choice_null", choices=[None]),
        "choice_number": shape("choice_number", choices=[4]),
        "message_missing": shape("message_missing", choices=[{"index": 0, "finish_reason": "stop"}]),
        "message_null": shape("message_null", message=None),
        "message_text": shape("message_text", message="the answer is 4"),
        "content_number": lambda c: _paid("content_number", c, _completion(c, c.scores()["factual_accuracy"]), bad),
        "content_boolean": lambda c: _paid("content_boolean", c, _completion(c, True), bad),
        "content_object": lambda c: _paid("content_object", c, _completion(c, c.answer()), bad),
        "content_image_part": lambda c: _paid("content_image_part", c, _completion(
            c, [{"type": "text", "text": _text(c)}, {"type": "image_url", "image_url": {"url": "x"}}]), bad),
        "content_part_number": lambda c: _paid("content_part_number", c, _completion(c, [_text(c), 4]), bad),
    }


def _not_an_answer_family() -> dict[str, Callable[[_Ctx], Wire]]:
    html = b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    return {
        "body_empty": lambda c: _reply("body_empty", "retry", b""),
        "status_204": lambda c: Wire("status_204", "retry", _head(204, [("content-type", "application/json")])),
        "body_html_200": lambda c: _reply("body_html_200", "retry", html, ctype="text/html"),
        "body_html_as_json": lambda c: _reply("body_html_as_json", "retry", html),
        "body_error_object_200": lambda c: _reply("body_error_object_200", "retry", _json(
            {"error": {"message": "The server is overloaded", "type": "server_error", "code": 503}})),
        "body_json_array": lambda c: _reply("body_json_array", "retry", b"[1, 2, 3]"),
        "body_json_string": lambda c: _reply("body_json_string", "retry", b'"{\\"scores\\": []}"'),
        "body_json_null": lambda c: _reply("body_json_null", "retry", b"null"),
        "body_json_number": lambda c: _reply("body_json_number", "retry", b"4"),
        "body_not_json": lambda c: _reply("body_not_json", "retry", b"OK"),
        "body_nested_deep": lambda c: _reply("body_nested_deep", "retry",
                                             b"[" * 200_000 + b"]" * 200_000),
        "body_truncated_json": lambda c: _reply("body_truncated_json", "retry",
                                                _json(_completion(c, _text(c)))[:60]),
        "body_bad_utf8_html": lambda c: _reply("body_bad_utf8_html", "retry", b"<html>\xff\xfe</html>",
                                               ctype="text/html"),
        "redirect_to_get": lambda c: _reply("redirect_to_get", "retry", b"", status=301,
                                            extra_headers=[("location", "/v1/models")]),
    }


def _status_family() -> dict[str, Callable[[_Ctx], Wire]]:
    def err(name: str, code: int, label: str, *, ctype: str = "application/json",
            body: bytes | None = None) -> Callable[[_Ctx], Wire]:
        payload = body if body is not None else _json({"error": {"message": f"chaos {code}", "type": "chaos"}})
        return lambda c: _reply(name, label, payload, status=code, ctype=ctype)

    out: dict[str, Callable[[_Ctx], Wire]] = {}
    for code in (408, 409, 425, 429, 500, 502, 504, 520, 529, 599):
        out[f"status_{code}"] = err(f"status_{code}", code, "retry")
    for code in (400, 413, 418, 422):
        out[f"status_{code}"] = err(f"status_{code}", code, "reject")
    out["status_503_html"] = err("status_503_html", 503, "retry", ctype="text/html",
                                 body=b"<html><body><h1>503 Service Unavailable</h1></body></html>")
    out["status_500_empty"] = err("status_500_empty", 500, "retry", body=b"")
    out["status_400_context"] = err("status_400_context", 400, "reject", body=_json(
        {"error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error",
                   "code": "context_length_exceeded"}}))
    for value in ("0", "0.05", "-3", "soon", "", "Wed, 21 Oct 2015 07:28:00 GMT", "nan", "1e-9", "0x10"):
        out[f"status_429_retry_after_{value or 'empty'}"] = (
            lambda c, value=value: _reply(f"status_429_retry_after_{value or 'empty'}", "retry",
                                          _json({"error": {"message": "slow down", "type": "rate_limit"}}),
                                          status=429, extra_headers=[("retry-after", value)]))
    return out


def _transport_family() -> dict[str, Callable[[_Ctx], Wire]]:
    def valid(c: _Ctx) -> bytes:
        return _json(_completion(c, _text(c)))

    return {
        "reset_before_reply": lambda c: Wire("reset_before_reply", "retry", b"", reset_at=0),
        "reset_mid_body": lambda c: Wire("reset_mid_body", "retry", _head(200, [
            ("content-type", "application/json"), ("content-length", str(len(valid(c))))]), valid(c),
            reset_at=len(valid(c)) // 2),
        "closed_short_of_length": lambda c: _reply("closed_short_of_length", "retry", valid(c)[: len(valid(c)) // 2],
                                                   length=len(valid(c)), close=True),
        "length_shorter_than_body": lambda c: _reply("length_shorter_than_body", "retry", valid(c),
                                                     length=len(valid(c)) // 3, close=True),
        "slow_headers": lambda c: _reply("slow_headers", "retry", valid(c), head_delay_s=c.timeout_s * 1.6),
        "trickled_past_deadline": lambda c: _reply("trickled_past_deadline", "retry", valid(c), chunk=1,
                                                   pause_s=c.timeout_s / 12, close=True),
        "status_line_garbage": lambda c: Wire("status_line_garbage", "retry",
                                              b"HTTP/1.1 abc WHAT\r\ncontent-length: 2\r\n\r\n", b"{}", close=True),
        "not_http_at_all": lambda c: Wire("not_http_at_all", "retry", b"SSH-2.0-OpenSSH_9.6\r\n", close=True),
        "chunked_garbage": lambda c: Wire("chunked_garbage", "retry", _head(200, [
            ("content-type", "application/json"), ("transfer-encoding", "chunked")]), b"zz\r\n{}\r\n0\r\n\r\n",
            close=True),
        "gzip_header_plain_body": lambda c: _reply("gzip_header_plain_body", "retry", valid(c),
                                                   extra_headers=[("content-encoding", "gzip")], close=True),
        "huge_header": lambda c: _reply("huge_header", "retry", valid(c),
                                        extra_headers=[("x-chaos", "a" * 200_000)], close=True),
        "random_bytes": lambda c: Wire("random_bytes", "retry", bytes(c.rng.randrange(256) for _ in range(300)),
                                       close=True),
    }


FAMILIES: dict[str, dict[str, Callable[[_Ctx], Wire]]] = {
    "ok": _ok_family(), "content": _content_family(), "structure": _structure_family(),
    "not_an_answer": _not_an_answer_family(), "status": _status_family(), "transport": _transport_family(),
}
KINDS: dict[str, Callable[[_Ctx], Wire]] = {k: v for fam in FAMILIES.values() for k, v in fam.items()}
# how often each family is drawn (kinds within a family are equally likely)
DEFAULT_WEIGHTS = {"ok": 0.34, "content": 0.22, "structure": 0.12, "not_an_answer": 0.1, "status": 0.12,
                   "transport": 0.10}


class ReplySpace:
    """Draws one :class:`Wire` per request; ``exclude`` leaves kinds out (said in the test that does it)."""

    def __init__(self, timeout_s: float, *, weights: Mapping[str, float] | None = None,
                 exclude: Sequence[str] = ()) -> None:
        self.timeout_s = timeout_s
        weights = dict(weights or DEFAULT_WEIGHTS)
        self.kinds: list[str] = []
        self.weights: list[float] = []
        for family, share in weights.items():
            names = [k for k in FAMILIES[family] if k not in exclude]
            for k in names:
                self.kinds.append(k)
                self.weights.append(share / len(names))

    def draw(self, rng: random.Random, body: Mapping[str, Any], key: str, marker: str) -> Wire:
        kind = rng.choices(self.kinds, self.weights)[0]
        return KINDS[kind](_Ctx(rng, body, key, marker, self.timeout_s))


class ScriptedSpace(ReplySpace):
    """Replies by script: conversation key -> the kinds of its 1st, 2nd ... request ("ok" past the end)."""

    def __init__(self, timeout_s: float, script: Mapping[str, Sequence[str]]) -> None:
        super().__init__(timeout_s)
        unknown = {k for kinds in script.values() for k in kinds} - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds in script: {sorted(unknown)}")
        self.script = {key: list(kinds) for key, kinds in script.items()}
        self.seen: dict[str, int] = {}

    def draw(self, rng: random.Random, body: Mapping[str, Any], key: str, marker: str) -> Wire:
        n = self.seen.get(key, 0)
        self.seen[key] = n + 1
        kinds = self.script.get(key, [])
        kind = kinds[n] if n < len(kinds) else "ok"
        return KINDS[kind](_Ctx(rng, body, key, marker, self.timeout_s))
