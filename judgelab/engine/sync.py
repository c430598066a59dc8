"""Run a coroutine to completion from synchronous code, also inside Jupyter's running event loop.

Library code never calls asyncio.run inside a running loop (it fails there) and never nests loops:
when a loop is running, the coroutine gets a private loop in a worker thread. Ctrl-C in the caller
(a notebook interrupt) cancels the coroutine in its thread too, so no work (or paid call) goes on
in the background.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(make_coroutine: Callable[[], Coroutine[Any, Any, T]], name: str = "judgelab") -> T:
    """Await ``make_coroutine()`` from sync code; safe with or without a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    box: dict[str, Any] = {}
    started = threading.Event()

    async def main() -> T:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await make_coroutine()

    def target() -> None:
        try:
            box["value"] = asyncio.run(main())
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name=name)
    thread.start()
    try:
        thread.join()
    except BaseException:
        # Ctrl-C lands here, in the caller's thread: cancel the coroutine in its own thread too.
        if started.wait(timeout=10):
            box["loop"].call_soon_threadsafe(box["task"].cancel)
        thread.join()
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
