"""Each publisher's convention, by name, against the publisher's own definition.

- LLMBar (policy "tie"): every released result.json, imported through ``from_frame`` (not the LLMBar
  loader), reproduces its published statistics.json counts;
- JudgeBench (policy "net"): seeded constructed tables with ties, unscored verdicts and both orders in
  JudgeBench's own encoding ("A>B" / "B>A" / "A=B", the second order in shown labels), scored by a
  transcription of the rule in its ``utils/metrics.py`` (written here from its description);
- G-Eval (``aggregate_repeats(unscored_as=0)``): mean of 20 samples with an unreadable one scored 0, then
  the per-document Spearman averaged over documents where both sides vary (``meta_eval_summeval.py``);
- MT-Bench (``pairwise_agreement``): the judge's vote paired with every human vote, with and without ties
  (FastChat ``compute_agreement.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from judgelab import stats
from judgelab.datasets import from_frame, llmbar_published_statistics, openqa
from judgelab.judgments import aggregate_repeats, fill_unscored, make_table, validate
from judgelab.stats.pairwise import PairwiseInputError, pairwise_agreement
from tests.datasets.test_llmbar import RELEASED

# RELEASED: every (split, judge, strategy) with a result.json, found at collection time by the LLMBar tests.
# A spread of splits, judges and strategies runs always; the other folders with the slow tests (~0.2 s each)
QUICK = {("LLMBar/Natural", "GPT-4", "Vanilla"), ("LLMBar/Adversarial/GPTInst", "ChatGPT", "CoT"),
         ("LLMBar/Adversarial/Manual", "ChatGPT", "Rating"), ("Processed/FairEval", "GPT-4", "Metrics_Reference"),
         ("LLMBar/Natural", "GPT-4", "Swap_CoT")}
LLMBAR_CASES = [pytest.param(*c, id="/".join(c), marks=() if c in QUICK else pytest.mark.slow) for c in RELEASED]


# ---------------------------------------------------------------------------------------------------- LLMBar

def _llmbar_rows(folder: Path) -> pd.DataFrame:
    """result.json + dataset.json as a plain long frame: one row per item and order, LLMBar's "1"/"2" labels."""
    dataset = json.loads((folder.parents[2] / "dataset.json").read_text(encoding="utf-8"))
    results = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    rows = []
    for index, (item, judged) in enumerate(zip(dataset, results, strict=True)):
        for swap in (False, True):
            rows.append({"item": index, "swap": swap, "winner": judged["results"][-1][f"swap = {swap}"]["winner"],
                         "label": item["label"], "judge": folder.parent.name})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("split", "judge", "strategy"), LLMBAR_CASES)
def test_llmbar_tie_policy_reproduces_every_statistics_json_through_from_frame(
        data_dir: Path, split: str, judge: str, strategy: str) -> None:
    folder = data_dir / "LLMBar" / "Dataset" / split / "evaluators" / judge / strategy
    rows = _llmbar_rows(folder)
    # LLMBar writes both orders' winners in the ORIGINAL labels ("1" = output_1); null = unreadable
    table = from_frame(rows, item_id="item", judge="judge", winner="winner", condition="swap", gold="label",
                       condition_values={False: "original", True: "swapped"}, winner_in="original",
                       winner_values={"1": "A", "2": "B"})
    acc = stats.pairwise_accuracy(table, policy="tie", n_resamples=20).set_index("metric")
    published = llmbar_published_statistics(split, judge, strategy, data_dir=data_dir)
    for field, metric in {"correct_False": "accuracy_original", "correct_True": "accuracy_swapped",
                          "correct_both": "correct_both", "equal": "position_consistency"}.items():
        assert (acc.loc[metric, "n_correct"], acc.loc[metric, "n"]) == (published[f"{field}_count"],
                                                                         published[f"{field}_n"]), field
    assert acc.loc["accuracy_mean", "estimate"] * 100 == pytest.approx(published["correct_average_percent"], abs=1e-9)


def test_the_quick_llmbar_folders_are_released() -> None:
    assert QUICK <= set(RELEASED)


# ---------------------------------------------------------------------------------------------------- JudgeBench

