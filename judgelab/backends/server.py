"""Launch llama.cpp's OpenAI-compatible HTTP server on the embedded SmolLM2 judge (the HTTP path).

``start_server()`` runs llama-cpp-python's server (through :mod:`judgelab.backends.llama_server`, which lets
it take OpenAI's ``json_schema`` response format) as a child process on a loopback port, waits until
``GET /v1/models`` answers, and returns a handle whose ``model_name``/``base_url`` go straight into litellm:

    with start_server() as server:
        litellm.completion(model=server.model_name, api_base=server.base_url, api_key="none", messages=...)

Like the in-process ``local/smollm2``, this serves a plumbing/demo judge: its scores are NOT meaningful.
By default the server keeps llama-cpp's ``logits_all=True``, so it can return logprobs over HTTP, at the cost of
~0.2 MB of logits per prompt token (see judgelab.backends.local for the in-process alternative);
``start_server(logprobs=False)`` / ``judgelab serve --no-logprobs`` turns that off. It answers one request at a
time (see ``start_server``).
"""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from judgelab.backends.local import (
    INSTALL_HINT,
    OMP_WAIT_POLICY,
    LocalModelUnavailable,
    _llama_cpp,
    gguf_path,
)
from judgelab.backends.pricing import register_free_models
from judgelab.errors import JudgelabError

__all__ = [
    "DEFAULT_ALIAS", "DEFAULT_N_CTX", "DEFAULT_PORT", "STARTUP_TIMEOUT_S", "serve_forever", "ServerHandle",
    "ServerStartError", "start_server",
]

DEFAULT_ALIAS = "smollm2"
DEFAULT_N_CTX = 4096
DEFAULT_PORT = 8080
STARTUP_TIMEOUT_S = 90.0
_POLL_INTERVAL_S = 0.25
_STDERR_TAIL_CHARS = 2000


class ServerStartError(JudgelabError, RuntimeError):
    """The llama.cpp server did not come up; the message carries the tail of its stderr."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@dataclass
class ServerHandle:
    """A running llama.cpp server child process; stop it with ``.stop()`` or use it as a context manager."""

    process: subprocess.Popen[bytes]
    host: str
    port: int
    alias: str = DEFAULT_ALIAS
    log_path: Path | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root, e.g. http://127.0.0.1:PORT/v1 (litellm's api_base)."""
        return f"http://{_url_host(self.host)}:{self.port}/v1"

    @property
    def model_name(self) -> str:
        """The litellm model name for this server; pass it with ``api_base=self.base_url``."""
        return f"openai/{self.alias}"

    def is_running(self) -> bool:
        return self.process.poll() is None

    def stderr_tail(self) -> str:
        """The last lines the server wrote (its log), for error messages."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-_STDERR_TAIL_CHARS:]

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after ``timeout`` s) and remove its log file."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        if self.log_path is not None:
            self.log_path.unlink(missing_ok=True)
            self.log_path = None

    def __enter__(self) -> ServerHandle:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _register_zero_price(model_name: str) -> None:
    """Price this server's model at 0 in litellm, so cost functions report 0.0 rather than an unknown price."""
    register_free_models([model_name], "openai")


