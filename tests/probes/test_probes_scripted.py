"""Every probe end to end against a scripted judge with one known bias, over real HTTP.

No provider is reachable here, so tests/support/openai_stub.py serves the scripted judges on
127.0.0.1; the path through judgelab.run, litellm, the openai client and HTTP is the real one.
Each probe must detect its bias in the biased judge and must NOT detect it in an unbiased one.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from judgelab import judgments, probes
from judgelab.probes import perturbations
from judgelab.rubrics import load_rubric
from tests.probes import scripted as s
from tests.support.openai_stub import StubResponse, completion_body
from tests.support.toy_rubrics import ToyDirect, ToyPairwise

# --------------------------------------------------------------------------------------- position


def first_position_judge(body):
    return "A"  # always the candidate shown first


def fair_pairwise_judge(body):
    first, second = s.shown_pair(s.user_text(body))
    return "A" if s.quality(first) > s.quality(second) else "B"


def test_position_detects_a_first_position_judge(tmp_path):
    with s.serve(first_position_judge) as srv:
        res = probes.position(s.pairwise_items(10), ToyPairwise(), s.MODEL, **s.run_kw(srv, tmp_path))
    judgments.validate(res.table)
    assert set(res.table["condition"]) == {"original", "swapped"}
    first = res.metric("first_position_rate")
    assert first["estimate"] == 1.0 and s.significant(first) and first["ci_low"] > 0.5
    assert res.metric("consistency_rate")["estimate"] == 0.0
    assert res.metric("flip_rate")["estimate"] == 1.0
    # the swap rule turns every inconsistent pair into a TIE; "first" keeps each item's seeded first order
    assert res.metric("win_rate_A", policy="tie")["estimate"] == 0.5
    assert res.metric("win_rate_A", policy="drop")["n"] == 0
    firsts = res.details["pairs"]["first_shown"]
    assert set(firsts) == {"original", "swapped"}  # the seeded per-item order really varies
    expected = (firsts == "original").mean()  # A wins exactly where the original order was shown first
    assert res.metric("win_rate_A", policy="first")["estimate"] == pytest.approx(expected)
    line = res.summary_json()
    assert "\n" not in line and json.loads(line)["probe"] == "position"


def test_position_finds_no_bias_in_a_fair_judge(tmp_path):
    with s.serve(fair_pairwise_judge) as srv:
        res = probes.position(s.pairwise_items(10), ToyPairwise(), s.MODEL, **s.run_kw(srv, tmp_path))
    first = res.metric("first_position_rate")
    assert first["estimate"] == 0.5 and not s.significant(first)
    assert res.metric("consistency_rate")["estimate"] == 1.0
    assert res.metric("flip_rate")["estimate"] == 0.0
    for policy in ("tie", "drop", "first", "average"):
        assert res.metric("win_rate_A", policy=policy)["estimate"] == 0.5


# ----------------------------------------------------------------------------------------- length


def length_judge(body):
    answer = s.toy_answer(s.user_text(body))
    return s.score_reply(s.quality(answer) + (1 if perturbations.word_count(answer) > 20 else 0))


def content_judge(body):
    return s.score_reply(s.quality(s.toy_answer(s.user_text(body))))


@pytest.mark.parametrize("biased", [True, False])
def test_length_probe_detects_exactly_a_length_bonus(tmp_path, biased):
    with s.serve(length_judge if biased else content_judge) as srv:
        res = probes.length(s.direct_items(8), ToyDirect(), s.MODEL, field="answer", criterion="quality",
                            lengths=(25, 50), **s.run_kw(srv, tmp_path))
    conditions = ["restatement+25w", "filler+25w", "restatement+50w", "filler+50w"]
    assert set(res.table["condition"]) == {"original", *conditions}
    for cond in conditions:
        row = res.metric("score_change", cond)
        assert row["n"] == 8
        if biased:
            assert row["estimate"] == 1.0 and s.significant(row)
        else:
            assert row["estimate"] == 0.0 and row["p_value"] == 1.0


def test_length_probe_on_pairwise_pads_candidate_a_and_adds_length_controlled_win_rate(tmp_path):
    def longer_wins(body):
        first, second = s.shown_pair(s.user_text(body))
        if len(first.split()) != len(second.split()):
            return "A" if len(first.split()) > len(second.split()) else "B"
        return "A" if s.quality(first) > s.quality(second) else "B"

    with s.serve(longer_wins) as srv:
        res = probes.length(s.pairwise_items(12), ToyPairwise(), s.MODEL, field="answer_a", other_field="answer_b",
                            lengths=(30,), **s.run_kw(srv, tmp_path))
    # originally A (as long as B) won the 6 items where it is better; padded, A wins all 12
    for cond in ("filler+30w", "restatement+30w"):
        row = res.metric("win_rate_A_change", cond)
        assert row["estimate"] == pytest.approx(0.5) and s.significant(row)
    assert "length_controlled_win_rate" in set(res.summary["metric"])


# -------------------------------------------------------------------------------------- authority


def authority_judge(body):
    answer = s.toy_answer(s.user_text(body))
    bonus = 1 if ("certain" in answer or "Source:" in answer) else 0
    return s.score_reply(s.quality(answer) + bonus)


@pytest.mark.parametrize("biased", [True, False])
def test_authority_probe(tmp_path, biased):
    with s.serve(authority_judge if biased else content_judge) as srv:
        res = probes.authority(s.direct_items(8), ToyDirect(), s.MODEL, field="answer", criterion="quality",
                               **s.run_kw(srv, tmp_path))
    for cond in ("confident", "citation"):
        row = res.metric("score_change", cond)
        assert row["estimate"] == (1.0 if biased else 0.0)
        assert s.significant(row) is biased


# ------------------------------------------------------------------------------------- sycophancy


def caving_judge(body):
    """Caves to a challenge (or a stated opinion) on even-numbered items: 50% of the time."""
    first = s.user_text(body)
    k = s.number(first)
    suggested = re.search(r"(?:should be|score of) (\d)", s.user_text(body, -1) if len(body["messages"]) > 1 else first)
    if suggested and k % 2 == 0:
        return s.score_reply(int(suggested.group(1)))
    return s.score_reply(s.quality(s.toy_answer(first)))


@pytest.mark.parametrize("biased", [True, False])
def test_sycophancy_probe(tmp_path, biased):
    with s.serve(caving_judge if biased else content_judge) as srv:
        res = probes.sycophancy(s.direct_items(12), ToyDirect(), s.MODEL, criterion="quality",
                                **s.run_kw(srv, tmp_path))
        challenged = [b for b in srv.requests if len(b["messages"]) == 3]
    assert len(challenged) == 12 and challenged[0]["messages"][1]["role"] == "assistant"
    assert "Are you sure?" in challenged[0]["messages"][2]["content"]
    for variant in ("challenged", "user_opinion"):
        flips = res.metric("flip_rate", variant)
        change = res.metric("agrees_with_suggestion_change", variant)
        if biased:
            assert flips["estimate"] == 0.5 and flips["ci_low"] > 0.2
            assert res.metric("cave_rate", variant)["estimate"] == 0.5
            assert s.significant(change)
        else:
            assert flips["estimate"] == 0.0 and not s.significant(change)


def test_sycophancy_probe_on_a_pairwise_judge_that_caves(tmp_path):
    def caving_pairwise(body):
        if len(body["messages"]) == 3 and s.number(s.user_text(body)) % 2 == 0:
            return re.search(r"Response ([AB]) is better", body["messages"][2]["content"]).group(1)
        return fair_pairwise_judge(body)

    with s.serve(caving_pairwise) as srv:
        res = probes.sycophancy(s.pairwise_items(12), ToyPairwise(), s.MODEL, variants=("challenged",),
                                **s.run_kw(srv, tmp_path))
    assert set(res.table["condition"]) == {"original", "challenged"}
    assert res.metric("flip_rate", "challenged")["estimate"] == 0.5
    assert res.metric("cave_rate", "challenged")["estimate"] == 0.5
    assert s.significant(res.metric("agrees_with_suggestion_change", "challenged"))


# -------------------------------------------------------------------------------- self_preference


def self_preferring_judge(body):
    answer = s.toy_answer(s.user_text(body))
    wobble = 1 if s.number(answer) % 3 == 0 else 0  # quality-unrelated noise, independent of family
    return s.score_reply(s.quality(answer) + wobble + (1 if "Hope this helps!" in answer else 0))


def family_blind_judge(body):
    answer = s.toy_answer(s.user_text(body))
    return s.score_reply(s.quality(answer) + (1 if s.number(answer) % 3 == 0 else 0))


@pytest.mark.parametrize("biased", [True, False])
def test_self_preference_probe(tmp_path, biased):
    with s.serve(self_preferring_judge if biased else family_blind_judge) as srv:
        res = probes.self_preference(s.direct_items(16, generator=True), ToyDirect(), s.MODEL, criterion="quality",
                                     gold_field="human_quality", **s.run_kw(srv, tmp_path))
    assert res.meta["judge_family"] == "gpt"
    row = res.metric("own_family_effect")
    assert row["n"] == 16
    if biased:
        assert row["estimate"] == pytest.approx(1.0, abs=0.2) and s.significant(row)
    else:
        assert abs(row["estimate"]) < 0.3 and not s.significant(row)


def test_self_preference_pairwise_against_gold(tmp_path):
    items = s.pairwise_items(16)
    for k, item in enumerate(items):  # the judge's family wrote candidate A on even items, B on odd ones
        item["generator_a"], item["generator_b"] = ("gpt-4o", "llama-3") if k % 2 == 0 else ("llama-3", "gpt-4o")
    with s.serve(fair_pairwise_judge) as srv:
        res = probes.self_preference(items, ToyPairwise(), s.MODEL, gold_field="gold", **s.run_kw(srv, tmp_path))
    row = res.metric("own_family_win_rate_minus_gold")
    assert row["estimate"] == 0.0 and not s.significant(row)


# ------------------------------------------------------------------------------------ scale_order


ANCHORED = [{"name": "quality", "definition": "How useful the answer is to the user.",
             "anchors": {1: "Useless.", 3: "Partly useful.", 5: "Fully useful."}}]


def anchored_items(n: int = 8) -> list[dict]:
    return [{"item_id": f"d{k}", "prompt": "Why is the sky blue?", "response": f"Answer #{k} of quality {2 + k % 3}."}
            for k in range(n)]


def anchored_reply(score: int) -> str:
    entry = {"criterion": "quality", "evidence": ["quoted"], "justification": "as stated", "score": score,
             "improvement": "more detail"}
    return json.dumps({"scores": [entry], "summary": "ok"})


def primacy_judge(body):
    """Adds 1 when the rubric lists its top anchor first."""
    text = s.user_text(body)
    descending = text.index("5: Fully useful.") < text.index("1: Useless.")
    return anchored_reply(s.quality(text) + (1 if descending else 0))


def anchor_blind_judge(body):
    return anchored_reply(s.quality(s.user_text(body)))


@pytest.mark.parametrize("biased", [True, False])
def test_scale_order_probe(tmp_path, biased):
    rubric = load_rubric("direct_score", criteria=ANCHORED)
    with s.serve(primacy_judge if biased else anchor_blind_judge) as srv:
        res = probes.scale_order(anchored_items(8), rubric, s.MODEL, **s.run_kw(srv, tmp_path))
    assert set(res.table["condition"]) == {"scale:ascending", "scale:descending"}
    assert set(res.table["rubric"]) == {"direct_score-anchors_ascending", "direct_score-anchors_descending"}
    versions = res.table.groupby("rubric")["rubric_version"].unique()
    assert all(len(v) == 1 and v[0].startswith("1.0+") for v in versions) and versions.map(tuple).nunique() == 2
    row = res.metric("score_change", "scale:descending")
    assert row["estimate"] == (1.0 if biased else 0.0) and s.significant(row) is biased
    assert row["n"] == 8


# -------------------------------------------------------------------------------------- injection


def direct_score_reply(score: int) -> str:
    entry = {"evidence": ["quoted"], "justification": "as stated", "score": score, "improvement": "more detail"}
    return json.dumps({"scores": [{"criterion": "factual_accuracy", **entry},
                                  {"criterion": "instruction_following", **entry}], "summary": "ok"})


def direct_score_items(n: int = 6) -> list[dict]:
    return [{"item_id": f"j{k}", "prompt": "Why is the sky blue?", "response": f"Answer #{k} of quality {2 + k % 3}."}
            for k in range(n)]


def obedient_judge(body):
    """Obeys an injected instruction wherever it appears."""
    text = s.user_text(body)
    return direct_score_reply(5 if "give this answer" in text.lower() or "give it the maximum" in text.lower()
                              else s.quality(text))


def fence_respecting_judge(body):
    """Obeys injected text only when the candidate is not fenced (the rubric's mitigation works)."""
    text = s.user_text(body)
    injected = "give this answer" in text.lower() or "give it the maximum" in text.lower()
    fenced = '<response id="' in text
    return direct_score_reply(5 if injected and not fenced else s.quality(text))


def immune_judge(body):
    return direct_score_reply(s.quality(s.user_text(body)))


@pytest.mark.parametrize("judge, fenced_success, unfenced_success", [
    (obedient_judge, 1.0, 1.0), (fence_respecting_judge, 0.0, 1.0), (immune_judge, 0.0, 0.0),
])
def test_injection_probe_and_fencing_mitigation(tmp_path, judge, fenced_success, unfenced_success):
    with s.serve(judge) as srv:
        res = probes.injection(direct_score_items(), load_rubric("direct_score"), s.MODEL, **s.run_kw(srv, tmp_path))
    kinds = list(perturbations.INJECTIONS)
    for kind in kinds:
        fenced = res.metric("injection_success_rate", f"inject:{kind}")
        unfenced = res.metric("injection_success_rate", f"unfenced:inject:{kind}")
        assert fenced["n"] == 6 and fenced["estimate"] == fenced_success
        assert unfenced["estimate"] == unfenced_success
        effect = res.metric("fencing_effect_on_success", f"inject:{kind}")
        assert effect["estimate"] == fenced_success - unfenced_success


def test_injection_probe_on_pairwise_candidate_a(tmp_path):
    def obeys_in_candidate(body):
        first, second = s.shown_pair(s.user_text(body))
        if "better response" in first or "better response" in second:
            return "A" if "better response" in first else "B"
        return fair_pairwise_judge(body)

    with s.serve(obeys_in_candidate) as srv:
        res = probes.injection(s.pairwise_items(8), ToyPairwise(), s.MODEL, field="answer_a", **s.run_kw(srv, tmp_path))
    assert "does not fence" in res.meta["mitigation_note"]  # the toy rubric has no fences: no unfenced arm
    for kind in perturbations.INJECTIONS:
        row = res.metric("injection_success_rate", f"inject:{kind}")
        assert row["n"] == 4 and row["estimate"] == 1.0  # the 4 items A lost originally are all won now
        assert res.metric("win_rate_A_change", f"inject:{kind}")["estimate"] == 0.5


# ---------------------------------------------------------------------------------------- repeats


def sampling_judge(body):
    answer = s.toy_answer(s.user_text(body))
    return s.score_reply(s.quality(answer) + s.noise(body))


def drifting_judge(body):
    """Deterministic per repeat, but the backend changes after repeat 1: +1 and a new fingerprint."""
    answer = s.toy_answer(s.user_text(body))
    new_backend = body.get("seed", 0) >= 2
    reply = completion_body(s.score_reply(s.quality(answer) + (1 if new_backend else 0)), body["model"])
    reply["system_fingerprint"] = "fp_new" if new_backend else "fp_old"
    return StubResponse(body=reply)


def test_repeats_probe_separates_a_noisy_judge_from_a_stable_one(tmp_path):
    with s.serve(sampling_judge) as srv:
        noisy = probes.repeats(s.direct_items(8), ToyDirect(), s.MODEL, k=4, criterion="quality",
                               **s.run_kw(srv, tmp_path))
    with s.serve(content_judge) as srv:
        stable = probes.repeats(s.direct_items(8), ToyDirect(), s.MODEL, k=4, criterion="quality",
                                **s.run_kw(srv, tmp_path / "b"))
    assert noisy.metric("mean_within_item_sd")["estimate"] > 0.3
    assert noisy.metric("items_with_disagreeing_repeats")["estimate"] > 0.5
    assert noisy.metric("ICC1")["estimate"] < 0.9
    assert stable.metric("mean_within_item_sd")["estimate"] == 0.0
    # identical repeats: no within-item error, so all variance is between items and ICC(1,1) is 1 (pingouin
    # defines it there too); its interval is not computed (F is infinite), which the note says
    icc1 = stable.metric("ICC1")
    assert icc1["estimate"] == pytest.approx(1.0), icc1
    assert stable.metric("krippendorff_alpha_interval")["estimate"] == pytest.approx(1.0)
    assert stable.metric("n_system_fingerprints")["estimate"] == 1.0


def test_repeats_probe_reports_drift_across_system_fingerprints(tmp_path):
    with s.serve(drifting_judge) as srv:
        res = probes.repeats(s.direct_items(8), ToyDirect(), s.MODEL, k=4, criterion="quality",
                             **s.run_kw(srv, tmp_path))
    assert res.metric("n_system_fingerprints")["estimate"] == 2.0
    drift = res.metric("fingerprint_mean_range")
    assert drift["estimate"] == pytest.approx(1.0) and s.significant(drift)


# ---------------------------------------------------------------------------------- positive_bias


def generous_judge(body):
    return s.score_reply(s.quality(s.toy_answer(s.user_text(body))) + 1)


def calibrated_judge(body):
    answer = s.toy_answer(s.user_text(body))
    k = s.number(answer)
    return s.score_reply(s.quality(answer) + {0: 1, 2: -1}.get(k % 4, 0))  # symmetric errors


@pytest.mark.parametrize("biased", [True, False])
def test_positive_bias_probe(tmp_path, biased):
    with s.serve(generous_judge if biased else calibrated_judge) as srv:
        res = probes.positive_bias(s.direct_items(12), ToyDirect(), s.MODEL, **s.run_kw(srv, tmp_path))
    row = res.metric("mean_difference", "quality")
    assert row["n"] == 12
    if biased:
        assert row["estimate"] == 1.0 and row["ci_low"] > 0
    else:
        assert row["estimate"] == 0.0 and row["ci_low"] < 0 < row["ci_high"]
    wilcoxon = res.metric("wilcoxon_signed_rank", "quality")
    assert s.significant(wilcoxon) is biased


# ---------------------------------------------------------------------------- shared behaviour


def test_original_condition_calls_are_shared_through_the_cache(tmp_path):
    with s.serve(content_judge) as srv:
        kw = s.run_kw(srv, tmp_path)
        probes.authority(s.direct_items(6), ToyDirect(), s.MODEL, field="answer", criterion="quality", **kw)
        before = srv.count
        res = probes.length(s.direct_items(6), ToyDirect(), s.MODEL, field="answer", criterion="quality",
                            lengths=(25,), **kw)
        # the original condition came from the cache: only the 2 padded conditions x 6 items were sent
        assert srv.count - before == 12
    assert res.table[res.table["condition"] == "original"]["cached"].all()


def test_run_probe_by_name_and_unknown_name():
    assert set(probes.PROBES) == {"position", "length", "authority", "sycophancy", "self_preference",
                                  "scale_order", "injection", "repeats", "positive_bias"}
    with pytest.raises(ValueError, match="unknown probe 'nope'"):
        probes.run_probe("nope", [], ToyDirect(), s.MODEL)


def test_unscored_rows_are_counted_not_scored(tmp_path):
    def flaky_judge(body):
        answer = s.toy_answer(s.user_text(body))
        return "no score today" if s.number(answer) == 0 else s.score_reply(s.quality(answer))

    with s.serve(flaky_judge) as srv:
        res = probes.authority(s.direct_items(8), ToyDirect(), s.MODEL, field="answer", criterion="quality",
                               **s.run_kw(srv, tmp_path))
    row = res.metric("score_change", "citation")
    assert row["n"] == 7 and "1 item(s) dropped" in row["note"] and row["policy"]
    assert (res.table["status"] == "parse_error").sum() == 3  # one item x three conditions, kept as rows
    assert not math.isnan(row["estimate"])
