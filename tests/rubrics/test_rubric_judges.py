"""direct_score, pairwise, reference_gold, unified_judge, editorial_summary: parsing and rules."""

from __future__ import annotations

import json

import pytest

from judgelab.rubrics import RubricSpecError, combine_swapped_passes, load_rubric
from judgelab.rubrics.base import ParseFailure, RowKey
from tests.rubrics.rubric_helpers import EXAMPLES, examples


def run(name: str, raw: str, item: dict | None = None, index: int = 0, swapped: bool = False, request: int = 0,
        **params: object) -> dict:
    rubric = load_rubric(name, **params)
    req = rubric.requests(item or examples(name)[index], swapped=swapped)[request]
    return {r.key: r for r in rubric.parse(raw, req)}


# ------------------------------------------------------------------ direct_score
DIRECT_OK = json.dumps({"scores": [
    {"criterion": "factual_accuracy", "evidence": ["tilt"], "justification": "correct", "score": 5, "improvement": "angle"},
    {"criterion": "instruction_following", "evidence": ["answers"], "justification": "on task", "score": 3,
     "improvement": "shorter"}], "summary": "good"})


def test_direct_score_weighted_overall() -> None:
    rows = run("direct_score", DIRECT_OK)
    assert rows[RowKey("factual_accuracy")].score == 5
    assert rows[RowKey("overall")].score == pytest.approx(0.6 * 5 + 0.4 * 3)
    assert "flags" not in rows[RowKey("factual_accuracy")].detail


def test_direct_score_custom_criteria_scale_and_seed_single_shape() -> None:
    raw = '{"criterion": "Factual Accuracy", "evidence": ["x"], "justification": "ok", "score": 9, "improvement": "y"}'
    rows = run("direct_score", raw, scale=10, criteria=[{"name": "factual_accuracy", "description": "facts"}])
    assert rows[RowKey("factual_accuracy")].score == 9 and rows[RowKey("overall")].score == 9


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"summary": "x"}', "missing field scores"),
        (DIRECT_OK.replace('"score": 5', '"score": 6'), "scores[factual_accuracy].score=6 is outside the scale 1-5"),
        (DIRECT_OK.replace('"justification": "correct", ', ""), "missing field scores[factual_accuracy].justification"),
        (DIRECT_OK.replace('"instruction_following"', '"charm"'), "'charm' is not a criterion"),
        (DIRECT_OK.replace('"instruction_following"', '"factual_accuracy"'), "scored twice"),
    ],
)
def test_direct_score_malformed(raw: str, reason: str) -> None:
    with pytest.raises(ParseFailure, match=reason.replace("[", r"\[").replace("]", r"\]")):
        run("direct_score", raw)


def test_direct_score_flags_score_before_justification() -> None:
    raw = '{"scores": [{"criterion": "factual_accuracy", "score": 4, "justification": "x"}, ' \
          '{"criterion": "instruction_following", "score": 4, "justification": "y"}]}'
    rows = run("direct_score", raw)
    assert "score given before justification" in rows[RowKey("factual_accuracy")].detail["flags"]


# ------------------------------------------------------------------ pairwise
def pairwise_raw(winner: str, conf: float, per: tuple[str, str]) -> str:
    return json.dumps({"comparison": [{"criterion": "helpfulness", "analysis": "..", "winner": per[0]},
                                      {"criterion": "accuracy", "analysis": "..", "winner": per[1]}],
                       "reasoning": "..", "winner": winner, "confidence": conf})


def test_pairwise_swap_mapping_and_combination() -> None:
    first = run("pairwise", pairwise_raw("B", 0.8, ("B", "B")))[RowKey("overall")]
    second = run("pairwise", pairwise_raw("A", 0.6, ("A", "A")), swapped=True)  # slot A = original B
    assert first.winner == "B" and second[RowKey("overall")].winner == "B"
    assert second[RowKey("helpfulness")].winner == "B"
    combined = combine_swapped_passes(first, second[RowKey("overall")])
    assert combined["winner"] == "B" and combined["confidence"] == pytest.approx(0.7)
    flipped = run("pairwise", pairwise_raw("B", 0.9, ("B", "B")), swapped=True)[RowKey("overall")]
    assert combine_swapped_passes(first, flipped) == {**combine_swapped_passes(first, flipped), "winner": "TIE",
                                                      "confidence": 0.5}


