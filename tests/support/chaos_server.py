"""A chaos server: an OpenAI-compatible endpoint on 127.0.0.1 that answers every request with a reply drawn
from a seeded generator of malformed and abusive replies (tests/support/reply_space.py).

Unlike the fault server (tests/support/fault_server.py: 14 well-formed fault kinds, used for exact oracle
checks), it writes the bytes of each reply itself, so the status line, the headers, the framing and the
timing can all be wrong: a wrong content type or length, a body cut short or reset half-way, trickled byte
by byte past the client's deadline, a gzip header over a plain body, a status line that is not HTTP.

Every request is logged with the reply it got and whether that reply was *delivered*: the server wrote all
of it and the client did not hang up first. A delivered 2xx chat completion is a paid answer: the client
must keep it. Used instead of a real provider because none is reachable here, and because no provider
misbehaves on demand; the path through litellm, the openai client and HTTP is the real one. Bounded: it
binds 127.0.0.1 only and serves daemon threads that end with the test.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fault_server import tag_key
from tests.support.loopback import LoopbackServer
from tests.support.reply_space import ReplySpace, Wire

__all__ = ["ChaosServer", "Served"]


@dataclass
class Served:
    """One request and what the server did with it."""

    index: int
    phase: str  # the label the test gave the server when the request arrived
    key: str  # conversation key (the item tag, seed included)
    reask: bool  # the request carries an earlier assistant turn
    kind: str
    label: str  # reply_space.LABELS
    marker: str | None  # what the client must keep of a paid reply (None: nothing to keep, e.g. empty content)
    scores: dict[str, int] = field(default_factory=dict)  # the scores a scorable reply holds
    arrived: float = 0.0
    finished: float | None = None  # when the last byte was written (None: not delivered)
    connection: int = 0  # which connection it came on (a later request on it proves the client read this reply)

    @property
    def delivered(self) -> bool:
        return self.finished is not None


def _seed_of(base: int, index: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{base}:{index}".encode()).digest()[:8], "big")


class ChaosServer(LoopbackServer):
    """Threaded chaos server; use as a context manager. ``phase`` labels the requests that follow."""

    def __init__(self, space: ReplySpace, *, seed: int = 0,
                 key_fn: Callable[[Mapping[str, Any]], str] = tag_key()) -> None:
        self.space, self.seed, self.key_fn = space, seed, key_fn
        self.phase = ""
        self.log: list[Served] = []
        self._lock = threading.Lock()
        self._connections = itertools.count()
        self._serve(self._handler_class(), "chaos-server")

    def _draw(self, body: Mapping[str, Any], connection: int) -> tuple[Served, Wire]:
        key = self.key_fn(body)
        reask = any(m.get("role") == "assistant" for m in body.get("messages", []) if isinstance(m, Mapping))
        with self._lock:
            index = len(self.log)
            rng = random.Random(_seed_of(self.seed, index))
            wire = self.space.draw(rng, body, key, marker=f"chaos-{self.seed}-{index}")
            served = Served(index, self.phase, key, reask, wire.kind, wire.label, wire.marker, dict(wire.scores),
                            time.monotonic(), connection=connection)
            self.log.append(served)
        return served, wire

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.log)

    def served(self, phase: str | None = None) -> list[Served]:
        with self._lock:
            return [s for s in self.log if phase is None or s.phase == phase]

    def kind_counts(self) -> Counter[str]:
        with self._lock:
            return Counter(s.kind for s in self.log)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def setup(self) -> None:  # one handler per connection: number it
                super().setup()
                self.connection_number = next(server._connections)

            def do_GET(self) -> None:  # a redirected POST arrives as a GET: a 200 that is no completion
                data = json.dumps({"object": "list", "data": [{"id": "chaos", "object": "model"}]}).encode()
                self.wfile.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                                 + str(len(data)).encode() + b"\r\n\r\n" + data)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                # HTTP/1.1: a client sends its next request on a connection only once it has read the last reply
                served, wire = server._draw(body if isinstance(body, dict) else {}, self.connection_number)
                try:
                    self._send(wire)
                except OSError:  # the client hung up (its deadline passed, or it was killed): not delivered
                    self.close_connection = True
                    return
                served.finished = time.monotonic()
                if wire.close:
                    self.close_connection = True

            def _send(self, wire: Wire) -> None:
                if wire.head_delay_s:
                    time.sleep(wire.head_delay_s)
                sock = self.connection
                if wire.reset_at == 0:
                    self._reset()
                    raise ConnectionResetError("reset before the reply, as drawn")
                sock.sendall(wire.head)
                body = wire.body
                stop = len(body) if wire.reset_at is None else min(wire.reset_at, len(body))
                step = wire.chunk or stop or 1
                for start in range(0, stop, step):
                    sock.sendall(body[start:start + step])
                    if wire.pause_s:
                        time.sleep(wire.pause_s)
                if wire.reset_at is not None:
                    self._reset()
                    raise ConnectionResetError("reset half-way, as drawn")
                if wire.close:
                    sock.shutdown(socket.SHUT_WR)

            def _reset(self) -> None:
                # SO_LINGER 0: close sends a TCP RST instead of a clean FIN
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()

        return Handler
