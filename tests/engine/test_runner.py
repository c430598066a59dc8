"""The engine against a real local OpenAI-compatible HTTP server (tests/support/openai_stub.py).

No provider is reachable here, so a stub server on 127.0.0.1 stands in; the path through
litellm, the openai client and HTTP is the real one.
"""

from __future__ import annotations

import asyncio
import json

import litellm
import pandas as pd
import pytest

import judgelab
from judgelab import judgments
from judgelab.engine.cache import RequestCache
from judgelab.engine.runner import RunAborted, item_order_seed
from tests.support.openai_stub import StubResponse, StubServer
from tests.support.toy_rubrics import ToyDirect, ToyPairwise

MODEL = "openai/stub-judge"
ITEMS = [{"item_id": f"i{i}", "answer": f"answer number {i}"} for i in range(6)]


def _run(server: StubServer, tmp_path, items=ITEMS, rubric=None, **kw):
    kw.setdefault("cache", tmp_path / "cache.sqlite")
    return judgelab.run(items, rubric or ToyDirect(), MODEL, api_base=server.base_url, api_key="sk-test-key",
                        progress=False, return_stats=True, **kw)


def test_scores_every_item_and_summary_counts(tmp_path):
    with StubServer(lambda body: '{"score": 4}') as srv:
        res = _run(srv, tmp_path, concurrency=3)
    t = res.table
    assert len(t) == 6 and (t["status"] == "ok").all() and (t["score"] == 4).all()
    assert set(t["item_id"]) == {f"i{i}" for i in range(6)}
    s = res.stats.summary()
    assert s["items"] == 6 and s["judgments"] == 6 and s["ok"] == 6 and s["unscored"] == 0
    assert s["api_calls"] == 6 == srv.count and s["cache_hits"] == 0 and s["retries"] == 0
    judgments.validate(t)
    # the request carried the JSON mode and the rubric's max_tokens
    assert srv.requests[0]["response_format"] == {"type": "json_object"}
    assert srv.requests[0]["max_tokens"] == 20


def test_second_identical_run_makes_zero_calls(tmp_path):
    with StubServer(lambda body: '{"score": 3}') as srv:
        first = _run(srv, tmp_path)
        second = _run(srv, tmp_path)
        assert srv.count == 6
    assert second.stats.api_calls == 0 and second.stats.cache_hits == 6 and second.table["cached"].all()
    cols = ["run_id", "item_id", "criterion", "score", "call_id", "prompt_hash"]
    pd.testing.assert_frame_equal(first.table[cols], second.table[cols])


def test_unparseable_output_is_reasked_once_then_recorded_unscored(tmp_path):
    def reply(body):
        return "no idea" if len(body["messages"]) == 1 else "still not json"

    with StubServer(reply) as srv:
        res = _run(srv, tmp_path, items=ITEMS[:2])
    t = res.table
    assert (t["status"] == "parse_error").all() and t["score"].isna().all()
    assert t["unscored_reason"].str.contains("no JSON object").all()
    assert (t["raw_output"] == "still not json").all()
    assert judgments.detail(t.iloc[0])["earlier_raw_outputs"] == ["no idea"]
    assert res.stats.reasks == 2 and srv.count == 4


def test_reask_recovers_a_score(tmp_path):
    with StubServer(lambda b: "garbage" if len(b["messages"]) == 1 else '{"score": 2}') as srv:
        res = _run(srv, tmp_path, items=ITEMS[:1])
    assert res.table.loc[0, "status"] == "ok" and res.table.loc[0, "score"] == 2


def test_rate_limits_and_5xx_are_retried_and_counted(tmp_path):
    calls = {"n": 0}

    def reply(body):
        calls["n"] += 1
        if calls["n"] == 1:
            return StubResponse(status=429, headers={"retry-after": "0"})
        if calls["n"] == 2:
            return StubResponse(status=503)
        return '{"score": 5}'

    with StubServer(reply) as srv:
        res = _run(srv, tmp_path, items=ITEMS[:1], concurrency=1)
    assert res.table.loc[0, "status"] == "ok"
    assert res.stats.retries == 2 and res.stats.api_calls == 3 == srv.count
    assert res.table.loc[0, "attempts"] == 3