def test_pairwise_flags_winner_against_criterion_vote() -> None:
    row = run("pairwise", pairwise_raw("A", 0.7, ("B", "B")))[RowKey("overall")]
    assert row.winner == "A" and row.detail["criteria_vote_winner"] == "B" and row.detail["disagreements"]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (pairwise_raw("A", 1.5, ("A", "A")), "confidence=1.5 is outside"),
        (pairwise_raw("first", 0.5, ("A", "A")), "winner='first' is not one of A, B, TIE"),
        ('{"winner": "A", "confidence": 0.5}', "missing field comparison"),
    ],
)
def test_pairwise_malformed(raw: str, reason: str) -> None:
    with pytest.raises(ParseFailure, match=reason):
        run("pairwise", raw)


# ------------------------------------------------------------------ reference_gold
def ref_raw(corr: int, comp: int, style: int = 5, verdict: str = "mismatch", relevant: bool = False,
            delta: str = "Says Sydney.", basis: str = "Wrong city.") -> str:
    return json.dumps({"scores": {"correctness": corr, "completeness": comp, "style_fidelity": style},
                       "style_relevant": relevant, "verdict": verdict, "delta": delta, "decision_basis": basis})


def test_reference_gold_seed_example_and_recomputed_verdict() -> None:
    rows = run("reference_gold", ref_raw(1, 1))
    assert rows[RowKey("overall")].verdict == "mismatch" and rows[RowKey("overall")].detail["disagreements"] == []
    rows = run("reference_gold", ref_raw(5, 3, verdict="match"))
    overall = rows[RowKey("overall")]
    assert overall.verdict == "partial_match" and overall.detail["stated_verdict"] == "match"
    assert overall.detail["disagreements"]


def test_reference_gold_word_limit_and_style_flags() -> None:
    long = " ".join(["word"] * 31)
    flags = run("reference_gold", ref_raw(5, 5, style=3, verdict="match", delta=long))[RowKey("overall")].detail["flags"]
    assert "delta has 31 words (limit 30)" in flags
    assert any("style_relevant is false" in f for f in flags)
    exactly = " ".join(["word"] * 30)
    assert run("reference_gold", ref_raw(5, 5, verdict="match", basis=exactly))[RowKey("overall")].detail["flags"] == []


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (ref_raw(0, 3), "scores.correctness=0 is outside the scale 1-5"),
        (ref_raw(5, 5, verdict="perfect"), "verdict='perfect' is not one of"),
        ('{"scores": {"correctness": 5, "completeness": 5}, "style_relevant": false, "verdict": "match", '
         '"delta": "-", "decision_basis": "-"}', "missing field scores.style_fidelity"),
        (ref_raw(5, 5).replace('"style_relevant": false', '"style_relevant": "maybe"'), "style_relevant='maybe'"),
    ],
)
def test_reference_gold_malformed(raw: str, reason: str) -> None:
    with pytest.raises(ParseFailure, match=reason):
        run("reference_gold", raw)


def test_reference_gold_degraded_variant() -> None:
    rubric = load_rubric("reference_gold", degraded=True)
    assert rubric.version.endswith("+degraded") and [c.name for c in rubric.spec.criteria] == ["correctness"]
    raw = '{"scores": {"correctness": 5}, "verdict": "match", "delta": "none", "decision_basis": "same city"}'
    rows = run("reference_gold", raw, degraded=True)
    assert set(rows) == {RowKey("correctness"), RowKey("overall")} and rows[RowKey("overall")].verdict == "match"
    raw4 = raw.replace('"correctness": 5', '"correctness": 4')
    assert run("reference_gold", raw4, degraded=True)[RowKey("overall")].verdict == "mismatch"
    with pytest.raises(ParseFailure, match="not one of match, mismatch"):
        run("reference_gold", raw.replace('"match"', '"partial_match"'), degraded=True)


