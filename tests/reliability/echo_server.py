"""An OpenAI-compatible server on 127.0.0.1 that echoes every request header back into its answers.

No provider is reachable here, so this stands in for a careless (or hostile) one; the path through litellm,
the openai client and HTTP is the real one. Each POST is recorded (path and headers). The reply is chosen by
the item tag in the prompt (``[item:q1]``, tests/reliability/helpers.direct_items) through ``plan``:

* "ok" (default): a valid direct_score answer (from ``answer``) whose JSON gains an ``echo`` field, with the
  reasoning (``reasoning_content``), the ``system_fingerprint`` and the response ``id`` all quoting every
  header it received ("x-auth-token: KEY; authorization: Bearer KEY ...") and the path (query included);
* "bad_request" (400) and "server_error" (500, once, then ok) whose error message quotes the same.

Bounded: loopback only, daemon threads that end with the test.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.loopback import LoopbackServer
from tests.support.openai_stub import completion_body

__all__ = ["EchoServer"]

_TAG = re.compile(r"\[item:([^\]]+)\]")


class EchoServer(LoopbackServer):
    def __init__(self, answer: Callable[[dict[str, Any]], str], plan: Mapping[str, str] | None = None) -> None:
        self.answer, self.plan = answer, dict(plan or {})
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._lock = threading.Lock()
        self._errors_sent: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append((self.path, headers))
                status, payload = server.reply(json.loads(raw or b"{}"), self.path, headers)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._serve(Handler, "echo-server")

    @staticmethod
    def echo(path: str, headers: Mapping[str, str]) -> str:
        quoted = "; ".join(f"{k}: {v}" for k, v in headers.items())
        return f"you sent {path} with {quoted} (authorization was {headers.get('authorization', '')})"

    def reply(self, body: dict[str, Any], path: str, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        tag = _TAG.search(prompt)
        key = tag.group(1) if tag else ""
        kind = self.plan.get(key, "ok")
        if kind == "server_error":  # once, then ok: a retried request
            with self._lock:
                seen = self._errors_sent.get(key, 0)
                self._errors_sent[key] = seen + 1
            kind = "ok" if seen else kind
        echo = self.echo(path, headers)
        if kind == "bad_request":
            return 400, {"error": {"message": echo, "type": "invalid_request_error"}}
        if kind == "server_error":
            return 500, {"error": {"message": echo, "type": "server_error"}}
        answer = json.loads(self.answer(body))
        answer["echo"] = echo
        payload = completion_body(json.dumps(answer), str(body.get("model", "echo")))
        payload["choices"][0]["message"]["reasoning_content"] = "thinking about " + echo
        payload["system_fingerprint"] = echo[:400]
        payload["id"] = "chatcmpl-" + echo[:200]
        return 200, payload

    def headers_received(self) -> list[dict[str, str]]:
        with self._lock:
            return [dict(h) for _, h in self.requests]

    def received(self) -> set[str]:
        """Every header value that reached the server (and its token without a "Bearer " scheme), and the values of
        the query parameters of every path (the openai client keeps an api base's query inside the path)."""
        found: set[str] = set()
        with self._lock:
            for path, headers in self.requests:
                for value in headers.values():
                    found.add(value)
                    if value.lower().startswith("bearer "):
                        found.add(value[7:])
                found.update(v.split("/")[0] for _, v in parse_qsl(urlsplit(path).query))
        return found
