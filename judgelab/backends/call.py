"""One model call through litellm, and the classification of what can go wrong with it."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from judgelab.backends.pricing import offline_litellm, response_cost
from judgelab.backends.redaction import install_log_redaction, redact, secrets_in

litellm = offline_litellm()

__all__ = [
    "acall", "classify", "ensure_provider", "ErrorKind", "ModelCallError", "ModelReply",
    "reasoning_token_count", "reply_from_response",
]

litellm.suppress_debug_info = True  # no "Give Feedback" banners in notebooks and logs
install_log_redaction()  # litellm's and the HTTP clients' loggers now exist: no key reaches a log record

# OpenAI-compatible servers that need no key still need the openai client to have one; the provider's own
# environment variable wins over this placeholder
_KEYLESS_PLACEHOLDER = "no-key-needed"
_PROVIDER_KEY_ENV = {"openai/": "OPENAI_API_KEY", "hosted_vllm/": "HOSTED_VLLM_API_KEY"}

ErrorKind = Literal["retryable", "fatal", "request"]


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

    def to_json(self) -> dict[str, Any]:
        d = self.__dict__.copy()
        d["cost_usd"] = None if math.isnan(self.cost_usd) else self.cost_usd
        d["latency_s"] = None if math.isnan(self.latency_s) else self.latency_s
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ModelReply:
        d = dict(d)
        d["cost_usd"] = math.nan if d.get("cost_usd") is None else float(d["cost_usd"])
        d["latency_s"] = math.nan if d.get("latency_s") is None else float(d["latency_s"])
        return cls(**d)


class ModelCallError(Exception):
    """A failed call, classified: retry it, give up on this request, or stop the whole run."""

    def __init__(self, message: str, kind: ErrorKind, retry_after: float | None = None,
                 unreachable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after
        self.unreachable = unreachable  # no HTTP answer at all (refused, DNS, reset before a response)


def ensure_provider(model: str) -> None:
    """Register in-process providers that litellm does not know by itself (the embedded judge)."""
    if model.startswith("local/"):
        from judgelab.backends import local

        local.register()


def _retry_after_seconds(exc: BaseException) -> float | None:
    headers: Any = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    for source in (headers, getattr(exc, "litellm_response_headers", None), getattr(exc, "headers", None)):
        if not source:
            continue
        value = source.get("retry-after") or source.get("Retry-After")
        if value is None:
            continue
        try:
            return max(0.0, float(value))
        except (TypeError, ValueError):
            continue
    return None


def _short(exc: BaseException, secrets: tuple[str, ...]) -> str:
    # redacted before it is cut, so a key cannot survive half-masked at the cut
    return redact(f"{type(exc).__name__}: {exc}".replace("\n", " "), secrets)[:400]


def classify(exc: BaseException, secrets: tuple[str, ...] = ()) -> ModelCallError:
    """Map a litellm/httpx exception to a ModelCallError with a message free of secrets."""
    msg = _short(exc, secrets)
    e = litellm.exceptions
    if "missing credentials" in msg.lower() or "api key not found" in msg.lower():
        return ModelCallError(f"authentication failed: no API key ({msg})", "fatal")
    if isinstance(exc, e.AuthenticationError | e.PermissionDeniedError):
        return ModelCallError(f"authentication failed ({msg})", "fatal")
    if isinstance(exc, e.NotFoundError):
        return ModelCallError(f"model or endpoint not found ({msg})", "fatal")
    if isinstance(exc, e.RateLimitError):
        return ModelCallError(f"rate limited ({msg})", "retryable", _retry_after_seconds(exc))
    if isinstance(exc, e.Timeout):
        return ModelCallError(f"timed out ({msg})", "retryable")
    if isinstance(exc, e.ContextWindowExceededError | e.ContentPolicyViolationError):
        return ModelCallError(msg, "request")
    if isinstance(exc, e.BadRequestError):
        text = str(exc).lower()
        if "llm provider not provided" in text or "provider list" in text or "not a valid model" in text:
            return ModelCallError(f"unknown model ({msg})", "fatal")
        return ModelCallError(f"request rejected ({msg})", "request")
    lowered = msg.lower()
    no_answer = any(t in lowered for t in ("connection error", "connection refused", "connecterror",
                                           "name or service not known", "nodename nor servname"))
    if isinstance(exc, e.APIConnectionError) or no_answer:
        # litellm reports a refused connection as InternalServerError("Connection error."): no HTTP answer came
        return ModelCallError(f"connection failure ({msg})", "retryable", unreachable=True)
    if isinstance(exc, e.InternalServerError | e.ServiceUnavailableError | e.BadGatewayError):
        return ModelCallError(f"server or connection failure ({msg})", "retryable", _retry_after_seconds(exc))
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and (status >= 500 or status == 429):
        return ModelCallError(f"server error {status} ({msg})", "retryable", _retry_after_seconds(exc))
    if isinstance(exc, e.APIError):
        return ModelCallError(f"API error ({msg})", "retryable")
    if isinstance(exc, ConnectionError | TimeoutError | OSError):
        return ModelCallError(f"connection failure ({msg})", "retryable")
    return ModelCallError(f"unexpected error ({msg})", "request")


def _logprobs(choice: Any) -> list[dict[str, Any]] | None:
    lp = getattr(choice, "logprobs", None)
    if lp is None and isinstance(choice, dict):
        lp = choice.get("logprobs")
    if lp is None:
        return None
    content = getattr(lp, "content", None) if not isinstance(lp, dict) else lp.get("content")
    if not content:
        return None
    out = []
    for tok in content:
        t = tok if isinstance(tok, dict) else tok.model_dump()
        out.append(
            {
                "token": t.get("token"),
                "logprob": t.get("logprob"),
                "top_logprobs": [
                    {"token": x.get("token"), "logprob": x.get("logprob")}
                    for x in (t.get("top_logprobs") or [])
                    if isinstance(x, dict)
                ]
                or [
                    {"token": getattr(x, "token", None), "logprob": getattr(x, "logprob", None)}
                    for x in (t.get("top_logprobs") or [])
                    if not isinstance(x, dict)
                ],
            }
        )
    return out


async def acall(
    model: str,
    messages: list[dict[str, str]],
    *,
    params: dict[str, Any],
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
) -> ModelReply:
    """One completion; raises ModelCallError (classified) on failure. No retries here."""
    ensure_provider(model)
    kwargs: dict[str, Any] = dict(params)
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and not _provider_key_in_env(model):
        kwargs["api_key"] = _KEYLESS_PLACEHOLDER
    start = time.perf_counter()
    try:
        # max_retries=0: judgelab counts and schedules every retry itself
        if not model.startswith("local/"):  # the in-process provider has no client-side retries to switch off
            kwargs.update(max_retries=0, num_retries=0)
        response = await litellm.acompletion(model=model, messages=messages, timeout=timeout, drop_params=True,
                                             **kwargs)
    except Exception as exc:  # noqa: BLE001 - classified below, nothing swallowed
        raise classify(exc, secrets=(api_key or "", *secrets_in(api_base), *secrets_in(params))) from None
    return reply_from_response(response, time.perf_counter() - start)


def _provider_key_in_env(model: str) -> bool:
    """True unless ``model`` is served by an OpenAI-compatible server whose key variable is unset."""
    env = next((v for prefix, v in _PROVIDER_KEY_ENV.items() if model.startswith(prefix)), None)
    return env is None or bool(os.environ.get(env))


def reply_from_response(response: Any, latency_s: float, extra: dict[str, Any] | None = None) -> ModelReply:
    """What judgelab keeps of a litellm ModelResponse (shared by every call path: direct, Router, batch)."""
    choice = response.choices[0]
    text = choice.message.content if choice.message is not None else None
    usage = getattr(response, "usage", None)
    reasoning = getattr(choice.message, "reasoning_content", None) if choice.message is not None else None
    return ModelReply(
        text=text or "",
        finish_reason=getattr(choice, "finish_reason", None),
        input_tokens=getattr(usage, "prompt_tokens", None) if usage else None,
        output_tokens=getattr(usage, "completion_tokens", None) if usage else None,
        cost_usd=response_cost(response),
        latency_s=latency_s,
        system_fingerprint=getattr(response, "system_fingerprint", None),
        logprobs=_logprobs(choice),
        extra=dict(extra or {}),
        reasoning=reasoning or None,
        reasoning_tokens=reasoning_token_count(usage),
    )


def reasoning_token_count(usage: Any) -> int | None:
    """``usage.completion_tokens_details.reasoning_tokens`` (OpenAI's field; litellm maps other providers' to it),
    from a litellm usage object or a raw response body's ``usage`` dict (the batch path).

    They are part of ``completion_tokens`` already, so the cost counts them once."""
    if isinstance(usage, dict):
        details = usage.get("completion_tokens_details")
    else:
        details = getattr(usage, "completion_tokens_details", None) if usage else None
    if isinstance(details, dict):
        value = details.get("reasoning_tokens")
    else:
        value = getattr(details, "reasoning_tokens", None)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