# ------------------------------------------------------------------ unified_judge
def uj_raw(corr: float = 40, match: object = True, compliant: tuple = (True, True, True, False),
           parts: tuple = (6, 6, 3), rc_score: float | None = None, rq_score: float | None = None,
           total: float | None = None, verdict: str | None = None) -> str:
    rules = [{"name": f"Rule {i + 1}", "compliant": c, "score": 10 if c else 0, "evidence": "..."}
             for i, c in enumerate(compliant)]
    return json.dumps({"evaluation": {
        "correctness": {"score": corr, "output_value": "..", "expected_value": "..", "match": match, "details": ".."},
        "rule_compliance": {"score": rc_score if rc_score is not None else 10 * sum(compliant), "rules": rules},
        "reasoning_quality": {"score": rq_score if rq_score is not None else sum(parts), "chain_of_thought": parts[0],
                              "evidence_usage": parts[1], "confidence_calibration": parts[2]}},
        "total_score": total, "verdict": verdict, "summary": "..", "improvement_suggestions": [".."]})


def test_unified_boolean_pass() -> None:
    rows = run("unified_judge", uj_raw(total=85, verdict="PASS"), index=0)  # M04 true/true
    assert rows[RowKey("correctness")].score == 40 and rows[RowKey("rule_compliance")].score == 30
    assert rows[RowKey("reasoning_quality")].score == 15
    assert rows[RowKey("overall")].score == 85 and rows[RowKey("overall")].verdict == "PASS"
    assert rows[RowKey("overall")].detail["disagreements"] == []


def test_unified_wrong_classification_fails_and_caps_at_60() -> None:
    # M02 COMPETITOR vs OWN: the judge claims full credit; the library says NONE -> 0 -> FAIL, cap 60
    raw = uj_raw(corr=40, match="EXACT", compliant=(True,) * 4, parts=(8, 8, 4), total=100, verdict="PASS")
    rows = run("unified_judge", raw, index=1)
    assert rows[RowKey("correctness")].score == 0 and rows[RowKey("correctness")].detail["match"] == "NONE"
    overall = rows[RowKey("overall")]
    assert overall.score == 60 and overall.verdict == "FAIL" and overall.detail["uncapped_total"] == 60
    assert len(overall.detail["disagreements"]) == 3  # correctness, total, verdict


def test_unified_extraction_f1_credit_from_the_item() -> None:
    # M05 (extraction): output 2 of 3 expected, no extras -> P=1, R=2/3, F1=0.8 -> 32 points
    rows = run("unified_judge", uj_raw(corr=40, compliant=(True, True, True, True), parts=(4, 4, 2)), index=2)
    corr = rows[RowKey("correctness")]
    assert corr.score == pytest.approx(32) and corr.detail["band"] == "full" and corr.detail["recall"] == pytest.approx(2 / 3)
    assert rows[RowKey("overall")].score == pytest.approx(82) and rows[RowKey("overall")].verdict == "PASS"


def test_unified_boolean_non_boolean_values_use_the_judge_match() -> None:
    item = {"item_id": "x", "module": "M13", "input": "..", "output": "serving tray", "expected": "serving tray"}
    rows = run("unified_judge", uj_raw(match=False), item=item)
    assert rows[RowKey("correctness")].score == 0 and rows[RowKey("correctness")].detail["source"] == "judge"


def test_unified_stated_section_scores_are_checked() -> None:
    rows = run("unified_judge", uj_raw(rc_score=40, rq_score=20), index=0)
    d = rows[RowKey("overall")].detail["disagreements"]
    assert any("rule_compliance 40" in x for x in d) and any("reasoning_quality 20" in x for x in d)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (uj_raw(parts=(9, 6, 3)), "reasoning_quality.chain_of_thought=9 is outside the scale 0-8"),
        (uj_raw(compliant=(True, True, True)), "must list the 4 rules, got 3"),
        (uj_raw(corr=55), "correctness.score=55"),
        ('{"evaluation": {}}', "missing field evaluation.correctness"),
    ],
)
def test_unified_malformed(raw: str, reason: str) -> None:
    with pytest.raises(ParseFailure, match=reason):
        run("unified_judge", raw, index=0)


