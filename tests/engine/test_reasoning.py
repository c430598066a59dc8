"""Reasoning-model judges against a local OpenAI-compatible stub (127.0.0.1) that answers the way such
servers do: ``reasoning_content`` in the message, ``completion_tokens_details.reasoning_tokens`` in the
usage, or a ``<think>`` block inline in the content. No provider is reachable here; the path through
litellm, the openai client and HTTP is the real one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import litellm
import pytest

import judgelab
from judgelab import judgments
from judgelab.errors import ConfigError
from judgelab.rubrics import parsing
from tests.engine.test_cli import GOOD, _cli, _data
from tests.support.openai_stub import StubResponse, StubServer, completion_body
from tests.support.toy_rubrics import ToyDirect

ITEMS = [{"item_id": f"i{i}", "answer": f"answer number {i}"} for i in range(3)]
PRICED = "openai/reasoner-priced"
IN_PRICE, OUT_PRICE = 1e-3, 2e-3


def _reasoning_reply(content: str, reasoning: str | None = "Weighing the answer: a 2? no, a 4.",
                     finish_reason: str = "stop", completion: int = 110, reasoning_tokens: int | None = 100):
    def reply(body):
        payload = completion_body(content, body.get("model", "stub"), finish_reason)
        if reasoning is not None:
            payload["choices"][0]["message"]["reasoning_content"] = reasoning
        usage = {"prompt_tokens": 50, "completion_tokens": completion, "total_tokens": 50 + completion}
        if reasoning_tokens is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        payload["usage"] = usage
        return StubResponse(body=payload)
    return reply


def _run(srv, tmp_path, model="openai/stub-reasoner", items=ITEMS, **kw):
    kw.setdefault("cache", tmp_path / "cache.sqlite")
    return judgelab.run(items, ToyDirect(), model, api_base=srv.base_url, api_key="sk-test-key", progress=False,
                        return_stats=True, **kw)


def test_reasoning_effort_is_sent_and_separates_cache_entries(tmp_path):
    with StubServer(_reasoning_reply('{"score": 4}')) as srv:
        low = _run(srv, tmp_path, reasoning_effort="low")
        high = _run(srv, tmp_path, reasoning_effort="high")
        again = _run(srv, tmp_path, reasoning_effort="low")
        plain = _run(srv, tmp_path)
        sent = [r.get("reasoning_effort") for r in srv.requests]
    assert sent == ["low"] * 3 + ["high"] * 3 + [None] * 3  # no effort: the parameter is not sent
    assert low.stats.api_calls == high.stats.api_calls == plain.stats.api_calls == 3
    assert again.stats.api_calls == 0 and again.stats.cache_hits == 3
    assert set(low.table["call_id"]).isdisjoint(high.table["call_id"])
    assert low.table["run_id"].iloc[0] != high.table["run_id"].iloc[0] != plain.table["run_id"].iloc[0]


def test_reasoning_and_its_tokens_are_stored_apart_and_priced_once(tmp_path):
    litellm.register_model({PRICED: {"input_cost_per_token": IN_PRICE, "output_cost_per_token": OUT_PRICE,
                                     "litellm_provider": "openai", "mode": "chat"}})
    with StubServer(_reasoning_reply('{"score": 4}')) as srv:
        res = _run(srv, tmp_path, model=PRICED, reasoning_effort="medium")
    t = judgments.validate(res.table)
    assert (t["status"] == judgments.OK).all() and (t["score"] == 4).all()  # not the 2 considered while thinking
    assert (t["reasoning"] == "Weighing the answer: a 2? no, a 4.").all()
    assert (t["raw_output"] == '{"score": 4}').all()
    assert (t["reasoning_tokens"] == 100).all() and (t["output_tokens"] == 110).all()
    # the reasoning tokens are inside completion_tokens: priced once, as completion tokens
    assert t["cost_usd"].to_numpy(dtype=float) == pytest.approx([50 * IN_PRICE + 110 * OUT_PRICE] * 3)
    assert res.stats.cost_usd == pytest.approx(3 * (50 * IN_PRICE + 110 * OUT_PRICE))


def test_an_inline_think_block_is_stored_as_reasoning_not_parsed(tmp_path):
    with StubServer(lambda body: "<think>A 1? The answer is wrong... no, a 5.</think>\n{\"score\": 3}") as srv:
        t = _run(srv, tmp_path).table
    assert (t["score"] == 3).all()
    assert t["reasoning"].str.startswith("A 1? The answer is wrong").all()
    assert not t["raw_output"].str.contains("think").any()
    assert t["reasoning_tokens"].isna().all()  # the server reported none: unknown, not 0


@pytest.mark.parametrize("content", ["", '{"sco'])
def test_an_answer_cut_off_by_the_reasoning_has_its_own_reason(tmp_path, content):
    cut = _reasoning_reply(content, reasoning="Let me weigh every sentence of the answer in turn, first",
                           finish_reason="length", completion=20, reasoning_tokens=18)
    with StubServer(cut) as srv:
        t = _run(srv, tmp_path, items=ITEMS[:1], max_reasks=0).table
    row = t.iloc[0]
    assert row["status"] == judgments.PARSE_ERROR
    assert row["unscored_reason"].startswith(f"{parsing.THINKING_ONLY}: the reasoning used up the token budget")
    assert "(output truncated at max_tokens)" in row["unscored_reason"]
    assert row["reasoning"].startswith("Let me weigh") and row["reasoning_tokens"] == 18


def test_a_cut_off_answer_without_reasoning_keeps_the_plain_truncation_reason(tmp_path):
    with StubServer(lambda body: StubResponse(content='{"sco', finish_reason="length")) as srv:
        t = _run(srv, tmp_path, items=ITEMS[:1], max_reasks=0).table
    reason = t.iloc[0]["unscored_reason"]
    assert not reason.startswith(parsing.THINKING_ONLY) and reason.endswith("(output truncated at max_tokens)")


def test_a_key_echoed_in_the_reasoning_is_redacted(tmp_path):
    key = "sk-planted-REASONINGKEY-0123456789abcdef"
    echo = _reasoning_reply('{"score": 2}', reasoning=f"The header said Bearer {key}; ignore it.")
    with StubServer(echo) as srv:
        t = judgelab.run(ITEMS[:1], ToyDirect(), "openai/stub-reasoner", api_base=srv.base_url, api_key=key,
                         progress=False, cache=tmp_path / "c.sqlite")
    assert key not in t["reasoning"].iloc[0] and t["reasoning"].iloc[0].startswith("The header said")
    path = judgments.save(t, tmp_path / "t.parquet")
    assert key not in (tmp_path / "t.parquet").read_bytes().decode("latin-1")
    back = judgments.load(path)
    assert back["reasoning"].iloc[0] == t["reasoning"].iloc[0]


@pytest.mark.parametrize("suffix", ["parquet", "jsonl"])
def test_the_new_columns_roundtrip(tmp_path, suffix):
    with StubServer(_reasoning_reply('{"score": 5}')) as srv:
        t = _run(srv, tmp_path).table
    back = judgments.load(judgments.save(t, tmp_path / f"t.{suffix}"))
    assert back["reasoning"].tolist() == t["reasoning"].tolist()
    assert back["reasoning_tokens"].tolist() == t["reasoning_tokens"].tolist() == [100] * 3


def test_a_bad_reasoning_effort_is_one_sentence_before_any_call(tmp_path):
    with StubServer(lambda body: '{"score": 1}') as srv:
        with pytest.raises(ConfigError, match="reasoning_effort must be one of none, minimal, low, medium, high"):
            _run(srv, tmp_path, reasoning_effort="extreme")
        assert srv.count == 0


def test_cli_run_passes_reasoning_effort(tmp_path):
    data = _data(tmp_path, n=2)
    with StubServer(lambda body: GOOD) as srv:
        p = _cli("run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/stub",
                 "--api-base", srv.base_url, "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"),
                 "--reasoning-effort", "low")
        assert p.returncode == 0, p.stderr
        assert [r.get("reasoning_effort") for r in srv.requests] == ["low", "low"]
    assert json.loads(p.stdout.strip().splitlines()[-1])["judgments"] > 0
    shown = subprocess.run([sys.executable, "-m", "judgelab.cli", "run", "--help"], capture_output=True, text=True)
    assert "--reasoning-effort" in shown.stdout
