"""OpenQA-eval (Kamalloo et al. 2023) from the released verdicts: GPT-4, text-davinci-003 and BEM vs humans.

Each of 1,490 NQ-open (question, candidate answer) pairs was judged acceptable or not by human
annotators (the file's majority verdict is "human") and by three automatic judges. Agreement and
Cohen's kappa with bootstrap CIs resample questions (the ~5 answers to one question are not
independent). Annotator 1 vs annotator 2 is the human ceiling the judges are read against.
"""

from __future__ import annotations

import os

import pandas as pd

from judgelab import stats
from judgelab.datasets import DatasetResult, openqa
from judgelab.judgments import is_scored, make_table

__all__ = ["ANNOTATORS", "HUMAN", "OPENQA_JUDGES", "agreement_table", "combined_table", "disagreements",
           "error_counts", "load_judges", "sources"]

OPENQA_JUDGES: tuple[str, ...] = ("gpt-4", "text-davinci-003", "BEM")
HUMAN = "human"
ANNOTATORS: tuple[str, str] = ("human:annotator1", "human:annotator2")


def load_judges(data_dir: str | os.PathLike[str] | None = None,
                judges: tuple[str, ...] = OPENQA_JUDGES) -> dict[str, DatasetResult]:
    return {j: openqa(j, data_dir=data_dir) for j in judges}


def sources(results: dict[str, DatasetResult]) -> list[dict[str, str]]:
    src = next(iter(results.values())).source
    return [{"repo": src.repo, "commit": src.commit, "license": src.license, "location": src.location}]


def combined_table(results: dict[str, DatasetResult]) -> pd.DataFrame:
    """Human rows once plus every judge's rows, with a ``question_id`` column to cluster on."""
    parts = []
    for k, (judge, result) in enumerate(results.items()):
        table = result.table
        parts.append(table[table["judge"] == judge])
        if k == 0:
            parts.append(table[table["judge"].str.startswith(HUMAN)])
    table = make_table(pd.concat(parts, ignore_index=True))
    items = next(iter(results.values())).items
    return table.merge(items[["item_id", "question_id"]], on="item_id", how="left")


def agreement_table(results: dict[str, DatasetResult], *, n_resamples: int = stats.DEFAULT_RESAMPLES,
                    seed: int = 0) -> pd.DataFrame:
    """Percent agreement and Cohen's kappa of each judge with the human verdict, and annotator 1 vs 2.

    Columns ``rater`` and ``gold`` name the two sides of each ``pair`` (``gold``: the reference side).
    """
    table = combined_table(results)
    pairs = [(j, HUMAN, f"{j} vs human") for j in results] + [(*ANNOTATORS, "annotator 1 vs annotator 2")]
    frames = []
    for a, b, label in pairs:
        kw = dict(data=table, value="verdict", cluster="question_id", n_resamples=n_resamples, seed=seed)
        for func in (stats.percent_agreement, stats.cohen_kappa):
            frames.append(func(a, b, **kw).assign(pair=label, rater=a, gold=b))
    out = pd.concat(frames, ignore_index=True)
    lead = ["pair", "rater", "gold", "metric", "estimate", "ci_low", "ci_high", "p_value", "n"]
    return out[lead + [c for c in out.columns if c not in lead]]


def error_counts(results: dict[str, DatasetResult]) -> pd.DataFrame:
    """Per judge: how many pairs it agrees on, accepts wrongly, rejects wrongly, or left unscored."""
    table = combined_table(results)
    human = table[(table["judge"] == HUMAN) & is_scored(table)].set_index("item_id")["verdict"]
    rows = []
    for judge in results:
        judged = table[table["judge"] == judge].set_index("item_id")
        outcome = pd.Series("agree", index=judged.index, dtype=object)
        verdict = judged["verdict"].astype(object)
        ref = human.reindex(judged.index).astype(object)
        outcome[(verdict == "yes") & (ref == "no")] = "false accept (judge yes, human no)"
        outcome[(verdict == "no") & (ref == "yes")] = "false reject (judge no, human yes)"
        outcome[~is_scored(judged)] = "unscored"
        counts = outcome.value_counts()
        for name, count in counts.items():
            rows.append({"judge": judge, "outcome": name, "count": int(count), "share": count / len(outcome),
                         "n": len(outcome)})
    return pd.DataFrame(rows)


def disagreements(results: dict[str, DatasetResult], judge: str, limit: int = 5) -> pd.DataFrame:
    """A few pairs where ``judge`` and the human verdict differ: question, answer, gold answers, both verdicts."""
    table = combined_table(results)
    items = results[judge].items.set_index("item_id")
    human = table[table["judge"] == HUMAN].set_index("item_id")["verdict"]
    judged = table[(table["judge"] == judge) & is_scored(table)].set_index("item_id")
    differ = judged[judged["verdict"].astype(object) != human.reindex(judged.index).astype(object)]
    out = items.loc[differ.index, ["question", "answer", "gold_answers"]].assign(
        human=human.reindex(differ.index), judge=differ["verdict"], judge_output=differ["raw_output"])
    return out.head(limit).reset_index()
