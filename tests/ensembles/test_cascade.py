"""Cascades: live on scripted judges over real HTTP (a local stub server stands in for providers, which
cannot be reached here), and as an analysis on LLMBar's released ChatGPT (cheap) and GPT-4 (strong) verdicts."""

from __future__ import annotations

import pandas as pd
import pytest

from judgelab.datasets import llmbar
from judgelab.ensembles.cascades import cascade, cascade_from_tables, escalation_mask
from tests.ensembles.scripted import pair_items, server
from tests.support.toy_rubrics import ToyPairwise

ITEMS = pair_items(12)


def test_live_cascade_escalates_only_inconsistent_items_and_reports_savings(tmp_path):
    gold = {it["item_id"]: it["gold"] for it in ITEMS}
    with server() as srv:
        kw = {"api_base": srv.base_url, "api_key": "sk-local-stub", "cache": False, "progress": False}
        res = cascade("openai/half", "openai/right1", escalate_when=0.75).run(
            ITEMS, ToyPairwise(), measure_against_strong=True, gold=gold, **kw)
        strong_requests = sum(1 for b in srv.requests if b["model"] == "right1")
    final = res.table[res.table["judge"] == "cascade:openai/half->openai/right1"]
    assert len(final) == 12 and (final["winner"] == final["item_id"].map(gold)).all()
    tiers = final["detail"].map(lambda d: "strong" in d)
    assert tiers.sum() == 6  # items 6-11: the position-biased half
    rep = res.report.set_index("metric")
    assert rep.loc["escalation_rate", "estimate"] == 0.5
    assert rep.loc["calls_cascade", "cheap_calls"] == 24 and rep.loc["calls_cascade", "strong_calls"] == 12
    assert rep.loc["strong_calls_saved", "estimate"] == 0.5 and strong_requests == 24
    assert rep.loc["agreement_with_strong_on_everything", "estimate"] == 1.0
    assert rep.loc["accuracy_cheap_only", "estimate"] == 0.5 and rep.loc["accuracy_cascade", "estimate"] == 1.0
    assert rep.loc["usd_saved", "note"] == "price unknown for some calls"


def test_live_cascade_without_measurement_calls_strong_only_on_escalated(tmp_path):
    with server() as srv:
        res = cascade("openai/half", "openai/right1", escalate_when="inconsistent").run(
            ITEMS, ToyPairwise(), api_base=srv.base_url, api_key="sk-local-stub", cache=False, progress=False)
        assert sum(1 for b in srv.requests if b["model"] == "right1") == 12  # 6 items x 2 orders
    assert "calls_strong_on_everything" not in set(res.report["metric"])


def test_escalation_rules_and_errors():
    v = pd.DataFrame({"status": ["ok", "ok", "parse_error"], "confidence": [0.9, 0.5, None],
                      "winner": ["A", "TIE", None], "detail": [None, None, None]})
    assert escalation_mask(v, 0.75).tolist() == [False, True, True]
    assert escalation_mask(v, "tie").tolist() == [False, True, True]
    assert escalation_mask(v, lambda f: f["confidence"] < 0.95).tolist() == [True, True, True]
    with pytest.raises(ValueError, match="escalate_when must be"):
        cascade("a", "b", escalate_when="sometimes")
    with pytest.raises(ValueError, match="escalate_when must be"):
        cascade("a", "b", escalate_when=3)


def test_llmbar_released_verdicts_as_two_tiers(data_dir):
    """Cheap = ChatGPT, strong = GPT-4 on LLMBar Natural (Vanilla, both orders); escalate inconsistent items."""
    cheap = llmbar("Natural", "ChatGPT", "Vanilla", data_dir=data_dir).table
    strong = llmbar("Natural", "GPT-4", "Vanilla", data_dir=data_dir).table
    table = pd.concat([cheap, strong], ignore_index=True)
    res = cascade_from_tables(table, "ChatGPT", "GPT-4", escalate_when=0.75, n_resamples=500)
    rep = res.report.set_index("metric")
    n = rep.loc["escalation_rate", "n"]
    assert n == 100
    rate = rep.loc["escalation_rate", "estimate"]
    assert 0 < rate < 1
    # strong calls: 2 per item on everything, 2 per escalated item in the cascade
    assert rep.loc["calls_strong_on_everything", "estimate"] == 200
    assert rep.loc["strong_calls_saved", "estimate"] == pytest.approx(1 - rate)
    agree = rep.loc["agreement_with_strong_on_everything"]
    assert 0 < agree["estimate"] <= 1 and agree["ci_low"] <= agree["estimate"] <= agree["ci_high"]
    for tier in ("cheap_only", "cascade", "strong_only"):
        assert 0 < rep.loc[f"accuracy_{tier}", "estimate"] < 1
    diff = rep.loc["accuracy_cascade_minus_strong", "estimate"]
    assert diff == pytest.approx(rep.loc["accuracy_cascade", "estimate"] - rep.loc["accuracy_strong_only", "estimate"])


def test_a_panel_can_be_the_cheap_tier():
    from judgelab.ensembles.panels import panel

    gold = {it["item_id"]: it["gold"] for it in ITEMS}
    with server() as srv:
        members = [{"model": f"openai/{m}", "name": m, "api_base": srv.base_url, "api_key": "sk-local-stub"}
                   for m in ("half", "right1", "right2")]
        res = cascade(panel(members), "openai/right3", escalate_when=0.9,
                      strong_kwargs={"api_base": srv.base_url, "api_key": "sk-local-stub"}).run(
            ITEMS, ToyPairwise(), cache=False, progress=False)
        strong_requests = sum(1 for b in srv.requests if b["model"] == "right3")
    final = res.table[res.table["judge"] == "cascade:panel:majority->openai/right3"]
    assert (final["winner"] == final["item_id"].map(gold)).all()
    # items 6-11: "half" dissents in the swapped order, vote share 2/3 there -> confidence (1 + 2/3) / 2 < 0.9
    assert strong_requests == 12 and res.report.set_index("metric").loc["escalation_rate", "estimate"] == 0.5


def test_usd_saved_when_prices_are_known():
    import litellm

    for name, per_token in (("halfpriced", 1e-7), ("rightpriced", 3e-6)):
        litellm.register_model({f"openai/{name}": {"input_cost_per_token": per_token,
                                                    "output_cost_per_token": per_token,
                                                    "litellm_provider": "openai", "mode": "chat"}})
    with server() as srv:
        res = cascade("openai/halfpriced", "openai/rightpriced", escalate_when=0.75).run(
            ITEMS, ToyPairwise(), measure_against_strong=True, api_base=srv.base_url, api_key="sk-local-stub", cache=False,
            progress=False)
    usd = res.report.set_index("metric").loc["usd_saved"]
    per_call = 60  # the stub reports 50 prompt + 10 completion tokens
    cascade_cost = 24 * per_call * 1e-7 + 12 * per_call * 3e-6
    assert usd["usd_cascade"] == pytest.approx(cascade_cost)
    assert usd["estimate"] == pytest.approx(24 * per_call * 3e-6 - cascade_cost) and usd["note"] == ""
