"""With max_cost_usd set, no call is issued past the budget: checked against what the fault server
actually answered and billed (usage blocks), sequentially, concurrently, with retries and re-asks,
and through `judgelab run --max-cost`. No provider is reachable here; the server stands in.
"""

from __future__ import annotations

import pytest

import judgelab
from judgelab import judgments
from tests.reliability.helpers import (
    INPUT_PRICE,
    OUTPUT_PRICE,
    PRICED_MODEL,
    direct_items,
    run_cli,
    summary_line,
    write_jsonl,
)
from tests.support.fault_server import CONTENT_KINDS, FaultPlan, FaultServer, direct_score_answer, tag_key

USAGE = (50, 900)  # billed tokens per answered request: below the guard's estimate (prompt + 1024 out)
COST_PER_ANSWER = USAGE[0] * INPUT_PRICE + USAGE[1] * OUTPUT_PRICE


def _billed(srv: FaultServer) -> int:
    counts = srv.kind_counts()
    return sum(counts[k] for k in (*CONTENT_KINDS, "ok"))


@pytest.mark.parametrize("concurrency", [1, 8])
def test_no_call_is_issued_past_the_budget(concurrency):
    budget = 0.02  # room for about ten answers at COST_PER_ANSWER, of 40 items
    plan = FaultPlan(mix={"rate_limit": 0.1, "http_503": 0.1, "empty": 0.1}, seed=3)
    with FaultServer(plan, answer=direct_score_answer, key_fn=tag_key(), usage=USAGE) as srv:
        res = judgelab.run(direct_items(40), "direct_score", PRICED_MODEL, api_base=srv.base_url, cache=False,
                           progress=False, return_stats=True, max_cost_usd=budget, concurrency=concurrency,
                           retry_base_s=0.01)
        billed = _billed(srv)
        sent = srv.count
    t = judgments.validate(res.table)
    spent = billed * COST_PER_ANSWER  # the server's truth
    assert 0 < spent <= budget
    assert res.stats.cost_usd == pytest.approx(spent)
    status = judgments.status_counts(t)
    assert status["skipped_budget"] > 0 and status["ok"] > 0 and len(t) == 40 * 3  # every item has its rows
    skipped = t[t["status"] == "skipped_budget"]
    assert skipped["unscored_reason"].str.fullmatch(r"budget of 0\.02 USD reached before this call").all()
    assert skipped["raw_output"].isna().all()
    # really never sent: a skipped row's attempts are all earlier asks of the same request (a retried 429/503, or
    # a re-ask after an empty answer), each accounted for in its detail; the ask the budget stopped made none
    for _, row in skipped.iterrows():
        d = judgments.detail(row)
        assert row["attempts"] == len(d.get("failed_attempts", [])) + len(d.get("earlier_raw_outputs", [])), d
    assert res.stats.api_calls == sent


def test_cli_max_cost_stops_issuing_calls(tmp_path):
    """A model litellm knows the price of (gpt-4o-mini), served by the stub: the CLI needs no registration."""
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(12))
    price_in, price_out = 0.15e-6, 0.6e-6  # litellm's bundled price of gpt-4o-mini (USD per token)
    with FaultServer(FaultPlan(), answer=direct_score_answer, key_fn=tag_key(), usage=USAGE) as srv:
        proc = run_cli("run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/gpt-4o-mini",
                       "--api-base", srv.base_url, "--no-cache", "--concurrency", "1", "--max-cost", "0.003",
                       "--out", str(tmp_path / "out"))
        sent = srv.count
    assert proc.returncode == 0, proc.stderr
    summary = summary_line(proc.stdout)
    spent = sent * (USAGE[0] * price_in + USAGE[1] * price_out)
    assert 0 < sent < 12 and spent <= 0.003
    assert summary["api_calls"] == sent and summary["cost_usd"] == pytest.approx(spent)
    t = judgelab.load(tmp_path / "out" / "judgments.parquet")
    assert (t["status"] == "skipped_budget").sum() == 3 * (12 - sent) and (t["status"] == "ok").sum() == 3 * sent
