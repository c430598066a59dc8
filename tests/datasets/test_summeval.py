"""SummEval + LLM_summeval: counts, human means, per-style score parsing and parse rates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab.datasets import DataNotFoundError, DatasetResult, summeval, summeval_combinations
from judgelab.datasets.summeval_parsing import parse_mcq, parse_rts, parse_stareval

# (judge, method) -> lowest acceptable share of parsed outputs; the measured rates are printed
EXPECTED_COMBOS = {
    ("gpt-3.5-turbo-0301", "rts"),
    ("gpt-3.5-turbo-0301", "altrts"),
    ("gpt-3.5-turbo-0301", "mcq"),
    ("gpt-3.5-turbo-0301", "altmcq"),
    ("gpt-3.5-turbo-0301", "stareval"),
    ("llama-2-7b-chat-hf", "rts"),
    ("llama-2-13b-chat-hf", "rts"),
    ("llama-2-70b-chat-hf", "rts"),
}


@pytest.fixture(scope="module")
def gpt_rts(data_dir: Path) -> DatasetResult:
    return summeval("gpt-3.5-turbo-0301", "rts", data_dir=data_dir)


def test_counts_and_human_means(gpt_rts: DatasetResult, data_dir: Path) -> None:
    items = gpt_rts.items
    assert len(items) == 1200
    assert items["system"].nunique() == 12 and items["document_id"].nunique() == 100
    assert (items.groupby("system").size() == 100).all()
    t = gpt_rts.table
    human = t[t["judge"] == "human"]
    assert len(human) == 1200 * 4 and human["score"].notna().all()
    experts = t[t["judge"].str.startswith("human:expert_")]
    mean_of_experts = experts.groupby(["item_id", "criterion"])["score"].mean()
    pd.testing.assert_series_equal(
        human.set_index(["item_id", "criterion"])["score"].sort_index().astype(float),
        mean_of_experts.sort_index().astype(float),
        check_names=False,
    )
    # cross-check one summary against the raw annotation file
    first = json.loads(
        (data_dir / "LLM_summeval/model_output_annotations/M8_outputs_annotations.jsonl")
        .read_text()
        .splitlines()[0]
    )
    expected = np.mean([e["coherence"] for e in first["expert_annotations"]])
    got = human[(human["item_id"] == f"{first['id']}:M8") & (human["criterion"] == "coherence")][
        "score"
    ].item()
    assert got == pytest.approx(expected)
    assert {"system", "document_id"} <= set(t.columns)


def test_every_judge_and_method_loads_with_its_parse_rate(data_dir: Path) -> None:
    combos = summeval_combinations(data_dir)
    assert set(zip(combos["judge"], combos["method"], strict=True)) == EXPECTED_COMBOS
    rates = []
    for judge, method in sorted(EXPECTED_COMBOS):
        result = summeval(judge, method, data_dir=data_dir, human=False)
        rows = result.table
        assert set(rows["judge"]) == {judge}
        assert len(rows) == 1200 * 4  # one row per summary and criterion, scored or not
        scored = rows["status"] == "ok"
        assert rows.loc[scored, "score"].between(1, 5).all()
        assert rows.loc[~scored, "score"].isna().all() and rows.loc[~scored, "unscored_reason"].notna().all()
        rates.append((judge, method, int(scored.sum()), len(rows)))
    print("\nparse rates (judge, method, parsed, total):")
    for judge, method, ok, total in rates:
        print(f"  {judge:22s} {method:9s} {ok}/{total} = {ok / total:.4f}")
    assert all(ok / total >= 0.995 for _, _, ok, total in rates)


def test_duplicate_outputs_keep_the_last_like_the_authors_or_all_as_repeats(data_dir: Path) -> None:
    last = summeval("gpt-3.5-turbo-0301", "altmcq", data_dir=data_dir, criteria=("relevance",))
    every = summeval(
        "gpt-3.5-turbo-0301", "altmcq", data_dir=data_dir, criteria=("relevance",), duplicates="all"
    )
    judge_last = last.table[last.table["judge"] == "gpt-3.5-turbo-0301"]
    judge_all = every.table[every.table["judge"] == "gpt-3.5-turbo-0301"]
    assert len(judge_last) == 1200 and len(judge_all) == 1212  # M8 lists 10 summaries twice, M9 two
    assert judge_all["repeat"].max() == 1


def test_unknown_judge_or_method_is_a_clear_error(data_dir: Path) -> None:
    with pytest.raises(DataNotFoundError, match="available: rts"):
        summeval("llama-2-7b-chat", "mcq", data_dir=data_dir)  # the -hf suffix is optional
    with pytest.raises(DataNotFoundError, match="no LLM_summeval outputs for judge 'gpt-5'"):
        summeval("gpt-5", data_dir=data_dir)
    with pytest.raises(ValueError, match="unknown LLM_summeval method"):
        summeval("gpt-3.5-turbo-0301", "h2h", data_dir=data_dir)


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("The summary lacks coherence ..., resulting in a score of 2.", 2),
        ("... clear and concise. Score: 3/5.", 3),
        (" Consistency Score: 4/5\nThe summary is generally consistent", 4),
        ("... Final score: 5 (perfect consistency)", 5),
        ("... Score: 4.5/5.", 4.5),
        ("... disfluency, so it scores a one.", 1),
        ("Ross Barkley has scored 15 penalties ... I would score the consistency as 2 out of 5.", 2),
        ("Consistency rating: 4/5\n\nThe summary ...\n\nFinal score: 8/10", 4),
        ("... making it a perfect 5 in terms of coherence.", 5),
        ("The Summary is a perfect relevance (5) as it accurately ...", 5),
        ("I would score the summary as follows:\n\nFluency: 3\n\nThe summary is well-written", 3),
    ],
)
def test_rts_parser_reads_explicit_scores(text: str, score: float) -> None:
    assert parse_rts(text).score == score


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty output"),
        ("The summary is clear and well organised.", "no score found"),
        ("Score: 8/10", "on a scale to 10, not 1-5"),
        ("Score: 7", "outside the scale 1-5"),
        ("Kane scored in the 87th minute and has scored 15 penalties.", "no score found"),
    ],
)
def test_rts_parser_refuses_to_guess(text: str, reason: str) -> None:
    parsed = parse_rts(text)
    assert parsed.score is None and reason in (parsed.reason or "")


def test_mcq_and_star_parsers() -> None:
    assert parse_mcq("D").score == 4 and parse_mcq(" (b) ").score == 2 and parse_mcq("Answer: E.").score == 5
    assert parse_mcq("F").score is None and "no option letter" in (parse_mcq("Maybe C").reason or "")
    assert parse_stareval("Four stars. The summary covers the main points.").score == 4
    assert parse_stareval("1 star").score == 1 and parse_stareval("3 out of 5 stars").score == 3
    assert parse_stareval("Three stars, but could be five stars with more detail.").score == 3
    bad = parse_stareval("A solid summary.")
    assert bad.score is None and "no score found" in (bad.reason or "")
    assert parse_stareval("7 stars").score is None
