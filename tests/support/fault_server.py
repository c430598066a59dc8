"""A fault-injecting OpenAI-compatible chat-completions server on 127.0.0.1 for reliability tests.

Every POST /v1/chat/completions gets one *kind* of answer, chosen deterministically from the
request's conversation key (by default: the hash of the messages up to the first user message,
so retries and re-asks of one request share a key) and how many requests that key has made
before (``n``). The choice comes from a per-request script, else from a seeded probability mix,
so the same run meets the same faults whatever the concurrency. Every request is logged with
the kind injected: that log is the ground truth tests compare the engine's summary with.

Used instead of a real provider because no provider is reachable here; the path through litellm,
the openai client and HTTP is the real one. Bounded: it binds 127.0.0.1 only, serves daemon
threads that end with the test, and answers a non-retryable 400 once ``max_requests`` is reached.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer
from tests.support.openai_stub import completion_body

# Faults the engine must retry (each is one failed HTTP attempt).
RETRYABLE_KINDS: tuple[str, ...] = (
    "rate_limit_retry_after",  # 429 with a Retry-After header
    "rate_limit",  # 429 without Retry-After
    "http_500",
    "http_502",
    "http_503",
    "timeout",  # answers only after ``slow_s``, past the client's timeout
    "drop",  # closes the connection without any response
    "cut_body",  # 200 whose body stops half-way (content-length larger than what is sent)
)
# Answers that arrive fine over HTTP but cannot be scored (re-asked or recorded unscored).
CONTENT_KINDS: tuple[str, ...] = (
    "empty",  # content ""
    "truncated_json",  # a valid answer cut before its first "}", finish_reason "stop"
    "malformed_json",  # not JSON at all where JSON was asked
    "refusal",  # "I'm sorry, I can't help with that."
    "overlong",  # a long rambling answer cut at max_tokens, finish_reason "length"
)
# Requests the provider rejects for good: not retried, recorded api_error.
REJECTED_KINDS: tuple[str, ...] = (
    "context_exceeded",  # 400 context_length_exceeded: this request fails, the run goes on
    "unauthorized",  # 401: the whole run stops (every key would fail the same way)
)
FAULT_KINDS: tuple[str, ...] = RETRYABLE_KINDS + CONTENT_KINDS + REJECTED_KINDS
ALL_KINDS: tuple[str, ...] = FAULT_KINDS + ("ok",)
OVER_LIMIT = "over_limit"

REFUSAL_TEXT = "I'm sorry, I can't help with that."


@dataclass(frozen=True)
class Injection:
    """What the server did with one request."""

    index: int  # arrival order over the whole server life
    key: str  # conversation key
    n: int  # how many earlier requests this key made
    kind: str
    reask: bool  # the request carries an earlier assistant turn (a re-ask)
    arrived: float  # time.monotonic() at arrival


def first_turn_key(body: Mapping[str, Any]) -> str:
    """Default conversation key: the hash of the messages up to and including the first user message,
    plus the sampling seed (repeats differ by seed)."""
    head: list[Any] = []
    for msg in body.get("messages", []):
        head.append(msg)
        if msg.get("role") == "user":
            break
    blob = json.dumps({"head": head, "seed": body.get("seed")}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def tag_key(pattern: str = r"\[item:([^\]]+)\]") -> Callable[[Mapping[str, Any]], str]:
    """A key function reading an item tag planted in the prompt (e.g. ``[item:i3]``), seed included."""
    rx = re.compile(pattern)

    def key(body: Mapping[str, Any]) -> str:
        for msg in body.get("messages", []):
            m = rx.search(str(msg.get("content") or ""))
            if m:
                return m.group(1) if body.get("seed") in (None, 0) else f"{m.group(1)}#{body.get('seed')}"
        return first_turn_key(body)

    return key


def stable_score(key: str, lo: int = 1, hi: int = 5) -> int:
    """The score the server's valid answer gives a conversation (so misrouted answers are visible)."""
    return lo + int(hashlib.sha256(key.encode()).hexdigest(), 16) % (hi - lo + 1)