def test_retries_are_bounded_and_failure_is_an_unscored_row(tmp_path):
    with StubServer(lambda b: StubResponse(status=500)) as srv:
        # one success first so that the failure is not taken for an unreachable server
        res = _run(srv, tmp_path, items=ITEMS[:1], max_retries=2)
    t = res.table
    assert t.loc[0, "status"] == "api_error" and pd.isna(t.loc[0, "score"])
    assert "after 3 attempt(s)" in t.loc[0, "unscored_reason"] and srv.count == 3


def test_bad_api_key_stops_the_run_keeps_every_row_and_never_leaks_the_key(tmp_path):
    key = "sk-PLANTED-SECRET-123456"
    with StubServer(lambda b: StubResponse(status=401, body={"error": {"message": "bad key", "type": "auth"}})) as srv:
        with pytest.raises(RunAborted) as info:
            judgelab.run(ITEMS, ToyDirect(), MODEL, api_base=srv.base_url, api_key=key, progress=False,
                         cache=tmp_path / "c.sqlite", concurrency=1)
    t = info.value.result.table
    assert len(t) == 6 and (t["status"] == "api_error").all()
    assert "authentication" in str(info.value)
    assert key not in str(info.value) and not t.astype(str).apply(lambda c: c.str.contains(key)).any().any()
    assert srv.count == 1  # nothing issued after the fatal error


def test_swap_maps_winner_back_and_detects_position_preference(tmp_path):
    items = [{"item_id": f"p{i}", "answer_a": f"a{i}", "answer_b": f"b{i}"} for i in range(4)]
    with StubServer(lambda b: "A") as srv:  # a judge that always picks the first shown answer
        res = _run(srv, tmp_path, items=items, rubric=ToyPairwise(), swap=True)
    t = res.table
    assert set(t["condition"]) == {"original", "swapped"}
    assert (t.loc[t["condition"] == "original", "winner"] == "A").all()
    assert (t.loc[t["condition"] == "swapped", "winner"] == "B").all()


def test_random_order_is_seeded_per_item_and_stable(tmp_path):
    items = [{"item_id": f"p{i}", "answer_a": "x", "answer_b": "y"} for i in range(40)]
    with StubServer(lambda b: "A") as srv:
        t = _run(srv, tmp_path, items=items, rubric=ToyPairwise(), order="random", seed=7).table
    expected = {f"p{i}": ("swapped" if item_order_seed(7, f"p{i}") else "original") for i in range(40)}
    assert dict(zip(t["item_id"], t["condition"], strict=True)) == expected
    assert 5 < sum(v == "swapped" for v in expected.values()) < 35


def test_budget_guard_issues_no_call_past_the_budget(tmp_path):
    litellm.register_model({"openai/priced-judge": {"input_cost_per_token": 1e-3, "output_cost_per_token": 1e-3,
                                                     "litellm_provider": "openai", "mode": "chat"}})
    with StubServer(lambda b: '{"score": 1}') as srv:
        res = judgelab.run(ITEMS, ToyDirect(), "openai/priced-judge", api_base=srv.base_url, api_key="sk-local-stub",
                           progress=False, cache=False, concurrency=1, max_cost_usd=0.2, return_stats=True)
    t = res.table
    assert (t["status"] == "skipped_budget").sum() > 0 and (t["status"] == "ok").sum() > 0
    assert srv.count == (t["status"] == "ok").sum()
    assert t.loc[t["status"] == "ok", "cost_usd"].sum() <= 0.2


