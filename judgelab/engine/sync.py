"""Run a coroutine to completion from synchronous code, also inside Jupyter's running event loop.

Library code never calls asyncio.run inside a running loop (it fails there) and never nests loops:
when a loop is running, the coroutine gets a private loop in a worker thread. Ctrl-C in the caller
(a notebook interrupt) cancels the coroutine in its thread too, so no work (or paid call) goes on
in the background.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync", "sync_twin"]

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


def sync_twin(async_function: Callable[..., Coroutine[Any, Any, T]], name: str) -> Callable[..., T]:
    """The synchronous form of ``async_function``, with the same signature (Jupyter's shift-tab shows it).

    It runs through :func:`run_sync`, so it is safe inside a running event loop and stops on Ctrl-C.
    """

    def twin(*args: Any, **kwargs: Any) -> T:
        return run_sync(lambda: async_function(*args, **kwargs), name=f"judgelab-{name}")

    functools.update_wrapper(twin, async_function)  # __wrapped__: inspect.signature shows the real parameters
    twin.__name__ = twin.__qualname__ = name
    twin.__doc__ = (f"Synchronous :func:`{async_function.__name__}` (same arguments); safe inside a running "
                    f"event loop (Jupyter), and Ctrl-C stops it.\n\n{async_function.__doc__ or ''}")
    return twin
