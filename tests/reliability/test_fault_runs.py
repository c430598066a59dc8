"""Runs through the Python API against the fault-injecting server: every item ends scored or
unscored with its precise reason, retries are bounded and counted exactly, nothing is counted twice.

The server (tests/support/fault_server.py) stands in for a provider, which is not reachable here;
the HTTP path through litellm and the openai client is the real one. Expected outcomes come from
tests/reliability/oracle.py, a replay of the documented policy over the server's fault plan, and
are checked against both the engine's table/summary and the server's own request log.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

import judgelab
from judgelab import judgments
from judgelab.engine.runner import RunResult
from tests.reliability.checks import assert_run_matches_plan
from tests.reliability.helpers import INPUT_PRICE, OUTPUT_PRICE, PRICED_MODEL, direct_items
from tests.reliability.oracle import Expected
from tests.support.fault_server import (
    FAULT_KINDS,
    RETRYABLE_KINDS,
    FaultPlan,
    FaultServer,
    direct_score_answer,
    tag_key,
)

# client timeout; the server's "timeout" fault answers after SLOW_S. Generous, so that a busy machine
# never turns a normal answer into a timeout (which would break the exact counts).
TIMEOUT_S = 4.0
SLOW_S = 8.0  # far past the timeout: a busy event loop notices its timeout late
USAGE = (50, 10)  # tokens the server bills per answered request


def _server(plan: FaultPlan, **kw) -> FaultServer:
    return FaultServer(plan, answer=direct_score_answer, key_fn=tag_key(), slow_s=SLOW_S, usage=USAGE, **kw)


def _run(srv: FaultServer, items, *, max_retries: int, max_reasks: int = 1, **kw) -> RunResult:
    kw.setdefault("cache", False)
    return judgelab.run(items, "direct_score", PRICED_MODEL, api_base=srv.base_url, api_key="sk-test-key",
                        progress=False, return_stats=True, timeout=TIMEOUT_S, max_retries=max_retries,
                        retry_base_s=0.01,  # the same policy with 10 ms instead of 500 ms: fast tests
                        max_reasks=max_reasks, **kw)


def _assert_matches_oracle(res: RunResult, srv: FaultServer, plan: FaultPlan, items, max_retries: int,
                           max_reasks: int = 1) -> dict[str, Expected]:
    ids = [it["item_id"] for it in items]
    expected = assert_run_matches_plan(res.table, res.stats.summary(), srv, plan, ids, max_retries=max_retries,
                                       max_reasks=max_reasks,
                                       price_per_answer=USAGE[0] * INPUT_PRICE + USAGE[1] * OUTPUT_PRICE)
    assert res.stats.reasks == sum(e.reasks for e in expected.values())
    assert res.stats.status_counts == judgments.status_counts(res.table)
    return expected


def test_every_fault_kind_once_then_a_valid_answer():
    kinds = [k for k in FAULT_KINDS if k != "unauthorized"]
    items = direct_items(len(kinds))
    plan = FaultPlan(script={it["item_id"]: [k] for it, k in zip(items, kinds, strict=True)})
    with _server(plan) as srv:
        res = _run(srv, items, max_retries=3, concurrency=8)
        exp = _assert_matches_oracle(res, srv, plan, items, max_retries=3)
    status = {i: e.status for i, e in exp.items()}
    # retryable faults and unparseable answers recover; a refusal and a rejected request do not
    assert Counter(status.values()) == {"ok": len(kinds) - 2, "refusal": 1, "api_error": 1}
    assert res.stats.retries == len(RETRYABLE_KINDS)


def test_persistent_faults_end_unscored_with_the_precise_reason():
    kinds = [k for k in FAULT_KINDS if k != "unauthorized"]
    items = direct_items(len(kinds))
    script = {it["item_id"]: [k] * 10 for it, k in zip(items, kinds, strict=True)}
    # Failed connections before any answer at all mean an unreachable server, which stops the run (a
    # different test). So these two first get an empty answer (re-asked), then fail for good.
    for it, k in zip(items, kinds, strict=True):
        if k in ("drop", "cut_body"):
            script[it["item_id"]] = ["empty"] + [k] * 10
    plan = FaultPlan(script=script)
    with _server(plan) as srv:
        res = _run(srv, items, max_retries=2, concurrency=len(items))
        exp = _assert_matches_oracle(res, srv, plan, items, max_retries=2)
    assert res.stats.ok == 0
    t = res.table
    by_kind = {k: t.loc[t["item_id"] == it["item_id"]].iloc[0] for it, k in zip(items, kinds, strict=True)}
    # bounded: 1 + max_retries (drop and cut_body: + the first, empty answer)
    assert all(by_kind[k]["attempts"] == (4 if k in ("drop", "cut_body") else 3) for k in RETRYABLE_KINDS)
    assert by_kind["refusal"]["status"] == "refusal" and by_kind["refusal"]["attempts"] == 1
    assert by_kind["overlong"]["unscored_reason"].endswith("(output truncated at max_tokens)")
    assert "injected http_502" in by_kind["http_502"]["unscored_reason"]
    # the raw output of the last answer and of the re-asked one are both kept
    assert by_kind["malformed_json"]["raw_output"] == "score = four out of five, roughly"
    assert judgments.detail(by_kind["malformed_json"])["earlier_raw_outputs"] == ["score = four out of five, roughly"]
    assert sum(e.status == "api_error" for e in exp.values()) == len(RETRYABLE_KINDS) + 1


def test_seeded_mix_of_thirty_percent_faults_matches_ground_truth():
    mix = {k: 0.3 / 13 for k in FAULT_KINDS if k not in ("unauthorized", "timeout")} | {"timeout": 0.3 / 13 / 2}
    plan = FaultPlan(mix=mix, seed=11)
    items = direct_items(150)
    with _server(plan) as srv:
        res = _run(srv, items, max_retries=3, concurrency=16)
        _assert_matches_oracle(res, srv, plan, items, max_retries=3)
        truth = srv.kind_counts()
    assert sum(truth[k] for k in FAULT_KINDS) >= 30  # the mix did inject a real load of faults
    assert len(set(truth) & set(FAULT_KINDS)) >= 10  # of most kinds


def test_zero_retries_means_one_attempt_per_call():
    items = direct_items(3)
    plan = FaultPlan(script={"q0": ["http_503", "ok"], "q1": ["rate_limit", "ok"], "q2": ["ok"]})
    with _server(plan) as srv:
        res = _run(srv, items, max_retries=0)
        _assert_matches_oracle(res, srv, plan, items, max_retries=0)
    assert res.stats.retries == 0 and srv.count == 3


def test_retry_after_is_honoured():
    items = direct_items(2)
    plan = FaultPlan(script={"q0": ["rate_limit_retry_after", "rate_limit_retry_after", "ok"]})
    with _server(plan, retry_after_s=0.4) as srv:
        _run(srv, items, max_retries=3, concurrency=2)
        arrivals = [inj.arrived for inj in srv.by_key()["q0"]]
    # backoff base is 10 ms here, so only the server's Retry-After can explain these gaps
    assert len(arrivals) == 3
    assert all(later - earlier >= 0.4 for earlier, later in zip(arrivals, arrivals[1:], strict=False))


def test_rerun_after_faults_calls_again_only_for_failed_requests(tmp_path):
    items = direct_items(12)
    script = {"q0": ["http_500"] * 3, "q1": ["drop"] * 3, "q2": ["refusal"], "q3": ["empty", "empty"],
              "q4": ["timeout", "ok"], "q5": ["context_exceeded"]}
    with _server(FaultPlan(script=script)) as srv:
        first = _run(srv, items, max_retries=2, cache=tmp_path / "c.sqlite", concurrency=6)
        first_calls = srv.count
        failed = set(first.table.loc[first.table["status"] == "api_error", "item_id"])
        assert failed == {"q0", "q1", "q5"}
        second = _run(srv, items, max_retries=2, cache=tmp_path / "c.sqlite", concurrency=6)
        new_keys = {inj.key for inj in srv.log[first_calls:]}
    # answered requests (even unusable answers) come from the cache; failed calls are tried again
    assert new_keys == failed and second.stats.api_calls == srv.count - first_calls == 3
    assert second.stats.cache_hits == 12 - 3 + 1  # q3's re-ask is a second cached request
    t1, t2 = first.table.set_index(["item_id", "criterion"]), second.table.set_index(["item_id", "criterion"])
    # the server's faults were transient: the retried requests now succeed; refusal and parse error stay
    assert set(second.table.loc[second.table["status"] != "ok", "item_id"]) == {"q2", "q3"}
    kept = [i for i in t1.index if i[0] not in failed]
    pd.testing.assert_series_equal(t1.loc[kept, "score"], t2.loc[kept, "score"])
    assert (t2.loc[kept, "status"] == t1.loc[kept, "status"]).all()