def test_budget_with_unknown_price_is_refused(tmp_path):
    # a name no other test registers: litellm's price map is process-global (a Router registers its models)
    with StubServer(lambda b: '{"score": 1}') as srv:
        with pytest.raises(ValueError, match="no price"):
            judgelab.run(ITEMS, ToyDirect(), "openai/never-priced-judge", api_base=srv.base_url, progress=False,
                         cache=False, max_cost_usd=1.0)
        assert srv.count == 0


def test_unknown_price_is_nan_not_zero(tmp_path):
    with StubServer(lambda b: '{"score": 1}') as srv:
        res = _run(srv, tmp_path, items=ITEMS[:1])
    assert pd.isna(res.table.loc[0, "cost_usd"]) and res.stats.summary()["cost_usd"] is None


def test_dry_run_estimates_without_calls(tmp_path):
    with StubServer(lambda b: '{"score": 1}') as srv:
        est = judgelab.estimate(ITEMS, ToyDirect(), MODEL, api_base=srv.base_url, api_key="sk-test-key",
                                cache=tmp_path / "cache.sqlite")
        assert srv.count == 0
        with pytest.warns(FutureWarning, match="judgelab.estimate"):  # the old flag returns the same estimate
            old = _run(srv, tmp_path, dry_run=True)
        assert srv.count == 0
    assert est.requests == 6 and est.estimated_prompt_tokens > 0 and est.cached == 0
    assert old.summary() == est.summary()  # NaN cost (no price for the stub model) compares equal as None


def test_run_and_estimate_show_the_full_signature():
    import inspect

    params = inspect.signature(judgelab.run).parameters
    assert {"items", "rubric", "model", "swap", "order", "repeats", "max_cost_usd", "cache"} <= set(params)
    assert list(params) == list(inspect.signature(judgelab.arun).parameters)
    estimate_params = inspect.signature(judgelab.estimate).parameters
    assert "concurrency" in estimate_params and "seed" in estimate_params and "return_stats" not in estimate_params
    assert "state_path" in inspect.signature(judgelab.batch_run).parameters


def test_repeats_are_distinct_cached_requests(tmp_path):
    with StubServer(lambda b: '{"score": 2}') as srv:
        res = _run(srv, tmp_path, items=ITEMS[:2], repeats=3, temperature=0.7)
    t = res.table
    assert len(t) == 6 and sorted(t["repeat"].unique()) == [0, 1, 2] and srv.count == 6
    assert t["call_id"].nunique() == 6 and sorted(t["seed"].unique()) == [0, 1, 2]


def test_logprob_weighted_score_and_missing_logprobs(tmp_path):
    import math

    def reply(body):
        tokens = ['{"', "score", '":', " ", "4", "}"]
        content = [{"token": t, "logprob": -0.1, "top_logprobs": []} for t in tokens]
        content[4]["top_logprobs"] = [{"token": "4", "logprob": math.log(0.6)}, {"token": "5", "logprob": math.log(0.3)},
                                      {"token": "x", "logprob": math.log(0.1)}]
        body_out = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": content},
                                 "message": {"role": "assistant", "content": "".join(tokens)}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}}
        return StubResponse(body=body_out)

    with StubServer(reply) as srv:
        t = _run(srv, tmp_path, items=ITEMS[:1], logprobs=True).table
    assert t.loc[0, "logprob_score"] == pytest.approx((4 * 0.6 + 5 * 0.3) / 0.9)
    assert t.loc[0, "valid_prob_mass"] == pytest.approx(0.9)
    with StubServer(lambda b: '{"score": 4}') as srv:
        t = _run(srv, tmp_path / "b", items=ITEMS[:1], logprobs=True).table
    assert pd.isna(t.loc[0, "logprob_score"]) and "no logprobs" in judgments.detail(t.iloc[0])["logprob_note"]


def test_run_works_inside_a_running_event_loop(tmp_path):
    async def notebook_cell():
        with StubServer(lambda b: '{"score": 4}') as srv:
            return judgelab.run(ITEMS[:2], ToyDirect(), MODEL, api_base=srv.base_url, progress=False,
                                cache=False)

    t = asyncio.run(notebook_cell())
    assert (t["score"] == 4).all()