def test_unified_unknown_module_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown module 'M99'"):
        load_rubric("unified_judge").requests({"item_id": "x", "module": "M99", "input": "", "output": "", "expected": ""})


def test_unified_m05_is_extraction() -> None:
    assert load_rubric("unified_judge").module_type["M05"] == "extraction"


# ------------------------------------------------------------------ editorial_summary
POOL = str(EXAMPLES / "editorial_summary_fewshot.jsonl")


def test_editorial_one_request_per_criterion_and_parse() -> None:
    rubric = load_rubric("editorial_summary")
    reqs = rubric.requests(examples("editorial_summary")[0])
    assert [r.expected_rows[0].criterion for r in reqs] == ["coherence", "consistency", "fluency", "relevance", "ordering"]
    assert all(r.logprob_criterion == r.expected_rows[0].criterion for r in reqs)
    row = rubric.parse("{'score': '4', 'explanation': 'Flows well.'}", reqs[2])[0]
    assert row.key == RowKey("fluency") and row.score == 4 and row.detail["explanation"] == "Flows well."


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"score": 7, "explanation": "x"}', "score=7 is outside the scale 1-5"),
        ('{"score": 3}', "missing field explanation"),
        ("{'score': '<score between 1 and 5>', 'explanation': '<spiegazione>'}", "is not an integer score"),
        ('{"score": 3, "explanation": "<explanation>"}', "still the template placeholder"),
    ],
)
def test_editorial_malformed(raw: str, reason: str) -> None:
    with pytest.raises(ParseFailure, match=reason):
        run("editorial_summary", raw)


def test_editorial_language_parameter() -> None:
    it = load_rubric("editorial_summary", language="it").requests(examples("editorial_summary")[0])[0]
    assert "explanation in Italian" in it.messages[-1]["content"] and "spiegazione del voto" in it.messages[-1]["content"]
    en = load_rubric("editorial_summary").requests(examples("editorial_summary")[0])[0]
    assert "explanation in English" in en.messages[-1]["content"]


def test_editorial_few_shot_spans_levels_and_excludes_judged_document() -> None:
    rubric = load_rubric("editorial_summary", few_shot=2, few_shot_pool=POOL, criteria=["consistency"])
    item = {"item_id": "new", "doc_id": "turin-museum", "document": "d", "summary": "s"}
    req = rubric.requests(item)[0]
    ids = req.meta["few_shot_ids"]
    assert len(ids) == 2 and not {"fs-1", "fs-2"} & set(ids)  # same document excluded
    assert "Human expert rating for consistency" in req.messages[-1]["content"]
    spread = load_rubric("editorial_summary", few_shot=3, few_shot_pool=POOL, criteria=["coherence"])
    chosen = spread.requests({"item_id": "new", "document": "d", "summary": "s"})[0].meta["few_shot_ids"]
    levels = {json.loads(line)["item_id"]: json.loads(line)["coherence"] for line in open(POOL)}
    assert sorted(levels[i] for i in chosen) == [1, 3, 4]  # lowest levels first, one per level


def test_editorial_few_shot_never_uses_judged_items() -> None:
    with pytest.raises(RubricSpecError, match="pool contains items being judged"):
        load_rubric("editorial_summary", few_shot=1, few_shot_pool=POOL, judged_items=["fs-3", "x"])
    rubric = load_rubric("editorial_summary", few_shot=1, few_shot_pool=POOL)
    with pytest.raises(ValueError, match="is in the few-shot pool"):
        rubric.requests({"item_id": "fs-1", "document": "d", "summary": "s"})
    with pytest.raises(RubricSpecError, match="needs few_shot_pool"):
        load_rubric("editorial_summary", few_shot=2)
    with pytest.raises(ValueError, match="3 requested"):
        load_rubric("editorial_summary", few_shot=3, few_shot_pool=POOL).requests(
            {"item_id": "n", "doc_id": "milan-bikes", "document": "d", "summary": "s"})


