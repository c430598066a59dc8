"""LLMBar (Zeng et al. 2024) redone from the released verdicts: accuracy, position consistency, length.

GPT-4 and ChatGPT judged each LLMBar pair in both presentation orders under several prompting
strategies. Per split x judge x strategy: accuracy against the gold label (mean of both orders,
items resampled), correct in both orders and position consistency (exact binomial CIs), under
LLMBar's convention that an unreadable verdict counts as a tie (``policy="tie"``). Length: a
logistic GLM of "chose output 1" on the length difference (words, per SD), the judges' verdicts
in both orders clustered by item, beside the same model fitted to the gold labels -- a judge whose
coefficient exceeds gold's rewards length beyond what the correct answers warrant.
"""

from __future__ import annotations

import os

import pandas as pd

from judgelab import stats
from judgelab.datasets import DatasetResult, llmbar, llmbar_combinations
from judgelab.judgments import scored
from judgelab.rubrics.parsing import word_count

__all__ = ["LLMBAR_JUDGES", "LLMBAR_SPLITS", "LLMBAR_STRATEGIES", "accuracy_table", "length_table", "load_runs",
           "sources"]

LLMBAR_SPLITS: tuple[str, ...] = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)
LLMBAR_JUDGES: tuple[str, ...] = ("GPT-4", "ChatGPT")
# The base prompt without and with LLMBar's rules, chain-of-thought, the full "Metrics + Reference"
# recipe, and Swap (GPT-4 only: a second round when the two orders disagree).
LLMBAR_STRATEGIES: tuple[str, ...] = ("Vanilla_NoRules", "Vanilla", "CoT", "Metrics_Reference", "Swap")


def load_runs(data_dir: str | os.PathLike[str] | None = None, *, splits: tuple[str, ...] = LLMBAR_SPLITS,
              judges: tuple[str, ...] = LLMBAR_JUDGES,
              strategies: tuple[str, ...] = LLMBAR_STRATEGIES) -> list[DatasetResult]:
    """Every released (split, judge, strategy) among those asked for; absent combinations are skipped."""
    combos = llmbar_combinations(data_dir)
    available = set(map(tuple, combos.loc[combos["has_result"], ["split", "judge", "strategy"]].to_numpy()))
    return [llmbar(s, j, st, data_dir=data_dir) for s in splits for j in judges for st in strategies
            if (s, j, st) in available]


def sources(runs: list[DatasetResult]) -> list[dict[str, str]]:
    src = runs[0].source
    return [{"repo": src.repo, "commit": src.commit, "license": src.license, "location": src.location}]


def _short(split: str) -> str:
    return split.rsplit("/", 1)[-1]


def accuracy_table(runs: list[DatasetResult], *, policy: str = "tie", n_resamples: int = stats.DEFAULT_RESAMPLES,
                   seed: int = 0) -> pd.DataFrame:
    """pairwise_accuracy per run, with split (short name), judge and strategy columns."""
    frames = []
    for run in runs:
        frame = stats.pairwise_accuracy(run.table, policy=policy, n_resamples=n_resamples, seed=seed)  # type: ignore[arg-type]
        frames.append(frame.assign(split=_short(run.notes["split"]), strategy=run.notes["strategy"]))
    out = pd.concat(frames, ignore_index=True)
    lead = ["split", "judge", "strategy", "metric", "estimate", "ci_low", "ci_high", "p_value", "n"]
    return out[lead + [c for c in out.columns if c not in lead]]


def length_table(runs: list[DatasetResult]) -> pd.DataFrame:
    """Length coefficient and length-controlled rate of choosing output 1, per judge x strategy (splits pooled).

    Judges: both orders' scored verdicts, cluster-robust by item; "gold": the dataset labels, once per item.
    """
    frames, gold_parts = [], []
    by_key: dict[tuple[str, str], list[DatasetResult]] = {}
    for run in runs:
        by_key.setdefault((run.notes["judge"], run.notes["strategy"]), []).append(run)
    for (judge, strategy), group in by_key.items():
        verdicts = []
        for run in group:
            lengths = run.items.set_index("item_id")[["output_1", "output_2"]].map(lambda t: word_count(str(t)))
            rows = scored(run.table)
            rows = rows[rows["judge"] == judge]
            verdicts.append(rows[["item_id", "winner"]].join(lengths, on="item_id"))
            if judge == LLMBAR_JUDGES[0] and strategy == group[0].notes["strategy"]:
                gold = run.table[run.table["judge"] == "gold"][["item_id", "winner"]].join(lengths, on="item_id")
                gold_parts.append(gold)
        data = pd.concat(verdicts, ignore_index=True).astype({"winner": object, "item_id": object})
        frame = stats.length_controlled_win_rate("winner", "output_1", "output_2", data=data, cluster="item_id")
        frames.append(frame.assign(judge=judge, strategy=strategy))
    if gold_parts:
        gold = pd.concat(gold_parts, ignore_index=True).drop_duplicates("item_id").astype(
            {"winner": object, "item_id": object})
        frame = stats.length_controlled_win_rate("winner", "output_1", "output_2", data=gold)
        frames.append(frame.assign(judge="gold", strategy="dataset labels"))
    out = pd.concat(frames, ignore_index=True)
    lead = ["judge", "strategy", "metric", "estimate", "ci_low", "ci_high", "p_value", "n"]
    return out[lead + [c for c in out.columns if c not in lead]]