def test_reparse_applies_a_changed_parser_without_calls(tmp_path):
    with StubServer(lambda b: '{"score": 4, "note": "ok"}') as srv:
        t = _run(srv, tmp_path, items=ITEMS[:3]).table
        n = srv.count

        class Stricter(ToyDirect):
            def parse(self, raw, request):
                rows = super().parse(raw, request)
                rows[0].score = rows[0].score - 1
                return rows

        again = judgelab.reparse(t, Stricter())
        assert srv.count == n
    assert (again["score"] == 3).all() and len(again) == 3
    assert list(again["raw_output"]) == list(t["raw_output"])


def test_reparse_takes_a_rubric_name_like_run(tmp_path):
    from judgelab.engine.reparse import ReparseError
    from judgelab.rubrics import example_items

    items = example_items("direct_score")[:2]
    answer = json.dumps({"scores": [{"criterion": "factual_accuracy", "evidence": [], "justification": "j",
                                     "score": 4, "improvement": "i"},
                                    {"criterion": "instruction_following", "evidence": [], "justification": "j",
                                     "score": 2, "improvement": "i"}], "summary": "s"})
    with StubServer(lambda b: answer) as srv:
        t = _run(srv, tmp_path, items=items, rubric=judgelab.load_rubric("direct_score")).table
        calls = srv.count
        by_name = judgelab.reparse(t, "direct_score", items)
        assert srv.count == calls  # no new calls
    cols = ["item_id", "criterion", "status", "score"]
    pd.testing.assert_frame_equal(by_name[cols], t[cols])
    assert set(t.loc[t["criterion"] == "factual_accuracy", "score"]) == {4.0}
    # a rubric whose prompt differs (10-point scale) cannot reparse these rows: one sentence, no rows invented
    with pytest.raises(ReparseError, match="renders the prompt"):
        judgelab.reparse(t, "direct_score", items, scale=10)
    with pytest.raises(ReparseError, match="not among the items"):
        judgelab.reparse(t, "direct_score", items[:1])


def test_missing_field_is_refused_before_any_call(tmp_path):
    from judgelab.rubrics.base import MissingFieldError

    with StubServer(lambda b: '{"score": 4}') as srv:
        with pytest.raises(MissingFieldError, match="'i9'.*'answer'"):
            _run(srv, tmp_path, items=ITEMS + [{"item_id": "i9", "answer": None}])
        assert srv.count == 0


def test_cache_never_stores_the_api_key(tmp_path):
    key = "sk-PLANTED-CACHE-KEY-987"
    with StubServer(lambda b: '{"score": 4}') as srv:
        judgelab.run(ITEMS[:2], ToyDirect(), MODEL, api_base=srv.base_url, api_key=key, progress=False,
                     cache=tmp_path / "c.sqlite")
        assert srv.auth_headers[0] == f"Bearer {key}"
    for f in tmp_path.iterdir():
        assert key.encode() not in f.read_bytes(), f


def test_cache_is_shared_across_instances(tmp_path):
    c1 = RequestCache(tmp_path / "x.sqlite")
    c2 = RequestCache(tmp_path / "x.sqlite")
    c1.put("k", {"text": "hello"})
    assert c2.get("k") == {"text": "hello"} and len(c2) == 1
    c1.close()
    c2.close()


def test_table_roundtrips_parquet_and_jsonl(tmp_path):
    with StubServer(lambda b: '{"score": 4}') as srv:
        t = _run(srv, tmp_path, items=ITEMS[:3]).table
    for name in ("t.parquet", "t.jsonl"):
        judgelab.save(t, tmp_path / name)
        back = judgelab.load(tmp_path / name)
        pd.testing.assert_frame_equal(back, t, check_dtype=True)
    assert json.loads(t.loc[0, "detail"]) == {"swapped": False}
