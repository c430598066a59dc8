"""A LOCAL STAND-IN for the OpenAI Files + Batch endpoints on 127.0.0.1 (no provider is reachable here).

POST /v1/files (multipart upload), POST /v1/batches, GET /v1/batches/{id}, GET /v1/files/{id}/content.
A batch reports "in_progress" for ``polls_until_done`` retrievals, then runs every request of its
input file through ``reply(body) -> str`` and reports "completed" with an output file (and an error
file for requests whose reply is ``None``). Counts uploads and batch creations so tests can check
that a resumed run did not submit again. Bounded: one thread, served until the test stops it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer
from tests.support.openai_stub import completion_body


class BatchStandIn(LoopbackServer):
    def __init__(self, reply: Callable[[dict[str, Any]], str | None], polls_until_done: int = 1,
                 decorate: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.reply, self.polls_until_done = reply, polls_until_done
        self.decorate = decorate  # may change each completion body in place (e.g. add reasoning fields)
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, int] = {}
        self.uploads = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/octet-stream" if raw is not None else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                with outer.lock:
                    if self.path.endswith("/files"):
                        self._send(200, outer._upload(body, self.headers.get("content-type", "")))
                    elif self.path.endswith("/batches"):
                        self._send(200, outer._create(json.loads(body)))
                    else:
                        self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_GET(self) -> None:
                with outer.lock:
                    m = re.search(r"/batches/([^/]+)$", self.path)
                    if m and m.group(1) in outer.batches:
                        self._send(200, outer._retrieve(m.group(1)))
                        return
                    m = re.search(r"/files/([^/]+)/content$", self.path)
                    if m and m.group(1) in outer.files:
                        self._send(200, None, raw=outer.files[m.group(1)])
                        return
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        self._serve(Handler, "batch-stand-in")

    def _upload(self, body: bytes, content_type: str) -> dict[str, Any]:
        boundary = content_type.split("boundary=")[-1].encode()
        content = b""
        for part in body.split(b"--" + boundary):
            if b'name="file"' in part:
                content = part.split(b"\r\n\r\n", 1)[1].rsplit(b"\r\n", 1)[0]
        self.uploads += 1
        file_id = f"file-{len(self.files)}"
        self.files[file_id] = content
        return {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                "filename": "input.jsonl", "purpose": "batch", "status": "processed"}

    def _batch(self, batch_id: str, **extra: Any) -> dict[str, Any]:
        b = self.batches[batch_id]
        return {"id": batch_id, "object": "batch", "endpoint": b["endpoint"], "input_file_id": b["input_file_id"],
                "completion_window": "24h", "created_at": b["created_at"], "errors": None, **b["state"], **extra}

    def _create(self, req: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"batch-{len(self.batches)}"
        self.batches[batch_id] = {"endpoint": req["endpoint"], "input_file_id": req["input_file_id"],
                                  "created_at": int(time.time()), "state": {"status": "validating"}}
        self.polls[batch_id] = 0
        return self._batch(batch_id)

    def _retrieve(self, batch_id: str) -> dict[str, Any]:
        self.polls[batch_id] += 1
        b = self.batches[batch_id]
        if b["state"]["status"] != "completed":
            if self.polls[batch_id] < self.polls_until_done:
                b["state"] = {"status": "in_progress"}
            else:
                b["state"] = self._complete(batch_id)
        return self._batch(batch_id)

    def _complete(self, batch_id: str) -> dict[str, Any]:
        lines = self.files[self.batches[batch_id]["input_file_id"]].decode().splitlines()
        out, err = [], []
        for n, line in enumerate(lines):
            req = json.loads(line)
            text = self.reply(req["body"])
            if text is None:
                err.append({"id": f"req-{n}", "custom_id": req["custom_id"], "response": None,
                            "error": {"code": "server_error", "message": "stand-in refused this request"}})
            else:
                body = completion_body(text, req["body"]["model"])
                if self.decorate is not None:
                    self.decorate(body)
                out.append({"id": f"req-{n}", "custom_id": req["custom_id"], "error": None,
                            "response": {"status_code": 200, "request_id": f"r{n}", "body": body}})
        state: dict[str, Any] = {"status": "completed", "request_counts": {"total": len(lines), "completed": len(out),
                                                                           "failed": len(err)}}
        for kind, records in (("output_file_id", out), ("error_file_id", err)):
            if records:
                file_id = f"file-{len(self.files)}"
                self.files[file_id] = ("\n".join(json.dumps(r) for r in records) + "\n").encode()
                state[kind] = file_id
        return state
