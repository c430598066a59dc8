"""Batch runs against a LOCAL STAND-IN for the OpenAI Files + Batch endpoints (tests/engine/batch_standin.py):
no provider can be reached here, so the stand-in plays the provider; the calls go through litellm's real
file/batch client over HTTP on 127.0.0.1."""

from __future__ import annotations

import json

import litellm
import pytest

import judgelab
from judgelab import judgments
from judgelab.engine.batch import BatchStateError, batch_run
from tests.engine.batch_standin import BatchStandIn
from tests.support.toy_rubrics import ToyDirect, ToyPairwise

ITEMS = [{"item_id": f"i{i}", "answer": f"answer {i}"} for i in range(6)]


def _reply(body):
    text = body["messages"][-1]["content"]
    if "answer 4" in text:
        return None  # the provider fails this request
    if "answer 5" in text:
        return "not json"
    return '{"score": 3}'


def test_submit_then_resume_after_restart_collects_one_table(tmp_path):
    litellm.register_model({"openai/batch-judge": {"input_cost_per_token": 2e-6, "output_cost_per_token": 4e-6,
                                                   "input_cost_per_token_batches": 1e-6,
                                                   "output_cost_per_token_batches": 2e-6,
                                                   "litellm_provider": "openai", "mode": "chat"}})
    state = tmp_path / "run.state.json"
    with BatchStandIn(_reply, polls_until_done=3) as standin:
        kw = dict(state_path=state, api_base=standin.base_url, api_key="sk-test-key", poll_interval=0.01)
        first = batch_run(ITEMS, ToyDirect(), "openai/batch-judge", max_wait=0, **kw)
        assert first.status == "validating" and first.table is None
        saved = json.loads(state.read_text())
        assert saved["batch_id"] == "batch-0" and saved["n_requests"] == 6
        # "restart": a fresh call with the same arguments polls the saved batch instead of submitting again
        second = batch_run(ITEMS, ToyDirect(), "openai/batch-judge", **kw)
        assert standin.uploads == 1 and len(standin.batches) == 1 and standin.polls["batch-0"] == 3
        # collecting again (e.g. after another restart) reads the finished batch without a new submission
        third = batch_run(ITEMS, ToyDirect(), "openai/batch-judge", **kw)
        assert len(standin.batches) == 1
    t = second.table
    judgments.validate(t)
    assert second.status == "completed" and len(t) == 6
    by_item = t.set_index("item_id")
    assert (by_item.loc[[f"i{i}" for i in range(4)], "score"] == 3).all()
    assert by_item.loc["i4", "status"] == "api_error" and "stand-in refused" in by_item.loc["i4", "unscored_reason"]
    assert by_item.loc["i5", "status"] == "parse_error" and by_item.loc["i5", "raw_output"] == "not json"
    # 50 prompt + 10 completion tokens per answered request at the registered batch prices
    assert by_item.loc["i0", "cost_usd"] == pytest.approx(50 * 1e-6 + 10 * 2e-6)
    assert third.table["score"].equals(t["score"])


def test_pairwise_swap_batch_and_a_state_file_from_another_run(tmp_path):
    items = [{"item_id": "p0", "answer_a": "x", "answer_b": "y"}]
    with BatchStandIn(lambda body: "A") as standin:
        kw = dict(state_path=tmp_path / "s.json", api_base=standin.base_url, api_key="sk-local-stub", poll_interval=0.01)
        res = batch_run(items, ToyPairwise(), "openai/unpriced", swap=True, **kw)
        assert set(zip(res.table["condition"], res.table["winner"], strict=True)) == {("original", "A"),
                                                                                      ("swapped", "B")}
        assert res.table["cost_usd"].isna().all()  # no batch price known: NaN, never 0
        with pytest.raises(BatchStateError, match="different batch run"):
            batch_run(ITEMS, ToyDirect(), "openai/unpriced", **kw)


def test_batch_plans_requests_like_run_with_order_and_condition(tmp_path):
    """batch_run and run share one request plan: the same seeded per-item order and the condition name."""
    from judgelab.engine.rows import item_order_seed

    items = [{"item_id": f"p{i}", "answer_a": "x", "answer_b": "y"} for i in range(12)]
    with BatchStandIn(lambda body: "A") as standin:
        res = batch_run(items, ToyPairwise(), "openai/unpriced", state_path=tmp_path / "s.json", order="random",
                        condition="terse", seed=7, api_base=standin.base_url, api_key="sk-local-stub", poll_interval=0.01)
    t = res.table.set_index("item_id")
    assert len(t) == 12
    for item_id, row in t.iterrows():
        swapped = item_order_seed(7, item_id)
        assert row["condition"] == ("terse+swapped" if swapped else "terse")
        assert row["winner"] == ("B" if swapped else "A")  # "A" as shown, written in the original labels
    assert 0 < sum(item_order_seed(7, i) for i in t.index) < 12  # both orders occur


def test_batch_rows_keep_a_reasoning_models_thinking_and_its_tokens(tmp_path):
    """A reasoning model's batch output: the thinking is stored (never parsed), its tokens recorded; a reply
    cut at max_tokens after thinking is the 'thinking only' unscored reason, as in run()."""

    def reply(body):
        return "" if "answer 2" in body["messages"][-1]["content"] else '{"score": 4}'

    def decorate(body):
        message, choice = body["choices"][0]["message"], body["choices"][0]
        message["reasoning_content"] = "Let me weigh the answer: the score 1 would be too harsh."
        body["usage"]["completion_tokens_details"] = {"reasoning_tokens": 7}
        if not message["content"]:
            choice["finish_reason"] = "length"

    with BatchStandIn(reply, decorate=decorate) as standin:
        res = batch_run(ITEMS[:3], ToyDirect(), "openai/batch-judge", state_path=tmp_path / "s.json",
                        api_base=standin.base_url, api_key="sk-test-key", poll_interval=0.01)
    t = res.table.set_index("item_id")
    assert (t.loc[["i0", "i1"], "score"] == 4).all()  # "score 1" in the thinking is never read
    assert t["reasoning"].str.startswith("Let me weigh").all() and (t["reasoning_tokens"] == 7).all()
    assert t.loc["i2", "status"] == "parse_error" and t.loc["i2", "unscored_reason"].startswith("thinking only")
    again = judgelab.reparse(res.table, ToyDirect(), items=ITEMS[:3]).set_index("item_id")  # reparse keeps them
    assert again["reasoning"].equals(t["reasoning"]) and again["reasoning_tokens"].equals(t["reasoning_tokens"])
