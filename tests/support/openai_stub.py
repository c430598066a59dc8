"""A minimal OpenAI-compatible chat-completions server on 127.0.0.1 for tests and benchmarks.

It answers POST /v1/chat/completions with whatever ``reply(body) -> str | StubResponse`` returns,
after ``delay_s``; it counts requests. Threaded, so concurrent requests overlap their delays.
Used instead of a real provider because no provider is reachable here; the HTTP path through
litellm and the openai client is real.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer


@dataclass
class StubResponse:
    status: int = 200
    content: str | None = None  # assistant text for 200 answers
    body: dict[str, Any] | None = None  # raw JSON body for errors
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    drop_connection: bool = False
    delay_s: float = 0.0


def completion_body(content: str, model: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_stub",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


class StubServer(LoopbackServer):
    def __init__(self, reply: Callable[[dict[str, Any]], str | StubResponse], delay_s: float = 0.0) -> None:
        self.reply, self.delay_s = reply, delay_s
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # /v1/models, used as a readiness probe
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]}, {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.auth_headers.append(self.headers.get("authorization") or "")
                out = server.reply(body)
                if isinstance(out, str):
                    out = StubResponse(content=out)
                time.sleep(server.delay_s + out.delay_s)
                if out.drop_connection:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if out.status == 200:
                    payload = out.body or completion_body(out.content or "", body.get("model", "stub"), out.finish_reason)
                else:
                    payload = out.body or {"error": {"message": f"stub error {out.status}", "type": "server_error"}}
                self._send(out.status, payload, out.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._serve(Handler, "openai-stub")

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)


def main() -> None:
    """Serve a fixed answer from a separate process: `python -m tests.support.openai_stub --delay 0.1 --reply TEXT`.

    Prints the base URL on stdout, then serves until killed. Benchmarks use it so that the server's
    CPU and GIL are not counted as the client's.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--reply", default='{"score": 3}')
    args = parser.parse_args()
    server = StubServer(lambda body: args.reply, delay_s=args.delay)
    print(server.base_url, flush=True)
    sys.stdout.close()
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()
