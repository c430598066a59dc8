"""The lifecycle every test server shares: a threaded HTTP server on 127.0.0.1 (a free port), started and
stopped as a context manager. Subclasses build their request handler and call ``_serve(handler)``."""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackHTTPServer", "LoopbackServer"]


class LoopbackHTTPServer(ThreadingHTTPServer):
    """Daemon handler threads, a listen backlog for bursts, and handler errors collected instead of printed."""

    daemon_threads = True
    # socketserver's default listen backlog (5) refuses part of a burst of concurrent connections: that
    # would be a fault nobody injected
    request_queue_size = 512

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[BaseException] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        # abandoned requests (a client that timed out and left) raise socket errors: keep them off the output
        self.errors.append(sys.exc_info()[1] or RuntimeError("unknown handler error"))


class LoopbackServer:
    """Base of the test servers: ``base_url`` ends in /v1 like an OpenAI-compatible API."""

    httpd: LoopbackHTTPServer
    port: int
    base_url: str

    def _serve(self, handler: type[BaseHTTPRequestHandler], name: str = "test-server") -> None:
        self.httpd = LoopbackHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name=name, daemon=True)

    def __enter__(self) -> Any:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