GOOD_OUTPUTS = {
    "direct_score": DIRECT_OK,
    "pairwise": pairwise_raw("A", 0.6, ("A", "TIE")),
    "chess_commentary": "WINNER,A,A,5,5,4,4,4,5,27,B,1,3,2,4,4,4,18",
    "unified_judge": uj_raw(),
    "reference_gold": ref_raw(3, 3, verdict="partial_match"),
    "editorial_summary": '{"score": 3, "explanation": "Adequate."}',
    "trajectory": json.dumps({"scores": [{"criterion": c, "evidence": ["turn 1"], "justification": "j", "score": s,
                                          "improvement": "i"} for c, s in (("task_completion", 5), ("tool_choice", 4),
                                          ("argument_correctness", 5), ("efficiency", 3), ("safety", 5))],
                              "summary": "fine"}),
    "mt_bench_single": "The answer is correct and clear. Rating: [[9]]",
    "mt_bench_pair": "Assistant A is more accurate. [[A]]",
}


@pytest.mark.parametrize("name", sorted(GOOD_OUTPUTS))
def test_parse_returns_exactly_the_expected_rows(name: str) -> None:
    rubric = load_rubric(name)
    for swapped in (False, True) if rubric.mode == "pairwise" else (False,):
        for req in rubric.requests(examples(name)[0], swapped=swapped):
            rows = rubric.parse(GOOD_OUTPUTS[name], req)
            assert sorted((r.key for r in rows), key=str) == sorted(req.expected_rows, key=str)
            assert all(r.score is not None or r.winner is not None or r.verdict is not None for r in rows)


def test_editorial_pool_from_a_summeval_like_items_frame() -> None:
    import pandas as pd

    from judgelab.rubrics.editorial_summary import pool_from_frame

    frame = pd.DataFrame({
        "item_id": [f"d{i // 2}:M{i}" for i in range(6)], "document_id": [f"d{i // 2}" for i in range(6)],
        "source_text": [f"article {i // 2}" for i in range(6)], "summary": [f"summary {i}" for i in range(6)],
        "expert_coherence": [1.0, 2.33, 3.0, 4.67, 5.0, float("nan")],
    })
    pool = pool_from_frame(frame, {"coherence": "expert_coherence"}, document="source_text", doc_id="document_id")
    rubric = load_rubric("editorial_summary", few_shot=2, few_shot_pool=pool, criteria=["coherence"])
    req = rubric.requests({"item_id": "new", "doc_id": "d0", "document": "article 0", "summary": "s"})[0]
    assert req.meta["few_shot_ids"] == ["d1:M2", "d1:M3"]  # d0 excluded; levels 3 then 5 (4.67 rounds to 5)
    assert '"score": 5' in req.messages[-1]["content"]
    with pytest.raises(ValueError, match="few-shot pool has 0 examples with a human ordering score"):
        load_rubric("editorial_summary", few_shot=1, few_shot_pool=pool, criteria=["ordering"]).requests(
            {"item_id": "new", "document": "a", "summary": "s"})


def test_trajectory_is_scored_per_criterion_and_the_library_recomputes_the_overall() -> None:
    """The trajectory rubric: five criterion rows and an overall the library computes as the weighted mean."""
    rows = run("trajectory", GOOD_OUTPUTS["trajectory"])
    assert {k.criterion for k in rows} == {"task_completion", "tool_choice", "argument_correctness", "efficiency",
                                            "safety", "overall"}
    weights = {"task_completion": .35, "tool_choice": .2, "argument_correctness": .2, "efficiency": .1, "safety": .15}
    scores = {"task_completion": 5, "tool_choice": 4, "argument_correctness": 5, "efficiency": 3, "safety": 5}
    expected = sum(weights[c] * scores[c] for c in weights) / sum(weights.values())
    assert rows[RowKey("overall")].score == pytest.approx(expected)
