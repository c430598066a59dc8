"""The process ``judgelab serve`` runs: llama-cpp-python's OpenAI-compatible server, taking OpenAI's
``json_schema`` response format.

llama-cpp-python 0.3.36's ``/v1/chat/completions`` accepts ``response_format`` of type ``text`` or
``json_object`` only and answers a ``json_schema`` request (what judgelab's rubrics send for structured
output) with HTTP 500. It does take a schema as ``{"type": "json_object", "schema": ...}`` and builds
the same grammar from it that the in-process provider builds from ``json_schema``. :class:`JsonSchemaAdapter`
rewrites the one into the other before the request reaches llama-cpp's app; nothing else changes.

Run as ``python -m judgelab.backends.llama_server`` with llama_cpp.server's own command-line options.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from judgelab.backends.schema_budget import fit_schema

__all__ = ["JsonSchemaAdapter", "main", "translate_response_format"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def translate_response_format(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with a ``json_schema`` response format written as llama-cpp's ``json_object`` + ``schema``.

    With ``max_tokens`` in the body, the schema's free-text fields are bounded to fit it, as the in-process
    provider does (:func:`judgelab.backends.schema_budget.fit_schema`): a constrained answer ends in budget."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        budget = body.get("max_tokens") or body.get("max_completion_tokens")
        if isinstance(schema, dict) and isinstance(budget, int) and budget > 0:
            schema = fit_schema(schema, budget)
        body = {**body, "response_format": {"type": "json_object", **({"schema": schema} if schema else {})}}
    return body


class JsonSchemaAdapter:
    """ASGI middleware: chat-completion request bodies pass through :func:`translate_response_format`."""

    def __init__(self, app: Callable[[Message, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" \
                or not str(scope.get("path", "")).endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message.get("type") != "http.request":  # the client went away: let the app see it
                await self.app(scope, _replay([message], receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        try:
            body = json.loads(raw)
        except ValueError:  # not JSON: llama-cpp's app answers it as it would
            body = None
        if isinstance(body, dict):
            raw = json.dumps(translate_response_format(body)).encode()
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(raw)).encode())]}
        await self.app(scope, _replay([{"type": "http.request", "body": raw, "more_body": False}], receive), send)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive callable that returns ``messages`` first, then whatever ``receive`` returns."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


def main(argv: Sequence[str] | None = None) -> None:
    """llama_cpp.server's command line, serving its app behind :class:`JsonSchemaAdapter`."""
    import argparse

    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.cli import add_args_from_model, parse_model_from_args
    from llama_cpp.server.settings import ModelSettings, ServerSettings, Settings

    parser = argparse.ArgumentParser(description="llama.cpp's OpenAI-compatible server, for judgelab serve")
    add_args_from_model(parser, Settings)
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    server_settings = parse_model_from_args(ServerSettings, args)
    app = create_app(server_settings=server_settings, model_settings=[parse_model_from_args(ModelSettings, args)])
    uvicorn.run(JsonSchemaAdapter(app), host=os.getenv("HOST", server_settings.host),
                port=int(os.getenv("PORT", server_settings.port)))


if __name__ == "__main__":
    main()
