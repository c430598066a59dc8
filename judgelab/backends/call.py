"""One model call through litellm, and the classification of what can go wrong with it.

A reply of any shape ends as a :class:`ModelReply` (an answer, possibly unreadable: see
:mod:`judgelab.backends.reply`) or a classified :class:`ModelCallError`; nothing else leaves :func:`acall`.
"""

from __future__ import annotations

import asyncio
import os
import time
import warnings
from collections.abc import Coroutine
from typing import Any, Literal

from judgelab.backends.pricing import cost_from_tokens, offline_litellm
from judgelab.backends.redaction import install_log_redaction, redact, secrets_in
from judgelab.backends.reply import (
    ModelReply,
    decode_body,
    reasoning_token_count,
    reply_from_body,
    reply_from_response,
)
from judgelab.backends.transport import RawReply, openai_client, recording

litellm = offline_litellm()

__all__ = [
    "acall", "classify", "ensure_provider", "ErrorKind", "ModelCallError", "ModelReply", "prepare_calls",
    "reasoning_token_count", "reply_from_response", "timed_out",
]

litellm.suppress_debug_info = True  # no "Give Feedback" banners in notebooks and logs
# litellm serialises a reply whose fields have unexpected types with pydantic, which warns on stderr; judgelab
# reads such replies itself and records what was wrong in the reply's notes
warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
install_log_redaction()  # litellm's and the HTTP clients' loggers now exist: no key reaches a log record

# OpenAI-compatible servers that need no key still need the openai client to have one; the provider's own
# environment variable wins over this placeholder
_KEYLESS_PLACEHOLDER = "no-key-needed"
_PROVIDER_KEY_ENV = {"openai/": "OPENAI_API_KEY", "hosted_vllm/": "HOSTED_VLLM_API_KEY"}

ErrorKind = Literal["retryable", "fatal", "request"]


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
    if isinstance(status, int) and (status >= 500 or status in _RETRYABLE_4XX):
        return ModelCallError(f"server error {status} ({msg})", "retryable", _retry_after_seconds(exc))
    if isinstance(status, int) and 400 <= status < 500:
        # a refusal of this request that no other error class names (413, 418, 422 ...): asking again
        # would be refused the same way
        return ModelCallError(f"request refused with status {status} ({msg})", "request")
    if isinstance(exc, e.APIError):
        return ModelCallError(f"API error ({msg})", "retryable")
    if isinstance(exc, ConnectionError | TimeoutError | OSError):
        return ModelCallError(f"connection failure ({msg})", "retryable")
    return ModelCallError(f"unexpected error ({msg})", "request")


async def acall(
    model: str,
    messages: list[dict[str, str]],
    *,
    params: dict[str, Any],
    api_base: str | None = None,
    api_key: str | None = None,
    timeout: float = 120.0,
    deadline: float | None = None,
) -> ModelReply:
    """One completion; raises ModelCallError (classified) on failure. No retries here.

    ``timeout`` is litellm's per-read limit; ``deadline`` (seconds, wall clock) bounds the whole call, the
    reply's body included: a call still waiting for (or receiving) its reply then is a retryable "timed out".
    A reply that has arrived whole is read even when reading it ends past the deadline: it was paid for, and
    what remains is this process's own work (a busy machine must not discard answers). For ``openai/`` models the raw reply is kept while litellm reads it: a chat completion
    that litellm cannot read (see :mod:`judgelab.backends.transport`) is returned as an unreadable
    :class:`ModelReply` holding the body, and a 2xx reply that is no completion at all (an HTML page, an
    error object, an empty body) is a retryable server failure.
    """
    ensure_provider(model)
    kwargs: dict[str, Any] = dict(params)
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    elif api_base and not _provider_key_in_env(model):
        kwargs["api_key"] = _KEYLESS_PLACEHOLDER
    if not model.startswith("local/"):  # the in-process provider has no client-side retries to switch off
        # max_retries=0: judgelab counts and schedules every retry itself
        kwargs.update(max_retries=0, num_retries=0)
    client = _recording_client(model, api_base, kwargs)
    if client is not None:
        kwargs["client"] = client
    start = time.perf_counter()
    with recording() as raw:
        try:
            response = await _within(litellm.acompletion(model=model, messages=messages, timeout=timeout,
                                                         drop_params=True, **kwargs),
                                     deadline, raw if client is not None else None)
        except ModelCallError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below, nothing swallowed
            secrets = (api_key or "", *secrets_in(api_base), *secrets_in(params))
            if client is not None and raw.ok:
                return _raw_reply(model, raw, time.perf_counter() - start, exc, secrets)
            error = classify(exc, secrets=secrets)
            if raw.status is not None:  # a status line came back: the server is there, whatever broke after it
                error.unreachable = False
            raise error from None
    latency = time.perf_counter() - start
    if client is not None and raw.body is not None:
        data = decode_body(raw.body)[0]
        if isinstance(data, dict):  # the token counts as the server sent them, not as litellm filled them in
            return reply_from_response(response, latency, usage=data.get("usage"))
    return reply_from_response(response, latency)


