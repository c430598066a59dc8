"""The fault server itself: deterministic plans, the HTTP shape of each fault, its request bound."""

from __future__ import annotations

import http.client
import json
from collections import Counter

import pytest

from tests.support.fault_server import FAULT_KINDS, REFUSAL_TEXT, FaultPlan, FaultServer


def _post(srv: FaultServer, content: str = "hello") -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]})
        conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json"})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_a_seeded_mix_is_deterministic_and_has_the_asked_rate():
    plan = FaultPlan(mix={k: 0.3 / len(FAULT_KINDS) for k in FAULT_KINDS}, seed=1)
    kinds = [plan.kind(f"key{i}", n) for i in range(4000) for n in range(3)]
    assert kinds == [FaultPlan(mix=plan.mix, seed=1).kind(f"key{i}", n) for i in range(4000) for n in range(3)]
    faults = sum(k != "ok" for k in kinds) / len(kinds)
    assert 0.28 < faults < 0.32 and set(Counter(kinds)) == {*FAULT_KINDS, "ok"}
    assert kinds != [FaultPlan(mix=plan.mix, seed=2).kind(f"key{i}", n) for i in range(4000) for n in range(3)]


def test_plans_refuse_unknown_kinds_and_impossible_rates():
    with pytest.raises(ValueError, match="unknown fault kinds"):
        FaultPlan(mix={"gremlins": 0.1})
    with pytest.raises(ValueError, match="sum to at most 1"):
        FaultPlan(mix={"empty": 0.8, "drop": 0.3})
    with pytest.raises(ValueError, match="unknown kinds in script"):
        FaultPlan(script={"k": ["ok", "gremlins"]})


def test_each_fault_has_its_http_shape_and_is_logged():
    script = ["rate_limit_retry_after", "http_502", "drop", "cut_body", "overlong", "refusal", "context_exceeded"]
    with FaultServer(FaultPlan(script=lambda key, n: script[n] if n < len(script) else "ok"),
                     retry_after_s=1.5, max_requests=len(script) + 1) as srv:
        status, headers, _ = _post(srv)
        assert status == 429 and headers["retry-after"] == "1.5"
        assert _post(srv)[0] == 502
        with pytest.raises(http.client.RemoteDisconnected):
            _post(srv)
        with pytest.raises(http.client.IncompleteRead):
            _post(srv)
        overlong = json.loads(_post(srv)[2])
        assert overlong["choices"][0]["finish_reason"] == "length"
        assert json.loads(_post(srv)[2])["choices"][0]["message"]["content"] == REFUSAL_TEXT
        status, _, body = _post(srv)
        assert status == 400 and json.loads(body)["error"]["code"] == "context_length_exceeded"
        assert _post(srv)[0] == 200  # script exhausted: a valid answer
        assert _post(srv)[0] == 400  # past max_requests: a non-retryable refusal, so no client loops forever
        assert [i.kind for i in srv.log] == [*script, "ok", "over_limit"]
        assert [i.n for i in srv.log] == list(range(len(script) + 2))  # one conversation key throughout
