"""The engine's per-call shortcuts keep their meaning: claims still end, retried calls still renew theirs,
and a price litellm could not compute is not computed a second time.

Against the stub OpenAI-compatible server on 127.0.0.1 (no provider is reachable here).
"""

from __future__ import annotations

import math

import litellm
import pytest

import judgelab
from judgelab.backends import pricing
from judgelab.engine.cache import RequestCache
from tests.support.openai_stub import StubResponse, StubServer
from tests.support.toy_rubrics import ToyDirect

ITEMS = [{"item_id": f"o{i}", "answer": f"answer {i}"} for i in range(6)]


def _run(srv: StubServer, cache: RequestCache, **kw):
    return judgelab.run(ITEMS, ToyDirect(), "openai/overhead-judge", api_base=srv.base_url, progress=False,
                        return_stats=True, cache=cache, concurrency=3, retry_base_s=0.0, **kw)


def test_no_claim_outlives_a_run_whether_calls_succeed_fail_or_are_retried(tmp_path, monkeypatch):
    renewed: list[str] = []
    real_renew = RequestCache.renew
    monkeypatch.setattr(RequestCache, "renew", lambda self, key, token, ttl: (renewed.append(key),
                                                                              real_renew(self, key, token, ttl))[1])
    seen: dict[str, int] = {}

    def reply(body):
        text = body["messages"][0]["content"]
        seen[text] = seen.get(text, 0) + 1
        if "answer 1" in text:
            return StubResponse(status=400)  # a rejected request: no answer stored, the claim is released
        if "answer 2" in text and seen[text] == 1:
            return StubResponse(status=503)  # retried once: the claim is renewed for the second attempt
        return '{"score": 4}'

    with StubServer(reply) as srv, RequestCache(tmp_path / "cache.sqlite") as cache:
        result = _run(srv, cache)
        assert cache.claims() == 0
        assert len(cache) == len(ITEMS) - 1  # every answer stored, the rejected one not
    assert result.stats.status_counts["ok"] == len(ITEMS) - 1 and result.stats.retries == 1
    assert len(renewed) == 1  # the retry of item o2, and no first attempt


def test_a_price_litellm_could_not_compute_is_not_computed_again(monkeypatch):
    response = litellm.ModelResponse(model="never-priced-overhead", choices=[{"message": {"content": "x"}}])
    monkeypatch.setattr(pricing.litellm, "completion_cost",
                        lambda **kw: pytest.fail("completion_cost called although litellm had tried"))
    response._hidden_params = {"response_cost": None}
    assert math.isnan(pricing.response_cost(response))
    response._hidden_params = {"response_cost": 0.25}
    assert pricing.response_cost(response) == 0.25
