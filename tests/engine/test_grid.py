"""run_grid: rubric variants x models x conditions x repeats in one pass, against a real local HTTP stub.

No provider is reachable here, so an OpenAI-compatible stub on 127.0.0.1 answers (the path through
litellm, the openai client and HTTP is the real one); it counts the calls it receives.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading

import litellm
import pytest

import judgelab
from judgelab import judgments
from judgelab.backends.pricing import estimate_call_cost
from judgelab.engine.cache import RequestCache
from judgelab.engine.runner import RunAborted
from judgelab.errors import ConfigError
from judgelab.rubrics import load_rubric
from tests.reliability.helpers import CRITERIA, direct_items
from tests.support.fault_server import direct_score_answer, tag_key
from tests.support.openai_stub import StubResponse, StubServer
from tests.support.toy_rubrics import ToyDirect

MODELS = ["openai/stub-a", "openai/stub-b"]
ITEMS = direct_items(3)
KEY = tag_key()


def _answer(body):
    return direct_score_answer(body, KEY(body))


def _rubrics():
    base = load_rubric("direct_score")
    return {"base": base, "after": base.variant(name="after", justification="after")}


def test_table_is_the_product_of_the_axes_with_rubric_version_and_judge(tmp_path):
    rubrics = _rubrics()
    conditions = {"original": None, "shouted": lambda df: df.assign(response=df["response"].str.upper())}
    with StubServer(_answer) as srv:
        res = judgelab.run_grid(ITEMS, rubrics, MODELS, conditions=conditions, repeats=2, api_base=srv.base_url,
                                api_key="sk-test-key", cache=tmp_path / "c.sqlite", progress=False, return_stats=True)
        calls = srv.count
    t = judgments.validate(res.table)
    requests = 2 * 2 * 2 * 2 * len(ITEMS)  # rubrics x models x conditions x repeats x items
    assert calls == requests == res.stats.api_calls == res.stats.requests
    assert len(t) == requests * len(CRITERIA) and (t["status"] == judgments.OK).all()
    cells = t.groupby(["rubric", "judge", "condition", "repeat"]).size()
    assert len(cells) == 16 and (cells == len(ITEMS) * len(CRITERIA)).all()
    assert set(t["judge"]) == set(MODELS) and set(t["condition"]) == {"original", "shouted"}
    versions = t.groupby("rubric")["rubric_version"].unique()
    assert versions["base"][0] == rubrics["base"].version and versions["after"][0] == rubrics["after"].version
    assert versions["base"][0] != versions["after"][0]
    # one run per cell: its own run id, all in one table
    assert t.groupby(["rubric", "judge", "condition"])["run_id"].nunique().eq(1).all()
    assert t["run_id"].nunique() == 8


def test_one_budget_stops_the_whole_grid_and_loses_no_row():
    models = ["openai/grid-priced-a", "openai/grid-priced-b"]
    litellm.register_model({m: {"input_cost_per_token": 1e-5, "output_cost_per_token": 1e-5,
                                "litellm_provider": "openai", "mode": "chat"} for m in models})
    items = direct_items(6)
    rubrics = _rubrics()
    # the guard reserves an upper-bound estimate per call; the stub bills 60 tokens a call
    request = rubrics["base"].requests(items[0])[0]
    _, estimate = estimate_call_cost(models[0], list(request.messages), request.max_tokens)
    actual = 60 * 1e-5
    budget = estimate + 3.5 * actual  # room for exactly 4 calls in the whole grid
    with StubServer(_answer) as srv:
        res = judgelab.run_grid(items, rubrics, models, api_base=srv.base_url, api_key="sk-local-stub", cache=False,
                                concurrency=1, max_cost_usd=budget, progress=False, return_stats=True)
        calls = srv.count
    t = res.table
    per_request = t.drop_duplicates("call_id")
    assert len(per_request) == 2 * 2 * 6 and len(t) == 24 * len(CRITERIA)  # every request has its rows
    ok = per_request["status"] == judgments.OK
    assert calls == 4 == ok.sum() == res.stats.api_calls
    assert (per_request.loc[~ok, "status"] == judgments.SKIPPED_BUDGET).all()
    assert per_request["cost_usd"].sum() == pytest.approx(4 * actual) and per_request["cost_usd"].sum() <= budget
    # one guard for the grid: the calls went to the first cell, every later cell was stopped too
    assert set(per_request.loc[ok, "rubric"]) == {"base"} and set(per_request.loc[ok, "judge"]) == {models[0]}
    assert (t.loc[t["status"] == judgments.SKIPPED_BUDGET, "unscored_reason"].str.contains("budget")).all()


def test_a_grid_stopped_half_way_and_rerun_makes_only_the_missing_calls(tmp_path):
    cache_path = tmp_path / "c.sqlite"
    gate = threading.Event()
    stop_after = 5

    with StubServer(_answer, delay_s=0.05) as srv:
        async def first_pass():
            task = asyncio.create_task(judgelab.arun_grid(
                ITEMS, _rubrics(), MODELS, api_base=srv.base_url, api_key="sk-local-stub", cache=cache_path,
                concurrency=2, progress=False))
            while srv.count < stop_after:
                await asyncio.sleep(0.01)
            task.cancel()  # what Ctrl-C in a notebook does: the grid stops mid-flight
            with pytest.raises(asyncio.CancelledError):
                await task
            gate.set()

        asyncio.run(first_pass())
        assert gate.is_set()
        first_calls = srv.count
        stored = len(RequestCache(cache_path))
        total = 2 * 2 * len(ITEMS)
        assert 0 < stored < total
        res = judgelab.run_grid(ITEMS, _rubrics(), MODELS, api_base=srv.base_url, api_key="sk-local-stub", cache=cache_path,
                                concurrency=2, progress=False, return_stats=True)
        second_calls = srv.count - first_calls
    assert second_calls == total - stored == res.stats.api_calls
    assert res.stats.cache_hits == stored
    assert len(res.table) == total * len(CRITERIA) and (res.table["status"] == judgments.OK).all()


def test_a_bad_key_stops_its_model_in_every_cell_and_the_other_model_goes_on(tmp_path):
    def reply(body):
        if body["model"] == "stub-a":
            return StubResponse(status=401, body={"error": {"message": "bad key", "type": "auth"}})
        return _answer(body)

    with StubServer(reply) as srv:
        with pytest.raises(RunAborted) as info:
            judgelab.run_grid(ITEMS, _rubrics(), MODELS, api_base=srv.base_url, api_key="sk-local-stub",
                              cache=tmp_path / "c.sqlite", concurrency=1, progress=False)
        sent = [r["model"] for r in srv.requests]
    assert sent.count("stub-a") == 1  # one fatal answer stops stub-a in both rubric cells
    assert sent.count("stub-b") == 2 * len(ITEMS)
    t = info.value.result.table
    assert len(t) == 2 * 2 * len(ITEMS) * len(CRITERIA)  # every row is kept
    by_judge = {judge: set(part["status"]) for judge, part in t.groupby("judge")}
    assert by_judge == {"openai/stub-a": {judgments.API_ERROR}, "openai/stub-b": {judgments.OK}}
    assert "authentication" in str(info.value)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"rubrics": {"base": "no_such_rubric"}, "models": MODELS}, "grid rubric 'base': unknown rubric 'no_such_rubric'"),
    ({"rubrics": {"base": "direct_score"}, "models": []}, "models is empty"),
    ({"rubrics": {}, "models": MODELS}, "rubrics must be a non-empty mapping"),
    ({"rubrics": {"base": "direct_score"}, "models": ["openai/x", "openai/x"]}, "appear twice"),
    ({"rubrics": {"base": "direct_score"}, "models": MODELS, "judge": "j"}, "cannot take option"),
])
def test_bad_grid_arguments_are_one_config_error_sentence(kwargs, match):
    with StubServer(_answer) as srv:
        with pytest.raises(ConfigError, match=match) as err:
            judgelab.run_grid(ITEMS, api_base=srv.base_url, cache=False, progress=False, **kwargs)
        assert srv.count == 0
    assert "\n" not in str(err.value)



class _ToyDirectTerse(ToyDirect):
    """ToyDirect with another wording: a second variant with its own name and fingerprint."""

    name = "toy_direct_terse"

    def requests(self, item, *, swapped=False):
        [request] = super().requests(item, swapped=swapped)
        messages = [{"role": "user", "content": f"Score 1-5 as JSON {{\"score\": n}}: {item['answer']}"}]
        return [dataclasses.replace(request, messages=messages)]

    def fingerprint(self) -> str:
        return "toy_direct_terse-1"


@pytest.mark.local_model
def test_the_embedded_judge_runs_a_two_variant_grid(tmp_path):
    items = [{"item_id": f"e{i}", "answer": f"Paris is the capital of France ({i})."} for i in range(2)]
    res = judgelab.run_grid(items, {"toy": ToyDirect(), "terse": _ToyDirectTerse()}, ["local/smollm2"],
                            max_tokens=8, max_reasks=0, concurrency=1, cache=tmp_path / "c.sqlite", progress=False,
                            return_stats=True)
    t = judgments.validate(res.table)
    assert len(t) == 4 and res.stats.api_calls == 4
    assert t.groupby("rubric")["item_id"].apply(list).to_dict() == {"terse": ["e0", "e1"], "toy": ["e0", "e1"]}
    assert set(t["rubric_version"]) == {"1"} and set(t["judge"]) == {"local/smollm2"}
    assert t["call_id"].nunique() == 4  # the two variants are distinct requests
    # scored or not (a plumbing judge), every row says what happened
    assert t["status"].isin(judgments.STATUSES).all()
    assert t.loc[t["status"] != judgments.OK, "unscored_reason"].notna().all()
