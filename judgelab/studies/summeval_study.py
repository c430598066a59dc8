"""Donati et al.'s meta-evaluation redone on SummEval with the released LLM_summeval judges.

The paper (Table 1, Figures 1-6) scores each judge by MAE and Spearman rho against expert
ratings pooled over criteria, compares judge and human score distributions (positive bias), and
correlates judges with each other. Here the same analyses run on 1,200 SummEval summaries x 4
criteria (coherence, consistency, fluency, relevance) with the judges whose raw outputs
LLM_summeval released: gpt-3.5-turbo-0301 and Llama-2-chat 7B / 13B / 70B (rate-then-explain
prompt). "human" is the mean of the 3 expert ratings. Intervals resample documents (the 12
summaries of one CNN/DM article share a source), so they are wider than row-level ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judgelab import stats
from judgelab.datasets import DatasetResult, summeval
from judgelab.judgments import make_table, scored

__all__ = ["EXPERTS", "HUMAN", "SUMMEVAL_JUDGES", "JudgeInfo", "SummEvalStudy", "load_study", "meta_evaluation_table",
           "meta_wide", "model_agreement_table", "positive_bias_table", "score_distribution_table", "sources"]


@dataclass(frozen=True)
class JudgeInfo:
    """How a released judge appears in figures: a short label, its family and size (billions; NaN if unknown)."""

    label: str
    family: str
    size_b: float


SUMMEVAL_JUDGES: dict[str, JudgeInfo] = {
    # labels are the released model ids, as the loader, the corrected-estimates and the variants studies name them:
    # one spelling per judge in every notebook, table and figure
    "gpt-3.5-turbo-0301": JudgeInfo("gpt-3.5-turbo-0301", "GPT", np.nan),  # size never published
    "llama-2-7b-chat-hf": JudgeInfo("llama-2-7b-chat-hf", "Llama 2", 7.0),
    "llama-2-13b-chat-hf": JudgeInfo("llama-2-13b-chat-hf", "Llama 2", 13.0),
    "llama-2-70b-chat-hf": JudgeInfo("llama-2-70b-chat-hf", "Llama 2", 70.0),
}
HUMAN = "human"
EXPERTS: tuple[str, ...] = ("human:expert_1", "human:expert_2", "human:expert_3")


@dataclass(frozen=True)
class SummEvalStudy:
    """The loaded judges: ``table`` holds the human rows once and every judge's rows (labels as judge names)."""

    table: pd.DataFrame
    results: dict[str, DatasetResult]
    judges: tuple[str, ...]  # short labels, in SUMMEVAL_JUDGES order

    def info(self, label: str) -> JudgeInfo:
        return next(i for i in SUMMEVAL_JUDGES.values() if i.label == label)


def load_study(data_dir: str | os.PathLike[str] | None = None, method: str = "rts") -> SummEvalStudy:
    """Load every released judge's SummEval outputs into one judgments table (judge = short label)."""
    results = {name: summeval(name, method=method, data_dir=data_dir) for name in SUMMEVAL_JUDGES}
    parts = []
    for k, (name, result) in enumerate(results.items()):
        table = result.table
        judge_rows = table[table["judge"] == name].copy()
        judge_rows["judge"] = SUMMEVAL_JUDGES[name].label
        parts.append(judge_rows)
        if k == 0:  # the human rows are identical in every result: keep one copy
            parts.append(table[table["judge"].str.startswith(HUMAN)])
    combined = make_table(pd.concat(parts, ignore_index=True))
    return SummEvalStudy(combined, results, tuple(i.label for i in SUMMEVAL_JUDGES.values()))


def sources(study: SummEvalStudy) -> list[dict[str, str]]:
    """Provenance for sidecars and captions (one entry: all judges come from the same repository)."""
    src = next(iter(study.results.values())).source
    return [{"repo": src.repo, "commit": src.commit, "license": src.license, "location": src.location}]


