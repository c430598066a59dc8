"""SummEval's released prompt styles as rubric variants: which style agrees best with the experts, held out.

LLM_summeval (Shen et al. 2023) ran the same judge with several prompt styles on the same 1,200
SummEval summaries: each style is exactly a rubric variant (same items, same criteria, same judge,
another prompt), stored as the judgments table's ``rubric`` (``llm_summeval:<style>``). Only
gpt-3.5-turbo-0301 was run with more than one style; the Llama-2 judges have ``rts`` only, so they
have nothing to compare (:func:`styles_per_judge` shows it). :func:`prompt_style_table` runs
:func:`judgelab.stats.compare_rubrics` pooled over the four criteria and per criterion: styles are
selected on half of the 100 source documents and reported on the other half, with paired bootstrap
CIs resampling whole documents and Holm-corrected p-values against ``rts``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pandas as pd

from judgelab import stats
from judgelab.datasets import summeval
from judgelab.datasets.summeval import CRITERIA, summeval_combinations
from judgelab.judgments import make_table
from judgelab.stats import DEFAULT_RESAMPLES

__all__ = ["BASE_STYLE", "PROMPT_STYLES", "STYLE_JUDGE", "PromptStyles", "load_prompt_styles", "prompt_style_table",
           "rubric_name", "styles_per_judge"]

STYLE_JUDGE = "gpt-3.5-turbo-0301"
# style -> what the judge was asked to answer (read from the released outputs; alt* prompts are another
# wording of the same style: their recorded prompt lengths differ)
PROMPT_STYLES: dict[str, str] = {
    "rts": "an explanation ending in a score",
    "mcq": "one option letter A-E",
    "stareval": "'<n> stars'",
    "altrts": "rts, another prompt wording",
    "altmcq": "mcq, another prompt wording",
}
BASE_STYLE = "rts"  # the style every LLM_summeval judge ran: the base the others are tested against


def rubric_name(style: str) -> str:
    """The ``rubric`` value of a style's rows in the judgments table."""
    return f"llm_summeval:{style}"


def styles_per_judge(data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Every released judge with its prompt styles (only judges with two or more can be compared)."""
    combos = summeval_combinations(data_dir)
    out = combos.groupby("judge")["method"].agg(lambda m: ", ".join(sorted(m))).rename("styles").reset_index()
    out["n_styles"] = combos.groupby("judge")["method"].nunique().to_numpy()
    return out


@dataclass(frozen=True)
class PromptStyles:
    """The judge's rows under each released style and the human rows, in one judgments ``table``; ``sources``
    names the repository and commit they came from (for sidecars and captions)."""

    table: pd.DataFrame
    styles: tuple[str, ...]
    sources: list[dict[str, str]]


def load_prompt_styles(data_dir: str | os.PathLike[str] | None = None, *, judge: str = STYLE_JUDGE,
                       criteria: tuple[str, ...] = CRITERIA) -> PromptStyles:
    """The judge's rows under each released style (``rubric`` = ``llm_summeval:<style>``), plus the human
    rows once (``judge`` "human" = the mean of the 3 experts, and each expert ``human:expert_<k>``)."""
    combos = summeval_combinations(data_dir)
    styles = tuple(s for s in PROMPT_STYLES if s in set(combos.loc[combos["judge"] == judge, "method"]))
    results = [summeval(judge, method=style, data_dir=data_dir, criteria=criteria, human=(k == 0))
               for k, style in enumerate(styles)]
    src = results[0].source
    return PromptStyles(make_table(pd.concat([r.table for r in results], ignore_index=True)), styles,
                        [{"repo": src.repo, "commit": src.commit, "license": src.license, "location": src.location}])


def prompt_style_table(table: pd.DataFrame, *, metric: str = "spearman", holdout: float = 0.5,
                       n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> pd.DataFrame:
    """:func:`judgelab.stats.compare_rubrics` of the styles vs the expert mean: pooled over the criteria
    (``criterion`` "pooled") and per criterion; documents are the clusters."""
    criteria = list(dict.fromkeys(table.loc[table["judge"] == "human", "criterion"].astype(str)))
    parts: list[pd.DataFrame] = []
    keep: str | list[str]
    for name, keep in [("pooled", criteria)] + [(c, c) for c in criteria]:
        res = stats.compare_rubrics(table, "human", metric=metric, base=rubric_name(BASE_STYLE), criterion=keep,
                                    cluster="document_id", holdout=holdout, n_resamples=n_resamples, seed=seed)
        parts.append(res.assign(criterion=name, style=res["variant"].str.removeprefix("llm_summeval:")))
    out = pd.concat(parts, ignore_index=True)
    return out[[c for c in out.columns if c != "note"] + ["note"]]
