"""A real JupyterLab for the browser tests: a notebook written into a folder, the server on 127.0.0.1 serving it
(its settings, runtime and IPython folders inside that folder, so nothing of the user's is read or written), and
the server stopped afterwards, whatever the test did."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import nbformat

__all__ = ["free_port", "jupyterlab", "wait_for_port"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"jupyter lab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"jupyter lab did not listen on 127.0.0.1:{port} in {timeout_s:.0f} s:\n"
                         f"{log.read_text()[-3000:]}")


@contextmanager
def jupyterlab(root: Path, notebook: str, cells: Sequence[str], *, env: Mapping[str, str] | None = None,
               unset: Sequence[str] = ()) -> Iterator[int]:
    """Write ``root/notebook`` holding ``cells``, start JupyterLab on 127.0.0.1 serving ``root`` with ``env`` added
    to the environment (and ``unset`` removed from it), and yield its port; the server is stopped on exit."""
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(book, root / notebook)
    port, log = free_port(), root / "lab.log"
    home = {name: str(root / name.lower()) for name in ("JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR",
                                                         "JUPYTERLAB_WORKSPACES_DIR", "IPYTHONDIR")}
    full_env = {**os.environ, **home, **(env or {})}
    for name in unset:
        full_env.pop(name, None)
    # every cell stays in the page (JupyterLab 4 otherwise leaves cells scrolled far away out of the DOM)
    tracker = Path(home["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--allow-root",
         "--IdentityProvider.token=", "--ServerApp.password=", "--expose-app-in-browser", "--LabApp.news_url=None",
         f"--ServerApp.root_dir={root}"],
        env=full_env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, lab, log)
        yield port
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            lab.kill()