def toy_answer(body: Mapping[str, Any], key: str) -> str:
    """A valid answer for tests/support/toy_rubrics.ToyDirect."""
    return json.dumps({"score": stable_score(key)})


_CRITERION_KEY = re.compile(r"\(key: ([A-Za-z0-9_]+)")


def direct_score_answer(body: Mapping[str, Any], key: str) -> str:
    """A valid answer for the built-in ``direct_score`` rubric (criteria read from the prompt)."""
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "user")
    names = list(dict.fromkeys(_CRITERION_KEY.findall(prompt))) or ["quality"]
    scores = [
        {"criterion": c, "evidence": ["stub evidence"], "justification": "stub justification",
         "score": stable_score(f"{key}:{c}"), "improvement": "none"}
        for c in names
    ]
    return json.dumps({"scores": scores, "summary": "stub summary"})


class FaultPlan:
    """Chooses the kind of answer for the n-th request of a conversation key.

    ``script`` (key -> kinds for n = 0, 1, ...; "ok" past its end) wins over ``mix`` (kind ->
    probability, the remainder "ok"), which is drawn from a hash of (seed, key, n).
    """

    def __init__(self, mix: Mapping[str, float] | None = None, seed: int = 0,
                 script: Mapping[str, Sequence[str]] | Callable[[str, int], str] | None = None) -> None:
        mix = dict(mix or {})
        unknown = set(mix) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
        if sum(mix.values()) > 1.0 + 1e-9 or any(p < 0 for p in mix.values()):
            raise ValueError("fault probabilities must be >= 0 and sum to at most 1")
        if isinstance(script, Mapping):
            for kinds in script.values():
                bad = set(kinds) - set(ALL_KINDS)
                if bad:
                    raise ValueError(f"unknown kinds in script: {sorted(bad)}")
        self.mix, self.seed, self.script = mix, seed, script

    def kind(self, key: str, n: int) -> str:
        if callable(self.script):
            return self.script(key, n)
        if self.script is not None and key in self.script:
            kinds = self.script[key]
            return kinds[n] if n < len(kinds) else "ok"
        if not self.mix:
            return "ok"
        draw = random.Random(f"{self.seed}:{key}:{n}").random()
        acc = 0.0
        for kind in FAULT_KINDS:  # fixed order: the same seed gives the same kinds
            acc += self.mix.get(kind, 0.0)
            if draw < acc:
                return kind
        return "ok"


