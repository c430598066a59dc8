"""A judge that is a litellm Router over several local OpenAI-compatible servers (tests/support/openai_stub.py).

No provider or GPU server is reachable here, so stub servers on 127.0.0.1 stand in for the
deployments; the path through judgelab's engine, the litellm Router, the openai client and HTTP is real.
"""

from __future__ import annotations

import threading

import pytest

import judgelab
from judgelab.backends.router import router_judge
from tests.support.openai_stub import StubResponse, StubServer
from tests.support.toy_rubrics import ToyDirect

ITEMS = [{"item_id": f"i{i}", "answer": f"answer {i}"} for i in range(40)]


def _run(judge, **kw):
    return judgelab.run(ITEMS, ToyDirect(), judge, cache=False, progress=False, return_stats=True, **kw)


def test_router_spreads_requests_over_two_servers():
    with StubServer(lambda b: '{"score": 4}', delay_s=0.02) as s1, StubServer(lambda b: '{"score": 4}',
                                                                               delay_s=0.02) as s2:
        judge = router_judge([s1.base_url, s2.base_url], model="openai/stub-judge", max_parallel_requests=4)
        res = _run(judge, concurrency=8)
        counts = (s1.count, s2.count)
    table = res.table
    assert len(table) == 40 and (table["status"] == "ok").all() and (table["score"] == 4).all()
    assert sum(counts) == 40 == res.stats.api_calls
    assert min(counts) >= 10, f"load not spread: {counts}"  # least-busy over 2 x 4 slots
    assert sum(judge.calls_by_deployment.values()) == 40 and len(judge.calls_by_deployment) == 2
    assert set(judge.calls_by_deployment) == {s1.base_url, s2.base_url} and judge.fallbacks == 0
    assert set(table["judge"]) == {"router:openai/stub-judge"}


def test_server_killed_mid_run_falls_back_and_loses_nothing():
    killed = threading.Event()
    served_by_doomed = []

    def doomed_reply(body):
        # after 5 answers the server "dies": its listening socket closes and open connections are reset
        if killed.is_set() or len(served_by_doomed) >= 5:
            if not killed.is_set():
                killed.set()
                threading.Thread(target=_kill, args=(doomed,), daemon=True).start()
            return StubResponse(drop_connection=True)
        served_by_doomed.append(1)
        return '{"score": 3}'

    with StubServer(lambda b: '{"score": 3}', delay_s=0.01) as healthy, StubServer(doomed_reply,
                                                                                    delay_s=0.01) as doomed:
        judge = router_judge([healthy.base_url, doomed.base_url], model="openai/stub-judge",
                             max_parallel_requests=4, cooldown_time=60)
        res = _run(judge, concurrency=6)
        assert killed.is_set()
        healthy_count = healthy.count
    table = res.table
    assert len(table) == 40 and (table["status"] == "ok").all(), table["unscored_reason"].dropna().head()
    assert set(table["item_id"]) == {i["item_id"] for i in ITEMS}
    assert len(served_by_doomed) == 5 and healthy_count == 35
    assert judge.fallbacks >= 1 and judge.calls_by_deployment[healthy.base_url] == 35
    assert sum(judge.calls_by_deployment.values()) == 40


def _kill(server: StubServer) -> None:
    server.httpd.shutdown()
    server.httpd.server_close()


def test_router_judge_rejects_mixed_models_and_bad_limits():
    with pytest.raises(ValueError, match="ONE model"):
        router_judge([{"api_base": "http://127.0.0.1:1/v1", "model": "openai/a"},
                      {"api_base": "http://127.0.0.1:2/v1", "model": "openai/b"}])
    with pytest.raises(ValueError, match="max_parallel_requests must be at least 1"):
        router_judge(["http://127.0.0.1:1/v1"], model="openai/a", max_parallel_requests=0)
    with pytest.raises(ValueError, match="names no model"):
        router_judge(["http://127.0.0.1:1/v1"])


def test_engine_rejects_a_model_that_is_neither_name_nor_judge_object():
    with pytest.raises(TypeError, match="model must be a model name or a judge object"):
        judgelab.run(ITEMS[:1], ToyDirect(), 42, cache=False, progress=False)


def test_per_deployment_concurrency_cap_holds_on_the_server():
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def reply(body):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        threading.Event().wait(0.03)  # in service
        with lock:
            state["now"] -= 1
        return '{"score": 2}'

    with StubServer(reply) as srv:
        judge = router_judge([srv.base_url], model="openai/stub-judge", max_parallel_requests=2)
        res = _run(judge, concurrency=6)
    assert res.stats.ok == 40 and res.stats.retries == 0
    assert state["max"] == 2  # never more than the cap in flight, and the cap was used


def test_rpm_paces_call_starts():
    import asyncio

    judge = router_judge(["http://127.0.0.1:1/v1"], model="openai/stub-judge", rpm=600)

    async def two_slots():
        first = await judge._acquire()
        paced_until = first.next_start
        await judge._release(first, failed=False)
        return first, paced_until

    deployment, paced_until = asyncio.run(two_slots())
    # after one start, the next may begin 60/600 = 0.1 s later, not before
    assert not deployment.free(paced_until - 0.05) and deployment.free(paced_until)
