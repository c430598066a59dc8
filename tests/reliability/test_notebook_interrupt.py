"""Ctrl-C in a notebook (a KeyboardInterrupt while ``judgelab.run`` waits inside a running event
loop) stops the run: no call is issued after the interrupt, and a rerun makes only the missing calls.

ipykernel is not used here: a plain event loop without asyncio.run's SIGINT handler stands in for
the kernel's (a real SIGINT, default handler); the model is the fault server (no provider here).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import pytest

import judgelab
from tests.reliability.helpers import direct_items
from tests.support.fault_server import FaultServer, direct_score_answer, tag_key

N_ITEMS = 60


def test_interrupt_inside_a_running_loop_stops_issuing_calls(tmp_path, default_sigint):
    cache = tmp_path / "cache.sqlite"
    with FaultServer(answer=direct_score_answer, key_fn=tag_key(), delay_s=0.1) as srv:

        def press_ctrl_c() -> None:
            while srv.count < 8:
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)

        async def notebook_cell():
            return judgelab.run(direct_items(N_ITEMS), "direct_score", "openai/stub-judge", api_base=srv.base_url,
                                cache=cache, progress=False, concurrency=2)

        threading.Thread(target=press_ctrl_c, daemon=True).start()
        loop = asyncio.new_event_loop()
        try:
            with pytest.raises(KeyboardInterrupt):
                loop.run_until_complete(notebook_cell())
        finally:
            loop.close()
        at_interrupt = srv.count
        time.sleep(1.0)  # a run left going in the background would keep calling (10 calls per second)
        assert srv.count == at_interrupt < N_ITEMS
        assert not [t for t in threading.enumerate() if t.name == "judgelab-run"]
        res = judgelab.run(direct_items(N_ITEMS), "direct_score", "openai/stub-judge", api_base=srv.base_url,
                           cache=cache, progress=False, concurrency=8, return_stats=True)
    assert res.stats.api_calls == N_ITEMS - res.stats.cache_hits and res.stats.cache_hits > 0
    assert (res.table["status"] == "ok").all() and len(res.table) == 3 * N_ITEMS
