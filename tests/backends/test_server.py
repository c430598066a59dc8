"""The llama.cpp HTTP server launcher: loopback-only policy, startup failure reporting, and one real round trip."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from importlib import util
from pathlib import Path

import litellm
import pytest

from judgelab.backends import local, server

needs_server = pytest.mark.skipif(
    not local.is_available() or util.find_spec("llama_cpp.server") is None,
    reason="embedded judge / llama-cpp server extra not installed",
)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.org", "::"])
def test_non_loopback_hosts_are_refused_without_allow_remote(host: str) -> None:
    with pytest.raises(ValueError, match="allow_remote=True"):
        server.start_server(host=host)


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                                ("127.0.0.2", True), ("0.0.0.0", False), ("10.0.0.1", False)])
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert server._is_loopback(host) is loopback


def test_handle_names_what_litellm_needs() -> None:
    handle = server.ServerHandle(process=None, host="127.0.0.1", port=8123, alias="judge")  # type: ignore[arg-type]
    assert handle.base_url == "http://127.0.0.1:8123/v1"
    assert handle.model_name == "openai/judge"
    assert server.ServerHandle(process=None, host="::1", port=9, alias="a").base_url == "http://[::1]:9/v1"  # type: ignore[arg-type]


@needs_server
def test_a_server_that_dies_at_startup_reports_its_output() -> None:
    with pytest.raises(server.ServerStartError, match="no_such_option") as info:
        server.start_server(extra_args=["--no_such_option", "1"], startup_timeout=60)
    assert "exited with code" in str(info.value)


@needs_server
@pytest.mark.local_model
def test_http_round_trip_through_litellm_then_the_server_is_gone() -> None:
    with server.start_server(startup_timeout=90) as handle:
        assert handle.base_url.startswith("http://127.0.0.1:") and handle.model_name == "openai/smollm2"
        response = litellm.completion(
            model=handle.model_name, api_base=handle.base_url, api_key="unused-key",
            messages=[{"role": "user", "content": "Say hello."}], temperature=0, max_tokens=8, timeout=60,
        )
        assert response.choices[0].message.content.strip()
        assert 1 <= response.usage.completion_tokens <= 8
        assert litellm.completion_cost(completion_response=response) == 0.0
        # OpenAI's json_schema response format (what rubrics send) is served, not answered 500: judgelab serve
        # translates it to llama-cpp's json_object + schema, whose grammar makes the reply match the schema
        schema = {"type": "object", "properties": {"score": {"type": "integer", "enum": [1, 2, 3, 4, 5]}},
                  "required": ["score"], "additionalProperties": False}
        structured = litellm.completion(
            model=handle.model_name, api_base=handle.base_url, api_key="unused-key", num_retries=0,
            messages=[{"role": "user", "content": "Rate this greeting from 1 to 5: 'Hello!'"}], temperature=0,
            max_tokens=16, timeout=60,
            response_format={"type": "json_schema", "json_schema": {"name": "rating", "schema": schema}},
        )
        assert json.loads(structured.choices[0].message.content)["score"] in {1, 2, 3, 4, 5}
    assert handle.process.poll() is not None  # the child process has exited
    with socket.socket() as probe:  # and nothing listens on its port any more
        assert probe.connect_ex(("127.0.0.1", handle.port)) != 0


@needs_server
@pytest.mark.local_model
def test_serve_forever_announces_itself_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    """What `judgelab serve` runs: foreground server, Ctrl-C (SIGINT to the process group) ends it and its child."""
    port = server._free_port("127.0.0.1")
    log = tmp_path / "serve.log"
    code = f"from judgelab.backends.server import serve_forever; serve_forever(port={port})"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with log.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-c", code], stderr=sink, stdout=sink, env=env,
                                start_new_session=True)  # its own group, as a terminal would give it
    try:
        deadline = time.monotonic() + 120
        while b"Ctrl-C stops it" not in log.read_bytes():
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "serve_forever did not announce itself in 120 s"
            time.sleep(0.25)
        assert server._answers(f"http://127.0.0.1:{port}/v1/models")
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    announcement = log.read_text()
    assert f"http://127.0.0.1:{port}/v1" in announcement and "--model openai/smollm2" in announcement
    assert "not meaningful" in announcement
    assert not server._answers(f"http://127.0.0.1:{port}/v1/models")


@needs_server
@pytest.mark.local_model
def test_a_server_without_logprobs_answers_and_refuses_logprob_requests() -> None:
    """start_server(logprobs=False) runs llama-cpp with logits_all=False: plain completions work, logprobs do not."""
    with server.start_server(startup_timeout=90, logprobs=False) as handle:
        messages = [{"role": "user", "content": "Say hello."}]
        response = litellm.completion(model=handle.model_name, api_base=handle.base_url, api_key="unused-key",
                                      messages=messages, temperature=0, max_tokens=4, timeout=60)
        assert 1 <= response.usage.completion_tokens <= 4
        with pytest.raises(Exception, match="logits_all"):
            litellm.completion(model=handle.model_name, api_base=handle.base_url, api_key="unused-key",
                               messages=messages, temperature=0, max_tokens=4, timeout=60, logprobs=True,
                               top_logprobs=2, num_retries=0, max_retries=0)