def meta_evaluation_table(study: SummEvalStudy, *, by_criterion: bool = False,
                          n_resamples: int = stats.DEFAULT_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """Per judge (and criterion): MAE and Spearman rho vs the expert mean, CIs clustered by document.

    Long tidy frame: judge, family, size_b, criterion ("all" when pooled), metric (mae / spearman_rho),
    estimate, ci_low, ci_high, p_value, n, method, note.
    """
    rows = []
    criteria = sorted(study.table["criterion"].unique()) if by_criterion else ["all"]
    for label in study.judges:
        info = study.info(label)
        for crit in criteria:
            if crit == "all":  # the paper's pooled numbers: pair the judge with the expert mean on item x criterion
                data = stats.pair_judges(study.table, [label, HUMAN], keep=["document_id"])
            else:
                data = study.table[study.table["criterion"] == crit]
            kw = dict(data=data, cluster="document_id", n_resamples=n_resamples, seed=seed)
            mae = stats.error_metrics(label, HUMAN, metrics=("mae",), **kw)
            rho = stats.spearman(label, HUMAN, **kw)
            for frame in (mae, rho):
                frame = frame.assign(judge=label, family=info.family, size_b=info.size_b, criterion=crit)
                rows.append(frame)
    out = pd.concat(rows, ignore_index=True)
    lead = ["judge", "family", "size_b", "criterion", "metric", "estimate", "ci_low", "ci_high", "p_value", "n"]
    return out[lead + [c for c in ("method", "n_unscored_excluded", "note") if c in out.columns]]


def meta_wide(long: pd.DataFrame) -> pd.DataFrame:
    """One row per judge (x criterion): mae, mae_ci_low, mae_ci_high, rho, rho_ci_low, rho_ci_high, rho_p, n."""
    keys = [k for k in ("judge", "family", "size_b", "criterion") if k in long.columns]
    out = None
    for metric, prefix in (("mae", "mae"), ("spearman_rho", "rho")):
        part = long[long["metric"] == metric][[*keys, "estimate", "ci_low", "ci_high", "p_value", "n"]]
        part = part.rename(columns={"estimate": prefix, "ci_low": f"{prefix}_ci_low", "ci_high": f"{prefix}_ci_high",
                                    "p_value": f"{prefix}_p", "n": f"{prefix}_n"})
        out = part if out is None else out.merge(part, on=keys, how="left")  # left: keep judge order
    assert out is not None
    return out.drop(columns=["mae_p"]).rename(columns={"rho_n": "n"}).drop(columns=["mae_n"])


def score_distribution_table(study: SummEvalStudy) -> pd.DataFrame:
    """Shares of each 1-5 score per judge and criterion, beside the pooled individual expert ratings.

    Long frame: judge, criterion, rater ("judge"/"human experts"), score, count, share, n. Experts'
    individual ratings are used (they are integers, as the judges' are) rather than their mean.
    """
    table = scored(study.table)
    experts = table[table["judge"].isin(EXPERTS)]
    parts = []
    for label in study.judges:
        judged = table[table["judge"] == label]
        for crit, part in judged.groupby("criterion", sort=True):
            for rater, scores in (("judge", part["score"]), ("human experts", experts.loc[
                    experts["criterion"] == crit, "score"])):
                values = scores.astype(float).round().astype(int)
                counts = values.value_counts().reindex(range(1, 6), fill_value=0)
                parts.append(pd.DataFrame({"judge": label, "criterion": crit, "rater": rater,
                                           "score": counts.index, "count": counts.to_numpy(),
                                           "share": counts.to_numpy() / max(len(values), 1), "n": len(values)}))
    return pd.concat(parts, ignore_index=True)


def positive_bias_table(study: SummEvalStudy, *, n_resamples: int = stats.DEFAULT_RESAMPLES,
                        seed: int = 0) -> pd.DataFrame:
    """:func:`judgelab.stats.positive_bias` per judge and criterion against the expert mean, clustered by document."""
    frames = []
    for label in study.judges:
        frame = stats.positive_bias(label, HUMAN, data=study.table, criterion="criterion", cluster="document_id",
                                    n_resamples=n_resamples, seed=seed)
        frames.append(frame.assign(judge=label))
    out = pd.concat(frames, ignore_index=True)
    lead = ["judge", "criterion", "metric", "estimate", "ci_low", "ci_high", "p_value", "n"]
    return out[lead + [c for c in out.columns if c not in lead]]


def model_agreement_table(study: SummEvalStudy, *, n_resamples: int = stats.DEFAULT_RESAMPLES,
                          seed: int = 0) -> pd.DataFrame:
    """:func:`judgelab.stats.agreement_matrix` of every pair of judges (and the expert mean) on shared rows, the
    criteria pooled as the paper does (units: item x criterion)."""
    return stats.agreement_matrix(study.table, raters=[*study.judges, HUMAN], item=["item_id", "criterion"],
                                  n_resamples=n_resamples, seed=seed)
