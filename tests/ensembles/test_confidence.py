"""Confidence sources and calibration on data whose calibration is known by construction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import judgelab
from judgelab import judgments
from judgelab.engine.cache import RequestCache
from judgelab.ensembles.confidence import chosen_score_probability, logprob_confidence, repeat_agreement
from judgelab.stats.calibration import calibration, expected_calibration_error
from tests.support.openai_stub import StubResponse, StubServer, completion_body
from tests.support.toy_rubrics import ToyDirect


def _synthetic(n: int, conf_low: float, conf_high: float, accuracy_of, seed: int, judge: str) -> pd.DataFrame:
    """Pairwise verdicts whose P(correct) given confidence c is accuracy_of(c); gold is always A."""
    rng = np.random.default_rng(seed)
    conf = rng.uniform(conf_low, conf_high, n)
    correct = rng.random(n) < accuracy_of(conf)
    rows = [{"run_id": "syn", "item_id": f"s{i}", "rubric": "t", "criterion": "overall", "judge": judge,
             "condition": "original", "repeat": 0, "status": "ok", "winner": "A" if ok else "B", "confidence": c}
            for i, (c, ok) in enumerate(zip(conf, correct, strict=True))]
    gold = [{"run_id": "syn", "item_id": f"s{i}", "rubric": "t", "criterion": "overall", "judge": "gold",
             "condition": "original", "repeat": 0, "status": "ok", "winner": "A"} for i in range(n)] if judge == "calibrated" else []
    return judgments.make_table(rows + gold)


def test_perfectly_calibrated_judge_has_small_ece_and_overconfident_one_large():
    table = pd.concat([_synthetic(4000, 0.5, 1.0, lambda c: c, 1, "calibrated"),
                       _synthetic(4000, 0.85, 1.0, lambda c: np.full_like(c, 0.6), 2, "overconfident")],
                      ignore_index=True)
    res = calibration(table, "gold", n_resamples=300)
    ece = res.summary[res.summary["metric"] == "ece"].set_index("judge")
    assert ece.loc["calibrated", "estimate"] < 0.03
    assert ece.loc["overconfident", "estimate"] == pytest.approx(0.325, abs=0.03)
    assert ece.loc["overconfident", "ci_low"] > 0.25 and ece.loc["calibrated", "ci_high"] < 0.06
    bins = res.bins[(res.bins["judge"] == "calibrated") & (res.bins["n"] > 200)]
    assert (bins["gap"].abs() < 0.06).all()  # reliability diagram on the diagonal
    assert set(res.bins.loc[(res.bins["judge"] == "overconfident") & (res.bins["n"] > 0), "bin"]) == {8, 9}


def test_ece_matches_hand_computation_and_ties_earn_half_credit():
    assert expected_calibration_error([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 1], n_bins=10) == pytest.approx(
        (2 * abs(0.5 - 0.9) + 2 * abs(1.0 - 0.6)) / 4)
    rows = [{"run_id": "r", "item_id": "a", "rubric": "t", "criterion": "overall", "judge": j, "condition": "c",
             "status": "ok", "winner": w, "confidence": c} for j, w, c in (("gold", "A", None), ("j", "TIE", 0.5))]
    res = calibration(judgments.make_table(rows), n_resamples=10)
    acc = res.summary.set_index("metric").loc["accuracy", "estimate"]
    assert acc == 0.5


def test_calibration_refuses_without_usable_rows():
    rows = [{"run_id": "r", "item_id": "a", "rubric": "t", "criterion": "overall", "judge": "j", "condition": "c",
             "status": "ok", "winner": "A"}]
    with pytest.raises(ValueError, match="no scored rows of gold judge"):
        calibration(judgments.make_table(rows))


def test_repeat_agreement_gives_share_of_modal_verdict():
    rows = [{"run_id": "r", "item_id": "x", "rubric": "t", "criterion": "overall", "judge": "j",
             "condition": "original", "repeat": k, "status": "ok", "winner": w}
            for k, w in enumerate(["A", "A", "B", "A"])]
    rows.append({**rows[0], "repeat": 4, "status": "parse_error", "winner": None, "unscored_reason": "bad"})
    out = repeat_agreement(judgments.make_table(rows)).iloc[0]
    assert out["winner"] == "A" and out["confidence"] == pytest.approx(3 / 5) and pd.isna(out["repeat"])


def test_logprob_confidence_reads_the_cached_reply(tmp_path):
    """The stub server returns OpenAI-shaped logprobs: P(score=4) = 0.7, P(3) = 0.2 among valid values."""
    def reply(body):
        out = completion_body('{"score": 4}', body["model"])
        top = [{"token": "4", "logprob": float(np.log(0.7))}, {"token": "3", "logprob": float(np.log(0.2))},
               {"token": "x", "logprob": float(np.log(0.1))}]
        toks = ['{"', 'score', '":', ' ', '4', '}']
        out["choices"][0]["logprobs"] = {"content": [
            {"token": t, "logprob": 0.0, "bytes": None, "top_logprobs": top if t == "4" else []} for t in toks]}
        return StubResponse(body=out)

    cache_path = tmp_path / "c.sqlite"
    with StubServer(reply) as srv:
        table = judgelab.run([{"item_id": "i", "answer": "x"}], ToyDirect(), "openai/stub", api_base=srv.base_url,
                             api_key="sk-local-stub", logprobs=True, cache=cache_path, progress=False)
    out = logprob_confidence(table, str(cache_path), (1, 5))
    assert out["confidence"].iloc[0] == pytest.approx(0.7 / 0.9)
    assert judgments.detail(out.iloc[0])["confidence_source"] == "logprob"
    with RequestCache(cache_path) as cache:
        missing = logprob_confidence(table.assign(call_id="nope"), cache, (1, 5))
    assert pd.isna(missing["confidence"].iloc[0])
    assert "reply not in the cache" in judgments.detail(missing.iloc[0])["confidence_note"]
    assert chosen_score_probability(None, (1, 5), 3)[0] is None


def test_position_consistency_every_case_of_the_two_passes():
    """One group per case, written by hand: consistent, inconsistent, an unscored pass (either order), a missing
    pass, a pass whose judge states no confidence, two repeats; costs of a shared call count once."""
    from judgelab.ensembles.confidence import POSITION_CONDITION, position_consistency

    def row(item, condition, winner=None, confidence=None, status=None, reason=None, repeat=0, call=None, cost=0.01):
        return {"run_id": "r", "judge": "j", "item_id": item, "rubric": "pairwise", "rubric_version": "1",
                "criterion": "overall", "condition": condition, "repeat": repeat, "winner": winner,
                "confidence": confidence, "status": status or ("ok" if winner else "parse_error"),
                "unscored_reason": reason, "call_id": call or f"{item}-{condition}-{repeat}", "cost_usd": cost}

    table = judgments.make_table([
        row("same", "original", "A", 0.9), row("same", "swapped", "A", 0.7),
        row("flip", "swapped", "B", 0.8), row("flip", "original", "A", 0.6),  # order of rows does not matter
        row("bad1", "original", status="parse_error", reason="no verdict"), row("bad1", "swapped", "A", 0.9),
        row("bad2", "original", "A", 0.9), row("bad2", "swapped", status="api_error", reason="HTTP 500"),
        row("lonely", "swapped", "B", 0.9),
        row("nostated", "original", "B"), row("nostated", "swapped", "B", 0.5),
        row("rep", "original", "A", 1.0, repeat=0), row("rep", "swapped", "A", 1.0, repeat=0),
        row("rep", "original", "B", 1.0, repeat=1), row("rep", "swapped", "A", 1.0, repeat=1),
        row("shared", "original", "A", 0.5, call="one", cost=0.02), row("shared", "swapped", "A", 0.5, call="one",
                                                                             cost=0.02),
    ])
    out = position_consistency(table)
    assert (out["condition"] == POSITION_CONDITION).all()
    got = {(r.item_id, r.repeat): r for r in out.itertuples(index=False)}
    assert list(dict.fromkeys(out["item_id"])) == ["same", "flip", "bad1", "bad2", "lonely", "nostated", "rep", "shared"]
    assert len(out) == 9
    assert got["same", 0].winner == "A" and np.isclose(got["same", 0].confidence, 0.8)
    assert got["flip", 0].winner == "TIE" and got["flip", 0].confidence == 0.5
    flip_detail = judgments.detail(got["flip", 0]._asdict())
    assert flip_detail["first_pass_winner"] == "A" and flip_detail["second_pass_winner"] == "B"
    assert flip_detail["consistent"] is False
    assert got["bad1", 0].status == "parse_error"
    assert got["bad1", 0].unscored_reason == "the 'original' pass is unscored: no verdict"
    assert got["bad2", 0].status == "api_error"
    assert got["bad2", 0].unscored_reason == "the 'swapped' pass is unscored: HTTP 500"
    assert got["lonely", 0].status == "parse_error"
    assert got["lonely", 0].unscored_reason == "no 'original' pass to compare with"
    assert got["nostated", 0].winner == "B" and np.isclose(got["nostated", 0].confidence, 0.75)  # 1.0 stated default
    assert got["rep", 0].winner == "A" and got["rep", 1].winner == "TIE"
    assert np.isclose(got["shared", 0].cost_usd, 0.02) and np.isclose(got["same", 0].cost_usd, 0.02)
    with pytest.raises(ValueError, match="several 'swapped' rows"):
        position_consistency(judgments.make_table([row("x", "original", "A"), row("x", "swapped", "A"),
                                                   row("x", "swapped", "B", call="again")]))
