"""What the engine's documented retry / re-ask policy predicts for a conversation's fault sequence.

Written independently of the engine's code, from its documented policy:
- a retryable fault (429, 5xx, timeout, dropped connection, cut body) is retried up to
  ``max_retries`` times; the last one, if retries run out, ends the request as ``api_error``;
- a rejected request (400 context length) is not retried and ends as ``api_error``;
- an unparseable answer (empty, truncated / malformed JSON, over-long) is re-asked up to
  ``max_reasks`` times, then ends as ``parse_error``; a refusal ends as ``refusal`` at once
  (for rubrics that recognise refusals, as the built-in ones do);
- a valid answer ends as ``ok``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.support.fault_server import CONTENT_KINDS, REJECTED_KINDS, RETRYABLE_KINDS

# The start of the unscored_reason the engine must give when a request ends on this kind of fault.
REASON_PREFIX: dict[str, str] = {
    "rate_limit_retry_after": "rate limited (",
    "rate_limit": "rate limited (",
    "http_500": "server or connection failure (",
    "http_502": "server or connection failure (",
    "http_503": "server or connection failure (",
    "drop": "connection failure (",  # no complete HTTP answer came
    "cut_body": "connection failure (",
    "timeout": "timed out (",
    "context_exceeded": "ContextWindowExceededError",
    "empty": "empty output",
    "truncated_json": "no JSON object found in the output",
    "malformed_json": "no JSON object found in the output",
    "overlong": "no JSON object found in the output (output truncated at max_tokens)",
    "refusal": "the judge refused: ",
}


@dataclass
class Expected:
    """The predicted end of one request (one conversation key)."""

    status: str
    final_kind: str  # the kind of the last answer, which decides the reason
    calls: int = 0
    retries: int = 0
    reasks: int = 0
    last_chain_attempts: int = 0  # attempts of the final call chain (quoted in api_error reasons)
    kinds: Counter[str] = field(default_factory=Counter)  # every kind this request met

    def reason_ok(self, reason: str | None) -> bool:
        """Whether an engine reason is the precise one for this outcome."""
        if self.status == "ok":
            return reason is None
        if reason is None:
            return False
        prefix = REASON_PREFIX[self.final_kind]
        if self.final_kind in RETRYABLE_KINDS or self.final_kind in REJECTED_KINDS:
            return reason.startswith(prefix) and reason.endswith(f"after {self.last_chain_attempts} attempt(s)")
        return reason.startswith(prefix) if self.final_kind == "refusal" else reason == prefix


def expected_outcome(kind_at: Callable[[int], str], max_retries: int, max_reasks: int) -> Expected:
    """Replay the policy over ``kind_at(n)``, the kind the server gives the n-th request of a key."""
    n = 0
    exp = Expected(status="", final_kind="")
    for reask in range(max_reasks + 1):
        attempts = 0
        while True:
            kind = kind_at(n)
            n += 1
            attempts += 1
            exp.calls += 1
            exp.kinds[kind] += 1
            if kind in RETRYABLE_KINDS and attempts <= max_retries:
                exp.retries += 1
                continue
            break
        exp.final_kind, exp.last_chain_attempts = kind, attempts
        if kind in RETRYABLE_KINDS or kind in REJECTED_KINDS:
            exp.status = "api_error"
            return exp
        if kind == "ok":
            exp.status = "ok"
            return exp
        if kind == "refusal":
            exp.status = "refusal"
            return exp
        assert kind in CONTENT_KINDS, kind
        if reask < max_reasks:
            exp.reasks += 1
            continue
        exp.status = "parse_error"
        return exp
    raise AssertionError("unreachable")