class FaultServer(LoopbackServer):
    """Threaded OpenAI-compatible server injecting faults by plan; use as a context manager."""

    def __init__(
        self,
        plan: FaultPlan | None = None,
        *,
        answer: Callable[[Mapping[str, Any], str], str] = toy_answer,
        key_fn: Callable[[Mapping[str, Any]], str] = first_turn_key,
        delay_s: float = 0.0,
        slow_s: float = 2.0,
        retry_after_s: float = 0.05,
        echo_auth: bool = False,
        max_requests: int = 100_000,
        usage: tuple[int, int] = (50, 10),
    ) -> None:
        self.plan = plan or FaultPlan()
        self.answer, self.key_fn = answer, key_fn
        self.delay_s, self.slow_s, self.max_requests, self.usage = delay_s, slow_s, max_requests, usage
        self.retry_after_s = retry_after_s
        # echo_auth: error messages quote the Authorization header, as careless providers do (secret tests)
        self.echo_auth = echo_auth
        self.log: list[Injection] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._per_key: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._serve(self._handler_class(), "fault-server")

    # -- bookkeeping ------------------------------------------------------------------------------
    def _record(self, body: dict[str, Any], headers: dict[str, str]) -> Injection:
        key = self.key_fn(body)
        with self._lock:
            n = self._per_key[key]
            self._per_key[key] += 1
            index = len(self.log)
            kind = OVER_LIMIT if index >= self.max_requests else self.plan.kind(key, n)
            reask = any(m.get("role") == "assistant" for m in body.get("messages", []))
            inj = Injection(index, key, n, kind, reask, time.monotonic())
            self.log.append(inj)
            self.bodies.append(body)
            self.headers.append(headers)
        return inj

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.log)

    def kind_counts(self) -> Counter[str]:
        """Requests per kind injected (ground truth)."""
        with self._lock:
            return Counter(i.kind for i in self.log)

    def by_key(self) -> dict[str, list[Injection]]:
        """Each conversation's requests in arrival order."""
        out: dict[str, list[Injection]] = {}
        with self._lock:
            for inj in self.log:
                out.setdefault(inj.key, []).append(inj)
        return out

    def reset_log(self) -> None:
        with self._lock:
            self.log.clear()
            self.bodies.clear()
            self.headers.clear()
            self._per_key.clear()

    # -- HTTP -------------------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models: a readiness probe
                self._send_json(200, {"object": "list", "data": [{"id": "fault-stub", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                inj = server._record(body, {k.lower(): v for k, v in self.headers.items()})
                try:
                    server._respond(self, body, inj)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): expected
                    self.close_connection = True

            def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
                self.send_raw(status, json.dumps(payload).encode(), headers)

            def send_raw(self, status: int, data: bytes, headers: Mapping[str, str] | None = None,
                         declared_length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(declared_length if declared_length is not None else len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

        return Handler

    def _completion(self, body: Mapping[str, Any], content: str, finish_reason: str = "stop") -> dict[str, Any]:
        payload = completion_body(content, str(body.get("model", "fault-stub")), finish_reason)
        prompt, completion = self.usage
        payload["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion}
        return payload

    def _respond(self, h: Any, body: Mapping[str, Any], inj: Injection) -> None:
        kind = inj.kind
        time.sleep(self.slow_s if kind == "timeout" else self.delay_s)
        echo = f" (you sent {h.headers.get('authorization')})" if self.echo_auth else ""
        err = {"error": {"message": f"injected {kind}{echo}", "type": "server_error"}}
        if kind == OVER_LIMIT:
            h._send_json(400, {"error": {"message": "fault server request limit reached", "type": "invalid_request"}})
        elif kind == "rate_limit_retry_after":
            h._send_json(429, {"error": {"message": f"injected rate limit{echo}", "type": "rate_limit"}},
                         {"retry-after": f"{self.retry_after_s:g}"})
        elif kind == "rate_limit":
            h._send_json(429, {"error": {"message": f"injected rate limit{echo}", "type": "rate_limit"}})
        elif kind == "unauthorized":
            h._send_json(401, {"error": {"message": f"Incorrect API key provided{echo}", "type": "invalid_request_error",
                                         "code": "invalid_api_key"}})
        elif kind == "context_exceeded":
            h._send_json(400, {"error": {"message": f"This model's maximum context length is 8192 tokens{echo}",
                                         "type": "invalid_request_error", "code": "context_length_exceeded"}})
        elif kind in ("http_500", "http_502", "http_503"):
            h._send_json(int(kind[-3:]), err)
        elif kind == "drop":
            h.close_connection = True
            h.connection.shutdown(2)
        elif kind == "cut_body":
            data = json.dumps(self._completion(body, self.answer(body, inj.key))).encode()
            h.close_connection = True
            h.send_raw(200, data[: len(data) // 2], declared_length=len(data))
            h.connection.shutdown(2)
        elif kind == "empty":
            h._send_json(200, self._completion(body, ""))
        elif kind == "truncated_json":
            valid = self.answer(body, inj.key)
            cut = valid.find("}")  # stop before the first object closes: no complete object survives
            h._send_json(200, self._completion(body, valid[: cut if cut > 0 else max(1, len(valid) // 2)]))
        elif kind == "malformed_json":
            h._send_json(200, self._completion(body, "score = four out of five, roughly"))
        elif kind == "refusal":
            h._send_json(200, self._completion(body, REFUSAL_TEXT))
        elif kind == "overlong":
            rambling = "Let me think about this very carefully, step by step. " * 40
            h._send_json(200, self._completion(body, rambling, finish_reason="length"))
        else:  # "ok" (or a delay-only timeout that the client outlived)
            h._send_json(200, self._completion(body, self.answer(body, inj.key)))

