"""End to end on the real embedded judge (SmolLM2-135M through llama.cpp): in-process and over HTTP.

The model is tiny: these tests check the plumbing (every row scored or unscored with a reason,
determinism, caching, the HTTP path), never the quality of its judgments.
"""

from __future__ import annotations

import pytest

import judgelab
from judgelab import judgments
from tests.support.toy_rubrics import ToyDirect

pytestmark = pytest.mark.local_model

ITEMS = [
    {"item_id": "e1", "answer": "Paris is the capital of France."},
    {"item_id": "e2", "answer": "The capital of France is Berlin."},
]


def _every_row_accounted_for(table):
    judgments.validate(table)
    assert set(table["item_id"]) == {i["item_id"] for i in ITEMS}
    scored = table["status"] == "ok"
    assert table.loc[scored, "score"].between(1, 5).all()
    assert table.loc[~scored, "unscored_reason"].notna().all()


def test_in_process_run_is_deterministic_and_cached(tmp_path):
    kw = dict(progress=False, return_stats=True, cache=tmp_path / "c.sqlite", logprobs=True)
    first = judgelab.run(ITEMS, ToyDirect(), "local/smollm2", **kw)
    _every_row_accounted_for(first.table)
    assert first.stats.api_calls >= len(ITEMS)
    assert (first.table["cost_usd"] == 0).all()  # the embedded judge is priced at exactly 0
    second = judgelab.run(ITEMS, ToyDirect(), "local/smollm2", **kw)
    assert second.stats.api_calls == 0 and second.stats.cache_hits >= len(ITEMS)
    fresh = judgelab.run(ITEMS, ToyDirect(), "local/smollm2", **{**kw, "cache": False})
    assert list(fresh.table["raw_output"]) == list(first.table["raw_output"])  # temperature 0 is deterministic
    ok = first.table[first.table["status"] == "ok"]
    # logprobs come back from the embedded judge: scored rows carry an expected score and its valid mass
    assert ok["valid_prob_mass"].notna().all() and ok["valid_prob_mass"].between(0, 1).all()


def test_over_http_through_llama_cpp_server(tmp_path):
    from judgelab.backends.server import start_server

    with start_server() as server:
        res = judgelab.run(ITEMS, ToyDirect(), server.model_name, api_base=server.base_url, progress=False,
                           return_stats=True, cache=False)
    _every_row_accounted_for(res.table)
    assert res.stats.api_calls >= len(ITEMS) and res.stats.retries == 0
    assert not server.is_running()
