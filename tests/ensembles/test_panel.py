"""Panels end to end on scripted judges over real HTTP (a local stub server stands in for providers,
which cannot be reached here), plus the aggregation rules on hand-built tables."""

from __future__ import annotations

import pandas as pd
import pytest

import judgelab
from judgelab import judgments
from judgelab.ensembles.confidence import POSITION_CONDITION, position_consistency
from judgelab.ensembles.panels import aggregate_panel, panel
from judgelab.stats.panel_agreement import member_agreement, panel_vs_best_member
from tests.ensembles.scripted import pair_items, server
from tests.support.toy_rubrics import ToyDirect, ToyPairwise

ITEMS = pair_items(12)


def _members(base_url):
    return [{"model": f"openai/{m}", "name": m, "api_base": base_url, "api_key": "sk-test-key"}
            for m in ("right1", "right2", "wrong")]


def _human_rows(items, judge="human"):
    return judgments.make_table([{"run_id": "labels", "item_id": it["item_id"], "rubric": "toy_pairwise",
                                  "criterion": "overall", "judge": judge, "condition": "original", "repeat": 0,
                                  "status": "ok", "winner": it["gold"]} for it in items])


def test_always_wrong_member_is_outvoted_and_rows_are_kept(tmp_path):
    with server() as srv:
        table = panel(_members(srv.base_url), aggregate="majority").run(
            ITEMS, ToyPairwise(), cache=tmp_path / "c.sqlite", progress=False, swap=True)
        assert srv.count == 3 * 12 * 2
    judgments.validate(table)
    assert set(table["judge"]) == {"right1", "right2", "wrong", "panel:majority"}
    gold = {it["item_id"]: it["gold"] for it in ITEMS}
    agg = table[table["judge"] == "panel:majority"]
    assert len(agg) == 24 and (agg["winner"] == agg["item_id"].map(gold)).all()
    wrong = table[table["judge"] == "wrong"]
    assert (wrong["winner"] != wrong["item_id"].map(gold)).all()
    assert agg["confidence"].round(3).eq(0.667).all()  # 2 of 3 members agree
    assert all(judgments.detail(r)["votes"]["wrong"] != r["winner"] for _, r in agg.iterrows())


def test_panel_beats_its_best_member_only_when_it_should(tmp_path):
    with server() as srv:
        table = panel(_members(srv.base_url)).run(ITEMS, ToyPairwise(), cache=False, progress=False)
    table = pd.concat([table, _human_rows(ITEMS)], ignore_index=True)
    res = panel_vs_best_member(table, gold="human", n_resamples=500)
    diff = res[res["metric"] == "panel_minus_best_member"].iloc[0]
    # the best member (a right one) is perfect, like the panel: difference exactly 0
    assert diff["best_member"] in ("right1", "right2") and diff["estimate"] == 0.0
    wrong = res[(res["metric"] == "agreement_with_human") & (res["judge"] == "wrong")].iloc[0]
    assert wrong["estimate"] == 0.0
    # against a panel of one right and two wrong judges the panel loses to its best member
    worse = aggregate_panel(table, ["right1", "wrong"], "majority", tie="first_member", judge_name="panel:x")
    flipped = worse.assign(winner=worse["winner"].map({"A": "B", "B": "A"}))
    res2 = panel_vs_best_member(pd.concat([table, flipped], ignore_index=True), members=["right1", "wrong"],
                                panel_judge="panel:x", n_resamples=500)
    d2 = res2[res2["metric"] == "panel_minus_best_member"].iloc[0]
    assert d2["estimate"] == -1.0 and d2["ci_high"] < 0


def test_member_agreement_reports_alpha_and_pairwise_kappa_with_cis(tmp_path):
    with server() as srv:
        table = panel(_members(srv.base_url)).run(ITEMS, ToyPairwise(), cache=False, progress=False)
    agree = member_agreement(table, ["right1", "right2", "wrong"], n_resamples=300)
    alpha = agree[agree["metric"] == "krippendorff_alpha_nominal"].iloc[0]
    assert -1 <= alpha["estimate"] < 0.5 and alpha["ci_low"] <= alpha["estimate"] <= alpha["ci_high"]
    kap = agree[agree["metric"] == "cohen_kappa"].set_index(["judge_x", "judge_y"])["estimate"]
    assert kap[("right1", "right2")] == pytest.approx(1.0) and kap[("right1", "wrong")] == pytest.approx(-1.0)


def test_position_biased_judge_gets_tie_with_confidence_half(tmp_path):
    with server() as srv:
        table = judgelab.run(ITEMS, ToyPairwise(), "openai/first", api_base=srv.base_url, api_key="sk-local-stub",
                             swap=True, cache=False, progress=False)
        right = judgelab.run(ITEMS, ToyPairwise(), "openai/right1", api_base=srv.base_url, api_key="sk-local-stub",
                             swap=True, cache=False, progress=False)
    both = position_consistency(pd.concat([table, right], ignore_index=True))
    assert set(both["condition"]) == {POSITION_CONDITION}
    biased = both[both["judge"] == "openai/first"]
    assert (biased["winner"] == "TIE").all() and (biased["confidence"] == 0.5).all()
    good = both[both["judge"] == "openai/right1"]
    assert (good["confidence"] == 1.0).all() and (good["winner"] != "TIE").all()


