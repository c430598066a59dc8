"""Analysis-only probes on released judge data. The position probe on LLMBar's released GPT-4 / ChatGPT outputs must reproduce the
published position consistency (statistics.json "equal": verdict identical in both orders, an
unreadable verdict counting as its own value -- the probe's unscored="tie" policy)."""

from __future__ import annotations

import pytest

from judgelab import probes
from judgelab.datasets import llmbar
from judgelab.datasets.llmbar_published import llmbar_published_statistics

# A spread of splits, both judges, plain / CoT / Swap / Rating strategies, and folders whose
# outputs include unreadable verdicts (all 137 released folders agree; these keep the test short).
CASES = [
    ("LLMBar/Natural", "GPT-4", "Vanilla"),
    ("LLMBar/Natural", "GPT-4", "Swap_CoT"),
    ("LLMBar/Adversarial/GPTInst", "ChatGPT", "CoT"),
    ("LLMBar/Adversarial/Neighbor", "GPT-4", "Metrics_Reference"),
    ("LLMBar/Adversarial/Manual", "ChatGPT", "Rating"),
    ("LLMBar/Natural", "GPT-4", "Rating_Metrics_Reference"),
    ("Processed/FairEval", "GPT-4", "Metrics_Reference"),
    ("Processed/MT-Bench", "ChatGPT", "Vanilla_NoRules"),
]


@pytest.mark.parametrize("split, judge, strategy", CASES)
def test_consistency_rate_matches_published_equal_field(data_dir, split, judge, strategy):
    rating_winner = "as_published" if strategy.startswith("Rating") else "from_scores"
    data = llmbar(split, judge, strategy, data_dir=data_dir, rating_winner=rating_winner)
    published = llmbar_published_statistics(split, judge, strategy, data_dir=data_dir)
    result = probes.position.analyze(data.table, unscored="tie", n_resamples=200)
    row = result.metric("consistency_rate")
    assert row["n"] == published["equal_n"]
    assert round(row["estimate"] * row["n"]) == published["equal_count"]
    assert row["estimate"] * 100 == pytest.approx(published["equal_percent"], abs=0.05)
    # the calibrated sensitivity table scores every item against the gold labels
    assert set(result.details["sensitivity"]["policy"]) == {"tie", "drop", "first", "average"}
    assert "accuracy" in set(result.details["sensitivity"]["metric"])


def test_unscored_policy_changes_the_denominator(data_dir):
    data = llmbar("LLMBar/Adversarial/GPTInst", "ChatGPT", "CoT", data_dir=data_dir)
    unscored = int((data.table["status"] != "ok").sum())
    assert unscored > 0  # this folder holds unreadable verdicts
    as_tie = probes.position.analyze(data.table, unscored="tie", n_resamples=200).metric("consistency_rate")
    excluded = probes.position.analyze(data.table, unscored="exclude", n_resamples=200).metric("consistency_rate")
    assert excluded["n"] < as_tie["n"] and "excluded" in excluded["note"]


def test_analysis_only_positive_bias_on_summeval_reads_the_right_rows(data_dir):
    """Released judge outputs with human rows: the probe's mean difference is the plain mean of
    judge - human per criterion, and clustering by source document widens its interval."""
    from judgelab.datasets import summeval

    data = summeval("gpt-3.5-turbo-0301", data_dir=data_dir)
    t = data.table
    ok = t[t["status"] == "ok"]
    judge = ok[ok["judge"] == "gpt-3.5-turbo-0301"].set_index(["item_id", "criterion"])["score"]
    human = ok[ok["judge"] == "human"].set_index(["item_id", "criterion"])["score"]
    expected = (judge - human).dropna().astype(float).groupby(level="criterion").mean()
    plain = probes.positive_bias.analyze(t, n_resamples=300)
    documents = data.items.set_index("item_id")["document_id"]
    clustered = probes.positive_bias.analyze(t, cluster=documents, n_resamples=300)
    for criterion, value in expected.items():
        row = plain.metric("mean_difference", criterion)
        assert row["estimate"] == pytest.approx(value)
        wide = clustered.metric("mean_difference", criterion)
        assert wide["ci_high"] - wide["ci_low"] > row["ci_high"] - row["ci_low"]


def test_analysis_only_length_gives_the_length_controlled_win_rate_on_llmbar(data_dir):
    data = llmbar("LLMBar/Natural", "GPT-4", "Vanilla", data_dir=data_dir)
    res = probes.length.analyze(data.table, items=data.items, fields=("output_1", "output_2"))
    t = data.table
    verdicts = t[(t["judge"] == "GPT-4") & (t["condition"] == "original")]["winner"]
    raw = res.metric("raw_win_rate", "original")
    assert raw["n"] == len(verdicts) == 100
    assert raw["estimate"] == pytest.approx((verdicts == "A").mean())
    assert 0 < res.metric("length_controlled_win_rate", "original")["estimate"] < 1
    with pytest.raises(ValueError, match="no padded conditions"):
        probes.length.analyze(data.table)
