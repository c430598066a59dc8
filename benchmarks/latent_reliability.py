"""Latent-truth judge reliability on released data: each judge's accuracy estimated from the judges' agreement
alone, beside its actual accuracy against the human labels the model never sees.

    python -m benchmarks.latent_reliability                      # from the repo root; JUDGELAB_DATA_DIR set
    python -m benchmarks.latent_reliability --resamples 100 --methods dawid_skene one_coin
    python -m benchmarks.latent_reliability --only openqa

Three released data sets (:func:`judgelab.ensembles.latent_truth`, percentile bootstrap over items, each
resample refits the model):

- **OpenQA-eval**: GPT-4, text-davinci-003 and BEM say whether each of 1,490 answers is correct; actual = agreement
  with the human majority verdict.
- **LLMBar Natural**: GPT-4 and ChatGPT under five prompting strategies, each (judge, strategy) its own judge, on
  100 pairs in the original order; actual = agreement with the gold better output.
- **SummEval**: the four released judges' 1-5 scores per criterion as unordered labels (the models ignore the
  order); actual = exact agreement with expert 1's score (the expert mean is not a label).

Prints one table per data set: method, judge, estimated accuracy [CI], actual accuracy [CI], estimate - actual.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator

import pandas as pd

from judgelab.ensembles import latent_truth
from judgelab.judgments import make_table

DATA_DIR = os.environ.get("JUDGELAB_DATA_DIR")


def openqa_design() -> Iterator[tuple[str, pd.DataFrame, list[str], str, str]]:
    from judgelab.studies import openqa_study

    table = openqa_study.combined_table(openqa_study.load_judges(DATA_DIR))
    yield "OpenQA-eval", table, list(openqa_study.OPENQA_JUDGES), "verdict", openqa_study.HUMAN


def llmbar_design() -> Iterator[tuple[str, pd.DataFrame, list[str], str, str]]:
    from judgelab.datasets import llmbar
    from judgelab.datasets.sources import DataNotFoundError
    from judgelab.studies.llmbar_study import LLMBAR_JUDGES, LLMBAR_STRATEGIES

    parts, gold = [], None
    for strategy in LLMBAR_STRATEGIES:
        try:
            table = llmbar("Natural", list(LLMBAR_JUDGES), strategy, data_dir=DATA_DIR).table
        except DataNotFoundError as missing:  # LLMBar released only statistics.json for some (judge, strategy)
            print(f"left out: {missing}")
            continue
        judged = table[table["judge"].isin(LLMBAR_JUDGES)].copy()
        judged["judge"] = judged["judge"].astype(str) + "/" + strategy
        parts.append(judged)
        gold = table[~table["judge"].isin(LLMBAR_JUDGES)] if gold is None else gold
    table = make_table(pd.concat([*parts, gold], ignore_index=True))
    table = table[table["condition"] == "original"]
    judges = sorted(set(table["judge"].astype(str)) - {"gold"})
    yield "LLMBar Natural (original order)", table, judges, "winner", "gold"


def summeval_design() -> Iterator[tuple[str, pd.DataFrame, list[str], str, str]]:
    from judgelab.studies import summeval_study

    study = summeval_study.load_study(DATA_DIR)
    for criterion in ("coherence", "consistency", "fluency", "relevance"):
        part = study.table[study.table["criterion"] == criterion]
        yield f"SummEval {criterion}", part, list(study.judges), "score", "human:expert_1"


DESIGNS = {"openqa": openqa_design, "llmbar": llmbar_design, "summeval": summeval_design}


def reliability(table: pd.DataFrame, judges: list[str], value: str, gold: str, methods: list[str],
                n_resamples: int) -> pd.DataFrame:
    rows = []
    for method in methods:
        out = latent_truth(table, judges=judges, method=method, value=value, gold=gold, n_resamples=n_resamples)
        est = out[out["metric"] == "accuracy"].set_index("judge")
        act = out[out["metric"] == "actual_accuracy"].set_index("judge")
        for judge in judges:
            e, a = est.loc[judge], act.loc[judge]
            rows.append({"method": method, "judge": judge, "estimated": round(e["estimate"], 3),
                         "estimated_ci": f"[{e['ci_low']:.3f}, {e['ci_high']:.3f}]",
                         "actual": round(a["estimate"], 3), "actual_ci": f"[{a['ci_low']:.3f}, {a['ci_high']:.3f}]",
                         "difference": round(e["estimate"] - a["estimate"], 3), "n": int(e["n"])})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=100, help="bootstrap refits per estimate")
    parser.add_argument("--methods", nargs="+", default=["majority", "dawid_skene", "one_coin"])
    parser.add_argument("--only", nargs="+", choices=sorted(DESIGNS), default=list(DESIGNS))
    args = parser.parse_args()
    pd.set_option("display.width", 200)
    for name in args.only:
        for title, table, judges, value, gold in DESIGNS[name]():
            start = time.perf_counter()
            result = reliability(table, judges, value, gold, args.methods, args.resamples)
            print(f"\n## {title}: value={value!r}, actual = agreement with {gold!r}; {args.resamples} refits; "
                  f"{time.perf_counter() - start:.0f} s")
            print(result.to_string(index=False))


if __name__ == "__main__":
    main()
