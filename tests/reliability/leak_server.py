"""A careless OpenAI-compatible server on 127.0.0.1 that quotes back every credential it receives.

No provider is reachable here, so this stands in for one; the path through litellm, the openai client
and HTTP is the real one. Each POST is recorded (path with its query, every header). The reply is
chosen by the item tag in the prompt (``[item:q1]``, see tests/reliability/helpers.direct_items) or by
``plan``: "ok" (a valid answer from ``answer``), "bad_request" (400, not retried), "server_error" (500,
retried), "unauthorized" (401, stops the run). Every error message quotes the request path, all
headers, and each credential bare (the bearer token, the api-key header, the user-info password, the
query's api-key), as careless providers and gateways do. Other POSTs (a batch upload) get a 404 that
quotes the same. Bounded: loopback only, daemon threads that end with the test.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.support.loopback import LoopbackServer
from tests.support.openai_stub import completion_body

__all__ = ["LeakServer", "credentials"]

_TAG = re.compile(r"\[item:([^\]]+)\]")


def credentials(path: str, headers: Mapping[str, str]) -> list[str]:
    """Every credential a request carried, bare: bearer token, api-key / x-api-key headers, the Basic
    user-info password, and secret query parameters (which the openai client keeps inside the path)."""
    found = []
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        found.append(auth[7:])
    elif auth.lower().startswith("basic "):
        found.append(base64.b64decode(auth[6:]).decode(errors="replace").partition(":")[2])
    found += [headers[h] for h in ("api-key", "x-api-key") if h in headers]
    query = urlsplit(path).query
    found += [v.split("/")[0] for k, v in parse_qsl(query) if k.lower() in ("api-key", "key", "token")]
    return found


class LeakServer(LoopbackServer):
    def __init__(self, answer: Callable[[dict[str, Any]], str], plan: Mapping[str, str] | None = None) -> None:
        self.answer, self.plan = answer, dict(plan or {})
        self.requests: list[tuple[str, dict[str, str]]] = []  # (path, lower-cased headers)
        self._lock = threading.Lock()
        self._errors_sent: dict[str, int] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send(404, {"error": {"message": server.echo(self.path, self._headers()), "type": "not_found"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = self._headers()
                with server._lock:
                    server.requests.append((self.path, headers))
                if "chat/completions" not in self.path:  # a batch upload or anything else: refused, quoted
                    self._send(404, {"error": {"message": server.echo(self.path, headers), "type": "not_found"}})
                    return
                body = json.loads(raw or b"{}")
                status, payload = server.reply(body, self.path, headers)
                self._send(status, payload)

            def _headers(self) -> dict[str, str]:
                return {k.lower(): v for k, v in self.headers.items()}

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._serve(Handler, "leak-server")

    def echo(self, path: str, headers: Mapping[str, str]) -> str:
        bare = ", ".join(credentials(path, headers))
        # the bare credentials first, so they survive when a client cuts a long message
        return f"the credentials {bare} are not valid here; request to {path} with headers {dict(headers)} refused"

    def reply(self, body: dict[str, Any], path: str, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        tag = _TAG.search(prompt)
        kind = self.plan.get(tag.group(1) if tag else "", "ok")
        if kind == "server_error":  # once, then ok: a retried request
            with self._lock:
                seen = self._errors_sent.get(tag.group(1) if tag else "", 0)
                self._errors_sent[tag.group(1) if tag else ""] = seen + 1
            kind = "ok" if seen else kind
        message = self.echo(path, headers)
        if kind == "bad_request":
            return 400, {"error": {"message": message, "type": "invalid_request_error",
                                   "code": "context_length_exceeded"}}
        if kind == "server_error":
            return 500, {"error": {"message": message, "type": "server_error"}}
        if kind == "unauthorized":  # worded like OpenAI's, which is how litellm recognises a bad key
            return 401, {"error": {"message": f"Incorrect API key provided: {message}", "type": "invalid_request_error",
                                   "code": "invalid_api_key"}}
        return 200, completion_body(self.answer(body), str(body.get("model", "leak-stub")))

    def received(self) -> set[str]:
        """Every credential that reached the server."""
        with self._lock:
            return {c for path, headers in self.requests for c in credentials(path, headers)}
