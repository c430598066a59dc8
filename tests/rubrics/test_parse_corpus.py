"""The parse corpus: every released raw output judgelab reads (LLMBar, LLM_summeval, OpenQA-eval), parsed
by judgelab and compared with the publisher's own parse; see tests/rubrics/parse_corpus/corpus.py.

The table it asserts is printed by ``python -m tests.rubrics.parse_corpus.corpus``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judgelab.datasets import llmbar, summeval
from tests.rubrics.parse_corpus.corpus import (
    Record,
    Summary,
    is_disagreement,
    load_checked,
    records,
    summarize,
    table,
)

pytestmark = pytest.mark.slow  # ~20 s: 66,000 replies read twice

# n per source: a change means the shared data changed, and the verified rows must be re-read
N = {
    "LLMBar ChatGPT verdicts": 8568, "LLMBar ChatGPT ratings 0-9": 1676, "LLMBar GPT-4 verdicts": 10424,
    "LLMBar GPT-4 ratings 0-9": 4190, "LLM_summeval gpt-3.5 altmcq": 4812, "LLM_summeval gpt-3.5 altrts": 4800,
    "LLM_summeval gpt-3.5 mcq": 5100, "LLM_summeval gpt-3.5 rts": 4800, "LLM_summeval gpt-3.5 stareval": 4800,
    "LLM_summeval llama-2-13b rts": 4800, "LLM_summeval llama-2-70b rts": 4800, "LLM_summeval llama-2-7b rts": 4800,
    "OpenQA gpt-4": 1490, "OpenQA text-davinci-003": 1490,
}


@pytest.fixture(scope="module")
def corpus(data_dir: Path) -> list[Record]:
    return records(data_dir)


@pytest.fixture(scope="module")
def summaries(corpus: list[Record]) -> dict[str, Summary]:
    result = summarize(corpus, load_checked())
    print("\n" + table(result))
    return result


def test_every_source_is_read_in_full(summaries: dict[str, Summary]) -> None:
    assert {s: summaries[s].n for s in summaries} == N


def test_no_misreads_where_the_publishers_parse_is_known(summaries: dict[str, Summary]) -> None:
    """Every disagreement with the publisher was read by hand and judgelab's value is the text's."""
    assert {s: v.misreads for s, v in summaries.items() if v.misreads} == {}


def test_coverage_is_at_least_99_5_percent_on_llmbar_and_summeval(summaries: dict[str, Summary]) -> None:
    low = {s: round(v.coverage, 4) for s, v in summaries.items() if not s.startswith("OpenQA") and v.coverage < 0.995}
    assert low == {}
    # OpenQA's GPT-4 opens 10 of 1,490 replies with neither Yes nor No ("The candidate is partially correct"):
    # the paper's rule leaves them unparsed, and so does judgelab (the file's own reading is a human one)
    assert summaries["OpenQA gpt-4"].n - summaries["OpenQA gpt-4"].parsed == 10


def test_every_unparsed_reply_has_a_reason(corpus: list[Record]) -> None:
    unparsed = [r for r in corpus if r.ours is None]
    assert unparsed and all(r.reason for r in unparsed)
    reasons = {r.reason.split(":")[0].split(" (")[0] for r in unparsed}  # type: ignore[union-attr]
    assert reasons <= {"empty output", "no verdict found", "reply does not start with Yes or No", "score 10 is outside"
                       " the scale 0-9"}, reasons


def test_the_checked_file_matches_the_data(corpus: list[Record]) -> None:
    """No stale rows: each verified row exists, and the sampled agreements still agree."""
    by_key = {(r.source, r.file, r.key): r for r in corpus}
    checked = load_checked()
    assert len(checked) >= 300
    for key, row in checked.items():
        record = by_key[key]
        assert (row["publisher"] or None) == record.publisher, key
        if row["why"] == "agree":
            assert not is_disagreement(record) and row["expected"] == record.ours, key
        if row["span"]:
            assert row["span"][:40].lower() in " ".join(record.text.split()).lower(), key


def test_loaders_keep_the_unparsed_rows_with_their_reason(data_dir: Path) -> None:
    # LLMBar's rating replies "10" on its 0-9 scale: an unscored row naming the value, never a 9 or a drop
    table_ = llmbar("Natural", "ChatGPT", "Rating", data_dir=data_dir).table
    judge = table_[table_["judge"] == "ChatGPT"]
    unscored = judge[judge["status"] != "ok"]
    assert len(judge) == 2 * 100 and len(unscored) == 2
    assert unscored["unscored_reason"].str.contains("rating score_1 10 is outside the scale 0-9").all()
    # an empty completion (the provider's content filter) keeps its row and says so
    empty = llmbar("Adversarial/Manual", "GPT-4", "Vanilla_1shot", data_dir=data_dir).table
    reasons = empty.loc[empty["status"] != "ok", "unscored_reason"]
    assert len(reasons) == 2 and reasons.str.contains("empty output; the provider stopped it").all()


def test_summeval_loader_reads_what_the_corpus_reads(data_dir: Path, corpus: list[Record]) -> None:
    result = summeval("llama-2-70b-chat", "rts", data_dir=data_dir, human=False, criteria=("coherence",))
    t = result.table
    assert len(t) == 1200 and (t["status"] == "ok").all()
    details = [d if isinstance(d, dict) else json.loads(d) for d in t["detail"]]
    assert all(d["matched"] for d in details) and t["raw_output"].str.strip().astype(bool).all()
    ours = {(r.file.split("/")[-2].split("_")[1], r.text): float(r.ours) for r in corpus  # type: ignore[arg-type]
            if r.source == "LLM_summeval llama-2-70b rts" and r.file.endswith("coherence_rts.txt")}
    loaded = {(s, text): score for s, text, score in zip(t["system"], t["raw_output"], t["score"], strict=True)}
    assert all(ours[key] == score for key, score in loaded.items())
