"""The raw HTTP reply of a call, kept so that a paid answer litellm cannot read is still stored.

litellm reads an OpenAI-compatible server's reply into its own objects and raises when the reply does
not fit them (content that is a number or a list of parts, a non-finite token count, bytes that are not
UTF-8, JSON nested past its parser's depth). The answer was billed all the same. For ``openai/`` models
judgelab therefore hands litellm an OpenAI client whose HTTP client keeps the body of every reply it
receives during a call (:func:`recording`), and reads that body itself when litellm fails
(:func:`judgelab.backends.reply.reply_from_body`). Other providers go through litellm's own clients and
keep what litellm gives.

The HTTP client is litellm's own (its transport, TLS, proxy and HTTP/2 settings), with one response
hook added; one OpenAI client per event loop, api base and key is reused across calls, as litellm
reuses its own.
"""

from __future__ import annotations

import asyncio
import contextvars
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["RawReply", "openai_client", "recording"]


@dataclass
class RawReply:
    """The last HTTP reply received during one call: status, content type and the whole body (None until the
    body has arrived whole)."""

    status: int | None = None
    content_type: str = ""
    body: bytes | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and self.body is not None


_CURRENT: contextvars.ContextVar[RawReply | None] = contextvars.ContextVar("judgelab_raw_reply", default=None)


@contextmanager
def recording() -> Iterator[RawReply]:
    """Keep the raw reply of the HTTP requests made inside the block (this task and the tasks it starts)."""
    raw = RawReply()
    token = _CURRENT.set(raw)
    try:
        yield raw
    finally:
        _CURRENT.reset(token)


async def _new_request(request: Any) -> None:
    raw = _CURRENT.get()
    if raw is not None:  # a redirect's second request: the first reply's body is not this call's answer
        raw.status, raw.body = None, None


async def _keep_body(response: Any) -> None:
    raw = _CURRENT.get()
    if raw is None:
        return
    raw.status, raw.body = response.status_code, None
    raw.content_type = response.headers.get("content-type", "")
    # read inside the client's send, so the body counts in the call's deadline; the SDK reads it from memory
    raw.body = await response.aread()


# event loop -> {(api base, key): AsyncOpenAI}; an httpx client belongs to the loop it was first used on
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str | None, str], Any]] = (
    weakref.WeakKeyDictionary())


def _http_client() -> Any:
    import httpx

    try:
        from litellm.llms.openai.openai import OpenAIChatCompletion

        client = OpenAIChatCompletion.get_async_http_client()
    except Exception:  # noqa: BLE001 - an older or newer litellm without this factory: a plain httpx client
        client = None
    if not isinstance(client, httpx.AsyncClient):
        client = httpx.AsyncClient(follow_redirects=True)
    hooks = client.event_hooks
    client.event_hooks = {**hooks, "request": [*hooks.get("request", []), _new_request],
                          "response": [*hooks.get("response", []), _keep_body]}
    return client


def openai_client(api_base: str | None, api_key: str) -> Any:
    """The recording OpenAI client for ``api_base`` and ``api_key`` on the running event loop, or None when
    the user gave litellm a shared HTTP session of their own (judgelab then leaves litellm's clients alone)."""
    import litellm

    if getattr(litellm, "aclient_session", None) is not None:
        return None
    loop = asyncio.get_running_loop()
    clients = _CLIENTS.setdefault(loop, {})
    key = (api_base, api_key)
    client = clients.get(key)
    if client is None:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(api_key=api_key, base_url=api_base, http_client=_http_client(), max_retries=0)
        clients[key] = client
    return client
