"""A fully cached rerun reports what the first run cost: known prices carried, unknown prices stay unknown.

Against the stub OpenAI-compatible server on 127.0.0.1 (no provider is reachable here).
"""

from __future__ import annotations

import math

import litellm
import pandas as pd

import judgelab
from tests.support.openai_stub import StubServer
from tests.support.toy_rubrics import ToyDirect

ITEMS = [{"item_id": f"i{i}", "answer": f"answer number {i}"} for i in range(4)]


def _run(srv: StubServer, model: str, cache):
    return judgelab.run(ITEMS, ToyDirect(), model, api_base=srv.base_url, api_key="sk-test-key", progress=False,
                        return_stats=True, cache=cache, concurrency=2)


def test_cached_rows_carry_the_cost_of_their_original_call(tmp_path):
    model = "openai/cached-cost-judge"  # a name no other test registers (litellm's price map is process-global)
    litellm.register_model({model: {"input_cost_per_token": 1e-3, "output_cost_per_token": 2e-3,
                                    "litellm_provider": "openai", "mode": "chat"}})
    with StubServer(lambda body: '{"score": 3}') as srv:
        first = _run(srv, model, tmp_path / "cache.sqlite")
        calls = srv.count
        again = _run(srv, model, tmp_path / "cache.sqlite")
        assert srv.count == calls == len(ITEMS)  # the rerun made no call
    assert again.stats.summary()["api_calls"] == 0 and again.stats.summary()["cache_hits"] == len(ITEMS)
    cost = first.table.set_index("item_id")["cost_usd"]
    assert (cost > 0).all()
    pd.testing.assert_series_equal(again.table.set_index("item_id")["cost_usd"].loc[cost.index], cost)
    assert math.isclose(again.stats.summary()["cost_usd"], first.stats.summary()["cost_usd"], rel_tol=1e-12)


def test_an_unknown_price_stays_unknown_on_a_cached_rerun(tmp_path):
    with StubServer(lambda body: '{"score": 3}') as srv:
        first = _run(srv, "openai/never-priced-cached-judge", tmp_path / "cache.sqlite")
        again = _run(srv, "openai/never-priced-cached-judge", tmp_path / "cache.sqlite")
    assert first.stats.summary()["cost_usd"] is None and again.stats.summary()["cost_usd"] is None
    assert first.table["cost_usd"].isna().all() and again.table["cost_usd"].isna().all()
    assert again.stats.summary()["api_calls"] == 0
