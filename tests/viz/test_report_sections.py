"""The report as a researcher reads it: statistics frames as paper tables, accuracy against gold rows, fractional
scores binned, a data-set report bounded in size and saying what it cut. Released LLMBar and SummEval data."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import judgelab
from judgelab.viz.report import MAX_BYTES, report
from judgelab.viz.report_sections import accuracy_against_gold, half_point_bins, score_bins, score_labels


def test_report_of_statistics_frames_and_one_sentence_for_other_frames(tmp_path: Path) -> None:
    results = pd.DataFrame({"metric": ["spearman_rho", "spearman_rho"], "judge": ["a", "b"],
                            "estimate": [0.44364, 0.12], "ci_low": [0.37725, 0.05], "ci_high": [0.50717, 0.2],
                            "p_value": [5.0e-59, 0.0321], "n": [1200, 1200], "ci_level": [0.95, 0.95],
                            "method": ["Spearman; CI: percentile bootstrap 95%, 200 resamples"] * 2})
    text = judgelab.report(results, tmp_path / "stats.html").read_text()
    assert "[0.377, 0.507]" in text and "&lt;0.001" in text and "0.032" in text and "5e-59" not in text
    assert text.count("data:image/png;base64,") == 1 and "<script" not in text
    both = judgelab.report({"rho": results, "again": results}, tmp_path / "two.html").read_text()
    assert "<h2>rho</h2>" in both and "<h2>again</h2>" in both
    with pytest.raises(judgelab.JudgelabError) as refused:
        judgelab.report(pd.DataFrame({"x": [1], "y": [2]}), tmp_path / "no.html")
    message = str(refused.value)
    assert ". " not in message.replace("...", "") and "\n" not in message  # one sentence
    assert "result frame" in message and "judgments table" in message and "(its columns: x, y)" in message


def test_accuracy_against_gold_on_released_llmbar(data_dir: Path, tmp_path: Path) -> None:
    """The report's accuracy equals the share of the judge's scored winners equal to the gold winner, per order."""
    from judgelab.datasets import llmbar

    data = llmbar("Natural", "ChatGPT", "Vanilla_NoRules", data_dir=data_dir)
    accuracy = accuracy_against_gold(data.table)
    table = data.table
    gold = table[table["judge"] == "gold"].set_index("item_id")["winner"]
    for row in accuracy.itertuples():
        judged = table[(table["judge"] == row.judge) & (table["condition"] == row.condition)
                       & (table["status"] == "ok") & table["winner"].notna()]
        expected = (judged["winner"].to_numpy() == judged["item_id"].map(gold).to_numpy()).mean()
        assert row.estimate == pytest.approx(expected) and row.n == len(judged)
        assert row.ci_low <= row.estimate <= row.ci_high
    assert set(accuracy["condition"]) == {"original", "swapped"}
    text = report(data, tmp_path / "bar.html").read_text()
    assert "<h2 id='accuracy'>Accuracy against gold</h2>" in text


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.sampled_from([1, 4 / 3, 5 / 3, 2, 7 / 3, 8 / 3, 3, 10 / 3, 11 / 3, 4, 13 / 3, 14 / 3, 5]),
                       min_size=1, max_size=60),
       stretch=st.sampled_from([1.0, 10.0]))
def test_fractional_scores_fall_in_exactly_one_bin(values: list[float], stretch: float) -> None:
    """Invariant: integer scores with few levels keep one bar each; otherwise every score lands in the one bin that
    holds it: half-point bins named by their centre c hold [c - 0.25, c + 0.25) (whole-number scales), other bins
    [lo, hi) (the last closed), at most 12 bins."""
    scores = pd.Series(values) * stretch
    edges = score_bins(scores)
    labels = score_labels(scores, edges)
    if edges is None:
        assert all(float(v).is_integer() for v in scores) or scores.nunique() == 1
        return
    assert len(edges) - 1 <= 12
    for value, label in zip(scores, labels, strict=True):
        if half_point_bins(edges):
            assert float(label) - 0.25 <= value < float(label) + 0.25
        else:
            lo, hi = (float(x.replace(",", "")) for x in re.findall(r"[-\d.,]+\d", label))
            tolerance = 5e-3 * max(1.0, abs(hi))  # the labels show 3 significant digits
            assert lo - tolerance <= value <= hi + tolerance


@pytest.mark.slow
def test_summeval_dataset_report_is_bounded_and_says_what_it_cut(data_dir: Path, tmp_path: Path) -> None:
    from judgelab.datasets import summeval

    data = summeval("gpt-3.5-turbo-0301", data_dir=data_dir)
    path = report(data, tmp_path / "se.html")
    text = path.read_text()
    assert path.stat().st_size <= MAX_BYTES
    top = text[: text.index("<h2 id='status'>")]
    listed = re.search(r"shows the first ([\d,]+) of ([\d,]+) judgments \(the report is capped at 5.0 MB", top)
    assert listed and int(listed.group(1).replace(",", "")) < int(listed.group(2).replace(",", ""))
    assert "(scores binned: some are fractional)" in text
    counts = text[text.index("<h3>Score counts"):]
    header = re.findall(r"<th style[^>]*>(.*?)</th>", counts[: counts.index("</thead>")])
    assert header[:3] == ["judge", "criterion", "condition"] and header[3:] == [f"{c:g}" for c in np.arange(1, 5.5, 0.5)]