def start_server(port: int | None = None, host: str = "127.0.0.1", n_ctx: int = DEFAULT_N_CTX,
                 extra_args: Sequence[str] = (), *, alias: str = DEFAULT_ALIAS, n_threads: int = 2,
                 startup_timeout: float = STARTUP_TIMEOUT_S, allow_remote: bool = False,
                 logprobs: bool = True) -> ServerHandle:
    """Start llama.cpp's OpenAI-compatible server on the SmolLM2 GGUF and wait until it answers.

    ``port=None`` picks a free port. Only loopback hosts are accepted unless ``allow_remote=True``
    (the server has no authentication). Raises ServerStartError with the server's stderr tail when it
    exits early or does not answer within ``startup_timeout`` seconds.

    ``logprobs=False`` starts llama-cpp with ``logits_all=False``: the server then keeps only the last
    token's logits (no n_ctx x 49,152 float32 score buffer, no per-prompt-token logits copy) and
    refuses requests that ask for logprobs.

    The server answers ONE request at a time, whatever the client's concurrency: llama-cpp-python
    0.3.36 has no parallel-slot setting (``llama_cpp/server/settings.py`` has no ``n_parallel``), and
    ``llama_cpp/server/app.py`` (``get_llama_proxy``, lines 73-89) holds ``llama_outer_lock`` /
    ``llama_inner_lock`` around every request; its ``Llama`` decodes one sequence (``n_seq_max`` is
    raised above 1 only for embeddings, ``llama_cpp/llama.py`` line 408).
    """
    if not _is_loopback(host) and not allow_remote:
        raise ValueError(f"refusing to serve on non-loopback host {host!r}: the server has no authentication; "
                         "pass allow_remote=True if you really mean to expose it.")
    model = gguf_path()
    _llama_cpp()  # loads llama.cpp's library under the embedded judge's thread policy, as in-process use does
    try:
        import llama_cpp.server  # noqa: F401  (only checking it is installed; it runs in the child)
    except ImportError as exc:
        raise LocalModelUnavailable(f"llama-cpp-python's server extra is not installed; {INSTALL_HINT}") from exc
    port = _free_port(host) if port is None else port
    command = [sys.executable, "-m", "judgelab.backends.llama_server", "--model", str(model), "--model_alias", alias,
               "--host", host, "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(n_threads),
               "--n_threads_batch", str(n_threads), "--logits_all", str(bool(logprobs)), *extra_args]
    log_fd, log_name = tempfile.mkstemp(prefix="judgelab-llama-server-", suffix=".log")
    # A file, not a pipe: an unread pipe fills up and blocks the server.
    with os.fdopen(log_fd, "wb") as log:
        # The child gets the same OpenMP wait policy as the in-process judge (see judgelab.backends.local).
        env = {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", OMP_WAIT_POLICY)}
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    handle = ServerHandle(process=process, host=host, port=port, alias=alias, log_path=Path(log_name))
    _register_zero_price(handle.model_name)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = handle.stderr_tail()
            handle.stop()
            raise ServerStartError(f"llama.cpp server exited with code {process.returncode} before answering "
                                   f"on {handle.base_url}; its output ended with:\n{tail}")
        if _answers(f"{handle.base_url}/models"):
            return handle
        time.sleep(_POLL_INTERVAL_S)
    tail = handle.stderr_tail()
    handle.stop()
    raise ServerStartError(f"llama.cpp server did not answer on {handle.base_url}/models within "
                           f"{startup_timeout:.0f} s; its output ended with:\n{tail}")


def serve_forever(port: int | None = DEFAULT_PORT, host: str = "127.0.0.1", *, n_ctx: int = DEFAULT_N_CTX,
                  allow_remote: bool = False, logprobs: bool = True) -> None:
    """Run the server in the foreground until Ctrl-C or the server exits (for ``judgelab serve``).

    Prints where it listens and the litellm model name to stderr; ``port=None`` picks a free port.
    ``logprobs`` as in :func:`start_server`.
    """
    handle = start_server(port=port, host=host, n_ctx=n_ctx, allow_remote=allow_remote, logprobs=logprobs)
    print(f"Serving SmolLM2-135M-Instruct (a plumbing/demo judge: its scores are not meaningful) at "
          f"{handle.base_url}\nuse it with: --model {handle.model_name} --api-base {handle.base_url}\n"
          "Ctrl-C stops it.", file=sys.stderr, flush=True)
    interrupted = False
    try:
        handle.process.wait()
    except KeyboardInterrupt:  # Ctrl-C also reaches the child; its exit code then says nothing
        interrupted = True
    finally:
        code = handle.process.poll()
        tail = handle.stderr_tail() if code not in (None, 0) else ""
        handle.stop()
    if tail and not interrupted:
        raise ServerStartError(f"llama.cpp server stopped with code {code}; its output ended with:\n{tail}")