def timed_out(limit: float) -> ModelCallError:
    """The error of a call that passed its wall-clock limit (retried like any timeout)."""
    return ModelCallError(f"timed out (no complete answer within the {limit:g} s limit per call)", "retryable")


async def _within(call: Coroutine[Any, Any, Any], deadline: float | None, raw: RawReply | None) -> Any:
    """``call`` within ``deadline`` seconds of wall clock; with the raw reply in view (``raw``), a reply that has
    arrived whole by then is read to the end instead of thrown away."""
    if deadline is None:
        return await call
    if raw is None:
        try:
            async with asyncio.timeout(deadline):
                return await call
        except TimeoutError:
            raise timed_out(deadline) from None
    task = asyncio.ensure_future(call)
    try:
        done, _ = await asyncio.wait({task}, timeout=deadline)
        if not done and raw.body is None:
            task.cancel()
            await asyncio.wait({task})  # let it unwind (close its connection) before the retry starts
            raise timed_out(deadline)
        return await task
    finally:
        if not task.done():
            task.cancel()


# 4xx statuses that say "not now" rather than "not this request"
_RETRYABLE_4XX = frozenset({408, 409, 425, 429})
_CLIENT_OPTIONS = frozenset({"api_base", "base_url", "client", "organization", "api_version"})


def prepare_calls(model: str, api_base: str | None, api_key: str | None, params: dict[str, Any]) -> None:
    """Do the slow first-use work of a call path once, before any call's deadline starts: the openai SDK
    imports its chat resources on first use, which takes seconds on a busy machine and would otherwise count
    against the first calls' wall-clock limit (and time them all out at once). Needs a running event loop."""
    kwargs = dict(params)
    kwargs["api_key"] = api_key or (_KEYLESS_PLACEHOLDER if api_base and not _provider_key_in_env(model) else None)
    if not kwargs["api_key"]:
        kwargs.pop("api_key")
    client = _recording_client(model, api_base, kwargs)
    if client is not None:
        client.chat.completions  # noqa: B018 - the attribute access is the import


def _recording_client(model: str, api_base: str | None, kwargs: dict[str, Any]) -> Any:
    """The recording OpenAI client for an ``openai/`` call, or None (other providers; options that choose
    their own client; no key, where litellm's own missing-credentials error is the clearer answer)."""
    if not model.startswith("openai/") or _CLIENT_OPTIONS & (set(kwargs) - {"api_base"}):
        return None
    key = kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
    if not isinstance(key, str) or not key:
        return None
    try:
        return openai_client(api_base or None, key)
    except Exception:  # noqa: BLE001 - an api base the openai client refuses: litellm's own path says why
        return None


def _raw_reply(model: str, raw: RawReply, latency_s: float, exc: BaseException,
               secrets: tuple[str, ...]) -> ModelReply:
    """What a 2xx reply litellm could not read gives: the paid answer kept whole (read by judgelab), or a
    retryable ModelCallError when the body is no chat completion."""
    assert raw.body is not None
    data, text, _ = decode_body(raw.body)
    usage = data.get("usage") if isinstance(data, dict) else None
    cost = cost_from_tokens(model, usage)
    reply = reply_from_body(raw.body, latency_s, cost_usd=cost)
    if reply is not None:
        reply.notes.append(f"litellm could not read this reply ({_short(exc, secrets)[:200]}); judgelab read it")
        return reply
    what = raw.content_type.split(";")[0].strip() or "no content type"
    snippet = redact(" ".join(text[:160].split()), secrets)
    raise ModelCallError(f"server or connection failure (HTTP {raw.status} without a chat completion: {what}, "
                         f"{len(raw.body)} bytes: {snippet!r})", "retryable")


def _provider_key_in_env(model: str) -> bool:
    """True unless ``model`` is served by an OpenAI-compatible server whose key variable is unset."""
    env = next((v for prefix, v in _PROVIDER_KEY_ENV.items() if model.startswith(prefix)), None)
    return env is None or bool(os.environ.get(env))