def _judgebench_accuracy(pairs: list[dict]) -> float:
    """JudgeBench's reverse-order metric, from its definition: the first judgment's decision and the FLIPPED
    second one each count +1 when equal to the label, -1 when equal to the flipped label; a pair is correct
    when the count is positive; the denominator is every pair."""
    def flip(decision: str | None) -> str | None:
        return {"A>B": "B>A", "B>A": "A>B"}.get(decision, decision) if decision is not None else None

    correct = 0
    for pair in pairs:
        counter = 0
        for decision in (pair["first"], flip(pair["second"])):
            if decision == pair["label"]:
                counter += 1
            elif decision == flip(pair["label"]):
                counter -= 1
        correct += counter > 0
    return correct / len(pairs)


def _judgebench_pairs(seed: int, n: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    decisions = np.array(["A>B", "B>A", "A=B", None], dtype=object)
    labels = ["A>B", "B>A"] if seed % 2 else ["A>B", "B>A", "A=B"]  # odd seeds: JudgeBench's own (no tie gold)
    return [{"pair": f"p{k}", "label": labels[rng.integers(len(labels))],
             "first": decisions[rng.choice(4, p=[0.45, 0.35, 0.12, 0.08])],
             "second": decisions[rng.choice(4, p=[0.4, 0.4, 0.12, 0.08])]} for k in range(n)]


@pytest.mark.parametrize("seed", range(8))
def test_net_policy_is_judgebench_rule(seed: int) -> None:
    pairs = _judgebench_pairs(seed, 60 + 20 * seed)
    long = pd.DataFrame([{"pair": p["pair"], "judge": "j", "order": order, "decision": p[key], "label": p["label"]}
                         for p in pairs for order, key in (("original", "first"), ("swapped", "second"))])
    # the second judgment is in the labels as shown (JudgeBench flips it): winner_in="shown"
    table = from_frame(long, item_id="pair", judge="judge", winner="decision", condition="order", gold="label")
    res = stats.pairwise_accuracy(table, policy="net", n_resamples=20).set_index("metric")
    assert res.loc["accuracy_net", "estimate"] == pytest.approx(_judgebench_accuracy(pairs), abs=1e-12)
    assert res.loc["accuracy_net", "n"] == len(pairs)  # every pair in the denominator
    ref = sps.binomtest(int(res.loc["accuracy_net", "n_correct"]), len(pairs)).proportion_ci(method="exact")
    assert (res.loc["accuracy_net", "ci_low"], res.loc["accuracy_net", "ci_high"]) == pytest.approx((ref.low, ref.high))
    wrong = stats.pairwise_accuracy(table, policy="wrong", n_resamples=20).set_index("metric")
    assert res.loc["accuracy_original", "estimate"] == wrong.loc["accuracy_original", "estimate"]
    # JudgeBench's single-order number: first decision == label over every pair
    single = np.mean([p["first"] == p["label"] for p in pairs])
    assert res.loc["accuracy_original", "estimate"] == pytest.approx(single)


@pytest.mark.parametrize("seed", range(4))
def test_by_nothing_reads_the_table_as_one_group(seed: int) -> None:
    """Invariant (seeded tables of one judge): by=() asks the same question as the default grouping, whose
    run and judge columns then hold one value each -- the same numbers, without the grouping columns."""
    pairs = _judgebench_pairs(seed, 40)
    long = pd.DataFrame([{"pair": p["pair"], "judge": "j", "order": order, "decision": p[key], "label": p["label"]}
                         for p in pairs for order, key in (("original", "first"), ("swapped", "second"))])
    table = from_frame(long, item_id="pair", judge="judge", winner="decision", condition="order", gold="label")
    grouped = stats.pairwise_accuracy(table, policy="tie", n_resamples=50, seed=seed)
    whole = stats.pairwise_accuracy(table, policy="tie", n_resamples=50, seed=seed, by=())
    pd.testing.assert_frame_equal(whole, grouped.drop(columns=["run_id", "judge"]), check_like=True)


def test_net_policy_on_a_hand_table() -> None:
    #          right+right  right+tie   right+wrong  tie+none     wrong+wrong
    first = ["A>B", "A>B", "A>B", "A=B", "B>A"]
    second = ["B>A", "A=B", "A>B", None, "A>B"]  # shown labels: "B>A" in the swapped order = original A>B
    pairs = [{"pair": f"p{k}", "label": "A>B", "first": f, "second": s} for k, (f, s) in
             enumerate(zip(first, second, strict=True))]
    assert _judgebench_accuracy(pairs) == pytest.approx(2 / 5)
    long = pd.DataFrame([{"pair": p["pair"], "judge": "j", "order": o, "decision": p[k], "label": p["label"]}
                         for p in pairs for o, k in (("original", "first"), ("swapped", "second"))])
    table = from_frame(long, item_id="pair", judge="judge", winner="decision", condition="order", gold="label")
    row = stats.pairwise_accuracy(table, policy="net", n_resamples=20).set_index("metric").loc["accuracy_net"]
    assert (row["n_correct"], row["n"]) == (2, 5)
    assert "= 0: 2" in row["note"] and "< 0: 1" in row["note"]


# ---------------------------------------------------------------------------------------------------- G-Eval

def test_g_eval_unscored_as_zero_then_per_document_correlation() -> None:
    rng = np.random.default_rng(5)
    rows, samples_by_summary, human = [], {}, {}
    for doc in range(12):
        for system in range(6):
            item = f"d{doc}-s{system}"
            quality = rng.integers(1, 6)
            human[item] = float(np.clip(quality + rng.normal(0, 0.7), 1, 5))
            samples = []
            for r in range(20):
                text = str(int(np.clip(quality + rng.integers(-1, 2), 1, 5))) if rng.random() > 0.1 else "N/A"
                samples.append(text)
                row = {"item_id": item, "judge": "g", "rubric": "geval", "criterion": "coherence",
                       "condition": "original", "repeat": r, "doc": f"d{doc}", "raw_output": text}
                row |= ({"score": float(text)} if text != "N/A" else
                        {"status": "parse_error", "unscored_reason": "no leading number"})
                rows.append(row)
            samples_by_summary[item] = samples
            rows.append({"item_id": item, "judge": "human", "rubric": "geval", "criterion": "coherence",
                         "condition": "original", "score": human[item], "doc": f"d{doc}"})
    table = validate(make_table(rows))

    # G-Eval's meta-evaluation, from its definition: score = mean over samples, unparsed = 0; Spearman per
    # document, skipping documents where either side is constant; the mean over the documents kept
    def parse(text: str) -> float:
        return float(text) if text[:1].isdigit() else 0.0

    per_doc = []
    for doc in range(12):
        items = [f"d{doc}-s{s}" for s in range(6)]
        pred = [np.mean([parse(t) for t in samples_by_summary[i]]) for i in items]
        gold = [human[i] for i in items]
        if len(set(pred)) > 1 and len(set(gold)) > 1:
            per_doc.append(sps.spearmanr(pred, gold)[0])
    expected = float(np.mean(per_doc))

    averaged = aggregate_repeats(table[table["judge"] == "g"], unscored_as=0)
    both = make_table(pd.concat([averaged, table[table["judge"] == "human"]], ignore_index=True))
    res = stats.group_level_correlation("g", "human", "doc", data=both, n_resamples=50)
    assert res["estimate"].item() == pytest.approx(expected, abs=1e-12)
    excluded = aggregate_repeats(table[table["judge"] == "g"])  # judgelab's default: unreadable samples left out
    assert int(excluded["n_unscored_excluded"].sum()) == int(averaged["n_counted_as"].sum()) > 0


# ---------------------------------------------------------------------------------------------------- MT-Bench

def _mtbench_agreement(judge: dict[str, str], humans: dict[str, list[str]], ban_ties: bool) -> tuple[int, int]:
    """FastChat compute_agreement (gpt4-pair vs human): the judge's one vote against each human vote; with
    ban_ties, pairs where either vote is a tie are skipped; two ties agree."""
    agree = total = 0
    for key, vote in judge.items():
        if key not in humans or (ban_ties and "tie" in vote):
            continue
        for h in humans[key]:
            if ban_ties and "tie" in h:
                continue
            total += 1
            agree += ("tie" in vote and "tie" in h) or vote == h
    return agree, total


def test_pairwise_agreement_is_mt_bench_with_and_without_ties() -> None:
    rng = np.random.default_rng(11)
    votes = ["model_a", "model_b", "tie", "tie (bothbad)"]
    judge = {f"q{k}": votes[rng.choice(4, p=[0.4, 0.4, 0.15, 0.05])] for k in range(80)}
    humans = {k: [votes[rng.choice(4, p=[0.42, 0.38, 0.12, 0.08])] for _ in range(rng.integers(1, 4))]
              for k in judge if rng.random() < 0.9}
    rows = [{"q": k, "who": "gpt-4", "vote": v} for k, v in judge.items()]
    rows += [{"q": k, "who": f"human:e{n}", "vote": v} for k, hs in humans.items() for n, v in enumerate(hs)]
    table = from_frame(pd.DataFrame(rows), item_id="q", judge="who", winner="vote")
    experts = sorted({r["who"] for r in rows if r["who"].startswith("human")})
    res = pairwise_agreement(table, "gpt-4", experts, n_resamples=200).set_index("policy")
    for policy, ban in (("ties included", False), ("ties excluded", True)):
        agree, total = _mtbench_agreement(judge, humans, ban)
        assert res.loc[policy, "n"] == total
        assert res.loc[policy, "estimate"] == pytest.approx(agree / total, abs=1e-12)
        assert res.loc[policy, "ci_low"] < res.loc[policy, "estimate"] < res.loc[policy, "ci_high"]
    assert res.loc["ties excluded", "n_ties_excluded"] == res.loc["ties included", "n"] - res.loc["ties excluded", "n"]


def test_pairwise_agreement_unscored_and_duplicate_verdicts() -> None:
    rows = [{"q": "a", "who": "j", "vote": "A"}, {"q": "b", "who": "j", "vote": None},
            {"q": "a", "who": "h", "vote": "A"}, {"q": "b", "who": "h", "vote": "TIE"}]
    table = from_frame(pd.DataFrame(rows), item_id="q", judge="who", winner="vote")
    out = pairwise_agreement(table, "j", "h", ties="include", n_resamples=50).iloc[0]
    assert (out["estimate"], out["n"], out["n_unscored_excluded"]) == (1.0, 1, 1)
    as_tie = pairwise_agreement(table, "j", "h", ties="include", unscored="tie", n_resamples=50).iloc[0]
    assert (as_tie["estimate"], as_tie["n"]) == (1.0, 2)
    both = from_frame(pd.DataFrame(rows + [{"q": "a", "who": "j", "vote": "B", "order": "swapped"}]).fillna(
        {"order": "original"}), item_id="q", judge="who", winner="vote", condition="order")
    with pytest.raises(stats.AmbiguousQuestionError, match=r"2 conditions \(original, swapped\): pass "
                       r"by=\('criterion', 'condition'\)"):
        pairwise_agreement(both, "j", "h", condition=None)
    assert pairwise_agreement(both, "j", "h", ties="exclude", n_resamples=50)["n"].item() == 1
    with pytest.raises(PairwiseInputError, match="ties must be"):
        pairwise_agreement(table, "j", "h", ties="drop")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------- OpenQA-eval

def test_openqa_unreadable_reply_counted_as_no_reproduces_the_published_numbers(data_dir: Path) -> None:
    """Published (Kamalloo et al. 2023): GPT-4 vs human 84.8% agreement, Cohen's kappa .695. Their scorer reads a
    reply that starts with neither yes nor no as "no"; judgelab keeps those 10 replies unscored unless asked."""
    table = openqa("gpt-4", data_dir=data_dir).table
    counted = fill_unscored(table, "no", column="verdict", judge="gpt-4")
    assert int(counted["unscored_reason"].str.startswith("counted as 'no'").fillna(False).sum()) == 10
    agreement = stats.percent_agreement("gpt-4", "human", data=counted, value="verdict", n_resamples=50)
    kappa = stats.cohen_kappa("gpt-4", "human", data=counted, value="verdict", n_resamples=50)
    assert agreement["n"].item() == kappa["n"].item() == 1490
    assert round(agreement["estimate"].item() * 100, 1) == 84.8
    assert int(kappa["estimate"].item() * 1000) / 1000 == 0.695  # 0.69598: the paper truncates
    honest = stats.cohen_kappa("gpt-4", "human", data=table, value="verdict", n_resamples=50)
    assert honest["n"].item() == 1480
