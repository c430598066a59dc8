"""``timeout`` is a wall-clock limit per call, the reply's body included: a server that trickles its body one byte
at a time is cut off at the deadline (it used to bound each read only, keeping a call alive for minutes).

The servers are the chaos server and the fault server on 127.0.0.1 (no provider is reachable here, and none
trickles on demand); the client path through litellm, the openai client and HTTP is the real one.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import judgelab
from judgelab.backends.call import ModelCallError, _within
from judgelab.backends.reply import ModelReply
from judgelab.backends.transport import RawReply
from tests.reliability.helpers import direct_items, run_cli, summary_line, write_jsonl
from tests.support.chaos_server import ChaosServer
from tests.support.reply_space import ScriptedSpace

LIMIT = "timed out (no complete answer within the {t:g} s limit per call)"


def _run(srv: ChaosServer, items: list[dict[str, Any]], timeout: float, max_retries: int):
    return judgelab.run(items, "direct_score", "openai/chaos-judge", api_base=srv.base_url, cache=False,
                        progress=False, return_stats=True, timeout=timeout, max_retries=max_retries,
                        retry_base_s=0.01)


def test_a_body_trickled_one_byte_at_a_time_is_cut_at_the_deadline():
    """Invariant: a call never outlives its limit, whatever the server does after its headers; the timed-out
    call is retried like any timeout and the row's reason says which limit was passed. The trickle sends one
    byte every timeout/12 s, so a whole body would take about a minute; per-read timeouts never fire on it."""
    timeout, retries = 1.5, 1
    items = direct_items(2, prefix="t")
    script = {"t0": ["trickled_past_deadline"] * 2, "t1": ["trickled_past_deadline", "ok"]}
    with ChaosServer(ScriptedSpace(timeout, script)) as srv:
        start = time.monotonic()
        res = _run(srv, items, timeout, retries)
        wall = time.monotonic() - start
    table = res.table
    cut = table[table["item_id"] == "t0"]
    assert (cut["status"] == "api_error").all()
    assert set(cut["unscored_reason"]) == {LIMIT.format(t=timeout) + " after 2 attempt(s)"}
    assert (table.loc[table["item_id"] == "t1", "status"] == "ok").all()  # retried, then answered
    # two attempts of 1.5 s each, the first call's set-up and the backoff: far from the minute a trickle takes
    assert wall < 2 * timeout + 6.0


def test_a_slow_body_within_the_deadline_is_read_whole():
    """A body trickled quickly (97 bytes every millisecond) and one sent after a pause shorter than the limit are
    answers, not timeouts."""
    items = direct_items(1, prefix="s")
    with ChaosServer(ScriptedSpace(4.0, {"s0": ["ok_trickled_fast"]})) as srv:
        res = _run(srv, items, 4.0, 0)
    assert (res.table["status"] == "ok").all() and res.stats.retries == 0


def test_the_cli_deadline_holds_and_help_says_it_is_wall_clock(tmp_path):
    """`judgelab run --timeout 3` against a trickling server ends in about 3 s per attempt, and --help says the
    limit is wall clock, body included."""
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(1, prefix="c"))
    with ChaosServer(ScriptedSpace(3.0, {"c0": ["trickled_past_deadline"] * 3})) as srv:
        start = time.monotonic()
        proc = run_cli("run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/chaos-judge",
                       "--api-base", srv.base_url, "--timeout", "3", "--max-retries", "1", "--retry-base", "0.01",
                       "--no-cache", "--out", str(tmp_path / "out"))
        wall = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert summary_line(proc.stdout)["unscored"] == 3
    assert wall < 60  # start-up (imports) plus two attempts of 3 s; a trickled body alone takes minutes
    help_text = " ".join(run_cli("run", "--help").stdout.replace("│", " ").split())
    assert "Wall-clock seconds one call may take, the reply's body included" in help_text


def test_a_judge_object_is_held_to_the_same_deadline():
    """A judge object (e.g. a Router judge) that hangs is cut off at the limit too."""

    class Hanging:
        model_name = "openai/hanging"

        def __init__(self) -> None:
            self.calls = 0

        async def acall(self, model: str, messages: Any, *, params: dict[str, Any], timeout: float = 120.0):
            self.calls += 1
            await asyncio.sleep(3600)

    judge = Hanging()
    start = time.monotonic()
    table = judgelab.run([{"item_id": "h", "prompt": "Q", "response": "A"}], "direct_score", judge, cache=False,
                         progress=False, timeout=0.5, max_retries=1, retry_base_s=0.01)
    assert time.monotonic() - start < 10 and judge.calls == 2
    assert set(table["unscored_reason"]) == {LIMIT.format(t=0.5) + " after 2 attempt(s)"}


@pytest.mark.parametrize("arrived", [True, False], ids=["body-arrived", "body-still-arriving"])
def test_a_reply_that_arrived_whole_is_read_even_past_the_deadline(arrived):
    """The deadline is for waiting on the server: a reply whose body has arrived whole is read to the end even
    when this process only gets to it after the deadline (a busy machine must not throw paid answers away);
    one still arriving is abandoned."""
    raw = RawReply()

    async def call() -> ModelReply:
        if arrived:
            raw.status, raw.body = 200, b"{}"
        await asyncio.sleep(0.3)  # the client's own work, past the 0.1 s deadline
        return ModelReply(text="read")

    async def main() -> Any:
        return await _within(call(), 0.1, raw)

    if arrived:
        assert asyncio.run(main()).text == "read"
    else:
        with pytest.raises(ModelCallError, match="timed out"):
            asyncio.run(main())
