"""from_promptfoo and from_deepeval on files written here from the tools' documented schemas (neither tool runs
offline here: promptfoo is a Node program, DeepEval's metrics call a provider). The shapes follow promptfoo's
EvaluateResult / GradingResult types (src/types/index.ts: results.results[].gradingResult.componentResults[] with
pass, score, reason, assertion {type, value, provider, metric}) and DeepEval's TestRun / LLMApiTestCase /
MetricData models (deepeval/test_run/test_run.py, api.py: testCases[].metricsData[] with name, threshold,
success, score, reason, evaluationModel, error, evaluationCost), as read with the search tools."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgelab
from judgelab import judgments
from judgelab.errors import JudgelabError
from judgelab.imports import ImportFileError


def _component(kind: str, score: float | None, passed: bool | None, reason: str, **assertion: object) -> dict:
    return {"pass": passed, "score": score, "reason": reason, "assertion": {"type": kind, **assertion}}


def promptfoo_results() -> dict:
    def result(test_idx: int, prompt_idx: int, provider: str, components: list[dict], error: str | None = None) -> dict:
        return {"id": f"r{test_idx}{prompt_idx}", "promptIdx": prompt_idx, "testIdx": test_idx,
                "testCase": {"description": f"case {test_idx}", "vars": {"q": "x"}},
                "prompt": {"raw": "Answer: {{q}}", "label": f"p{prompt_idx}"}, "provider": {"id": provider},
                "response": {"output": "..."}, "success": True, "score": 1, "latencyMs": 10,
                **({"error": error} if error else {}),
                "gradingResult": {"pass": True, "score": 1, "reason": "ok", "componentResults": components}}

    return {"evalId": "eval-abc-2026", "metadata": {"promptfooVersion": "0.120.0"},
            "config": {"defaultTest": {"options": {"provider": "openai:gpt-4o-mini"}}},
            "results": {"version": 3, "timestamp": "2026-11-26T10:00:00Z", "results": [
                result(0, 0, "openai:gpt-4o", [
                    _component("llm-rubric", 0.8, True, "Clear and correct.", value="Is it correct?"),
                    _component("contains", 1, True, "Contains 'x'", value="x"),
                    _component("g-eval", 0.6, True, "Coherent enough.", value="Coherence", metric="coherence",
                               provider="anthropic:claude-3-5-haiku"),
                    _component("select-best", 1, True, "Best of the outputs", value="most helpful")]),
                result(0, 1, "openai:gpt-4o", [
                    _component("llm-rubric", 0.2, False, "Wrong.", value="Is it correct?"),
                    _component("g-eval", 0.4, False, "Rambles.", value="Coherence", metric="coherence",
                               provider="anthropic:claude-3-5-haiku"),
                    _component("select-best", 0, False, "Not the best", value="most helpful")]),
                result(1, 0, "openai:gpt-4o", [_component("llm-rubric", None, None, "Error: grader timed out",
                                                          value="Is it correct?")], error="timeout"),
            ], "stats": {"successes": 2, "failures": 1}}}


def deepeval_run() -> dict:
    def metric(name: str, score: float | None, success: bool | None, reason: str | None, **more: object) -> dict:
        return {"name": name, "threshold": 0.7, "success": success, "score": score, "reason": reason,
                "strictMode": False, "evaluationModel": "gpt-4.1", "evaluationCost": 0.0012, **more}

    return {"testFile": "test_chatbot.py", "identifier": "run-42", "testPassed": 1, "testFailed": 1,
            "testCases": [
                {"name": "test_case_0", "input": "Hi", "actualOutput": "Hello!", "success": True, "order": 0,
                 "metricsData": [metric("Answer Relevancy", 0.9, True, "On topic."),
                                 metric("Correctness [GEval]", 0.75, True, "Mostly correct.")]},
                {"name": "test_case_1", "input": "2+2?", "actualOutput": "5", "success": False, "order": 1,
                 "metricsData": [metric("Answer Relevancy", 0.3, False, "Off."),
                                 metric("Correctness [GEval]", None, None, None, error="rate limited")]}],
            "conversationalTestCases": [
                {"name": "conv_0", "success": True, "turns": [{"role": "user", "content": "hi", "order": 0}],
                 "metricsData": [metric("Conversation Completeness", 1.0, True, "Done.")]}]}


def test_promptfoo_model_graded_assertions_become_rows(tmp_path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(promptfoo_results()), encoding="utf-8")
    table = judgelab.from_promptfoo(path)
    judgments.validate(table)
    assert table.attrs["skipped_assertions"] == ["contains"]
    assert set(table["rubric"]) == {"llm-rubric", "g-eval", "select-best"}
    rubric = table[table["rubric"] == "llm-rubric"].set_index("item_id")
    assert rubric.loc["case 0/p0/openai:gpt-4o", "score"] == 0.8 and rubric.loc["case 0/p0/openai:gpt-4o", "verdict"] == "pass"
    assert rubric.loc["case 0/p1/openai:gpt-4o", "verdict"] == "fail"
    assert rubric.loc["case 0/p0/openai:gpt-4o", "judge"] == "openai:gpt-4o-mini"  # the config's default grader
    assert rubric.loc["case 1/p0/openai:gpt-4o", "status"] == "api_error"
    geval = table[table["rubric"] == "g-eval"]
    assert set(geval["criterion"]) == {"coherence"} and set(geval["judge"]) == {"anthropic:claude-3-5-haiku"}
    assert sorted(table.loc[table["rubric"] == "select-best", "verdict"]) == ["best", "not_best"]
    source = judgments.detail(table.iloc[0])["imported_from"]
    assert source == {"tool": "promptfoo", "version": "0.120.0", "file": str(path), "run_id": "eval-abc-2026"}


def test_deepeval_metrics_become_rows(tmp_path) -> None:
    path = tmp_path / "test_run_20261126.json"
    path.write_text(json.dumps(deepeval_run()), encoding="utf-8")
    table = judgelab.from_deepeval(path)
    judgments.validate(table)
    assert len(table) == 5 and set(table["judge"]) == {"gpt-4.1"}
    row = table.set_index(["item_id", "rubric"])
    assert row.loc[("test_case_0", "Correctness [GEval]"), "score"] == 0.75
    assert row.loc[("test_case_1", "Answer Relevancy"), "verdict"] == "fail"
    assert row.loc[("test_case_1", "Correctness [GEval]"), "status"] == "api_error"
    assert "rate limited" in row.loc[("test_case_1", "Correctness [GEval]"), "unscored_reason"]
    assert judgments.detail(row.loc[("conv_0", "Conversation Completeness")].to_dict())["conversational"] is True
    assert judgments.detail(table.iloc[0])["threshold"] == 0.7 and table["cost_usd"].iloc[0] == 0.0012


@pytest.mark.parametrize(("reader", "content", "said"), [
    ("from_promptfoo", "{}", "has no 'results'"),
    ("from_promptfoo", json.dumps({"results": {"results": "many"}}), "results.results is a str"),
    ("from_deepeval", json.dumps({"testCases": [{"name": "a", "metricsData": [{"score": 1}]}]}), "has no 'name'"),
    ("from_deepeval", json.dumps(promptfoo_results()), "neither testCases"),
    ("from_promptfoo", json.dumps(deepeval_run()), "has no 'results'"),
    ("from_deepeval", "[1, 2", "is not JSON"),
])
def test_a_foreign_or_malformed_file_is_one_sentence(tmp_path, reader: str, content: str, said: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportFileError, match=said) as caught:
        getattr(judgelab, reader)(path)
    assert "\n" not in str(caught.value)


def _mutations(data: object, rng: random.Random, n: int) -> object:
    """``data`` with ``n`` random changes: a key deleted, a value replaced by one of another type, a list emptied."""
    data = copy.deepcopy(data)
    junk = [None, 0, -1.5, float("nan"), "", "x", True, [], {}, [1, "a"], {"a": None}]
    for _ in range(n):
        spots: list[tuple[object, object]] = []
        stack = [data]
        while stack:
            node = stack.pop()
            keys = list(node) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
            for k in keys:
                spots.append((node, k))
                stack.append(node[k])  # type: ignore[index]
        if not spots:
            break
        node, key = rng.choice(spots)
        if isinstance(node, dict) and rng.random() < 0.4:
            del node[key]
        else:
            node[key] = rng.choice(junk)  # type: ignore[index]
    return data


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["from_promptfoo", "from_deepeval"]), st.integers(0, 2**32 - 1), st.integers(1, 4),
       st.booleans())
def test_generated_malformed_files_end_in_one_sentence_never_a_traceback(tmp_path, reader, seed, n, truncate) -> None:
    """Invariant: a results file with keys deleted, values of the wrong type or a truncated text either imports as
    a valid judgments table or raises a JudgelabError of one sentence; no other exception escapes."""
    rng = random.Random(seed)
    data = _mutations(promptfoo_results() if reader == "from_promptfoo" else deepeval_run(), rng, n)
    text = json.dumps(data)
    if truncate:
        text = text[: rng.randrange(len(text))]
    path = tmp_path / f"gen-{seed}.json"
    path.write_text(text, encoding="utf-8")
    try:
        table = getattr(judgelab, reader)(path)
    except JudgelabError as exc:
        assert "\n" not in str(exc)
    else:
        judgments.validate(table)