def test_score_rules_and_explicit_tie_rules():
    def rows(scores):
        return judgments.make_table([{"run_id": "r", "item_id": "x", "rubric": "t", "criterion": "q", "judge": j,
                                      "condition": "original", "repeat": 0, "status": "ok", "score": s}
                                     for j, s in scores.items()])

    t = rows({"a": 2.0, "b": 4.0, "c": 4.0, "d": 5.0})
    assert aggregate_panel(t, list("abcd"), "mean")["score"].iloc[0] == pytest.approx(3.75)
    assert aggregate_panel(t, list("abcd"), "median")["score"].iloc[0] == pytest.approx(4.0)
    assert aggregate_panel(t, list("abcd"), "majority")["score"].iloc[0] == 4.0
    w = aggregate_panel(t, list("abcd"), "weighted", weights={"a": 3.0, "b": 1.0, "c": 0.0, "d": 0.0})
    assert w["score"].iloc[0] == pytest.approx(2.5)
    tied = rows({"a": 2.0, "b": 4.0})
    assert aggregate_panel(tied, ["a", "b"], "majority", tie="tie")["score"].iloc[0] == 3.0
    assert aggregate_panel(tied, ["b", "a"], "majority", tie="first_member")["score"].iloc[0] == 4.0
    with pytest.raises(ValueError, match="needs scores"):
        aggregate_panel(judgments.make_table([{"run_id": "r", "item_id": "x", "rubric": "t", "criterion": "o",
                                               "judge": j, "condition": "original", "status": "ok", "winner": "A"}
                                              for j in "ab"]), ["a", "b"], "mean")


def test_pairwise_tie_between_two_members_is_explicit():
    t = judgments.make_table([{"run_id": "r", "item_id": "x", "rubric": "t", "criterion": "overall", "judge": j,
                               "condition": "original", "repeat": 0, "status": "ok", "winner": w}
                              for j, w in (("a", "A"), ("b", "B"))])
    tie = aggregate_panel(t, ["a", "b"], "majority", tie="tie").iloc[0]
    assert tie["winner"] == "TIE" and tie["confidence"] == 0.5 and judgments.detail(tie)["tie_broken"]
    assert aggregate_panel(t, ["b", "a"], "majority", tie="first_member")["winner"].iloc[0] == "B"
    heavy = aggregate_panel(t, ["a", "b"], "weighted", weights={"a": 1.0, "b": 2.0}).iloc[0]
    assert heavy["winner"] == "B" and heavy["confidence"] == pytest.approx(2 / 3)


def test_member_down_leaves_unscored_rows_and_quorum_decides(tmp_path):
    with server() as srv:
        members = _members(srv.base_url)[:2] + [{"model": "openai/right3", "name": "dead",
                                                  "api_base": "http://127.0.0.1:9/v1", "api_key": "sk-local-stub"}]
        res = panel(members, quorum=2).run(ITEMS[:4], ToyPairwise(), cache=False, progress=False, max_retries=0,
                                           return_stats=True)
    t = res.table
    assert "dead" in res.aborted and (t.loc[t["judge"] == "dead", "status"] == "api_error").all()
    agg = t[t["judge"] == "panel:majority"]
    assert (agg["status"] == "ok").all() and len(agg) == 4
    strict = aggregate_panel(t, ["right1", "right2", "dead"], quorum=3)
    assert (strict["status"] == "api_error").all()
    assert strict["unscored_reason"].str.contains("only 2 of 3 panel members").all()


def test_panel_on_direct_scores_with_mean(tmp_path):
    items = [{"item_id": f"d{i}", "answer": f"a{i}"} for i in range(3)]
    with server() as srv:
        members = [{"model": f"openai/score-{s}", "name": f"s{s}", "api_base": srv.base_url, "api_key": "sk-local-stub"}
                   for s in (2, 3, 5)]
        t = panel(members, aggregate="mean").run(items, ToyDirect(), cache=False, progress=False)
    agg = t[t["judge"] == "panel:mean"]
    assert agg["score"].round(4).eq(3.3333).all()
    assert agg["confidence"].round(4).eq(0.3333).all()  # only the 3 lies within 0.5 of the mean


def test_bad_panel_specs_fail_clearly():
    with pytest.raises(ValueError, match="at least two members"):
        panel(["openai/a"])
    with pytest.raises(ValueError, match="aggregate must be one of"):
        panel(["openai/a", "openai/b"], aggregate="vote")
    with pytest.raises(ValueError, match="weights name judges that are not members"):
        panel(["openai/a", "openai/b"], weights={"openai/c": 2})
    with pytest.raises(ValueError, match="distinct"):
        panel(["openai/a", "openai/a"])
