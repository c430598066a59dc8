"""Self-preference (self-enhancement): does a judge favour outputs of its own model family?

Items carry the generating model (``generator`` for direct rubrics; ``generator_a`` and
``generator_b`` for pairwise ones). Families are read from model names (:func:`model_family`).

* Direct: OLS of the judge's score on an own-family indicator, controlling for the gold/human
  score when present (HC3 robust standard errors); the coefficient is the self-preference in
  score points. Without gold, the coefficient is the raw own-minus-other difference (and quality
  differences between families are not controlled: the ``note`` says so).
* Pairwise: on items where exactly one candidate is the judge's family, the own candidate's win
  rate (tie = 0.5) against 0.5; with gold labels, the judge's own-family points minus gold's, paired
  by item. Mean with a bootstrap CI and a Wilcoxon signed-rank test.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

from judgelab.errors import ConfigError
from judgelab.probes.experiment import POINTS, item_values, prepare, run_once, shift_row
from judgelab.probes.result import ProbeResult, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES
from judgelab.stats.tidy import join_notes, result_row

__all__ = ["FAMILIES", "analyze", "model_family", "self_preference"]

FAMILIES: dict[str, tuple[str, ...]] = {
    "gpt": ("gpt", "openai", "chatgpt", "o1-", "o3-", "o4-"),
    "claude": ("claude", "anthropic"),
    "gemini": ("gemini", "gemma", "palm", "google"),
    "llama": ("llama", "meta-"),
    "mistral": ("mistral", "mixtral", "codestral"),
    "qwen": ("qwen",),
    "deepseek": ("deepseek",),
    "phi": ("phi-",),
    "smollm": ("smollm",),
}


def model_family(name: str) -> str:
    """A model's family from its name: the model part first ("openrouter/anthropic/claude-3" -> claude)."""
    parts = [p for p in str(name).lower().split("/") if p]
    for part in reversed(parts):
        for family, keys in FAMILIES.items():
            if any(k in part for k in keys):
                return family
    return parts[-1] if parts else str(name).lower()


def self_preference(
    items: Any, rubric: Rubric | str, model: str,
    *,
    judge_family: str | None = None,
    generator_field: str = "generator",
    gold_field: str | None = None,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the items once and compare own-family with other-family candidates."""
    item_df, rubric = prepare(items, rubric)
    table = run_once(item_df, rubric, model, seed=seed, **run_kw)
    result = analyze(table, item_df, judge_family=judge_family or model_family(model),
                     generator_field=generator_field, gold_field=gold_field, criterion=criterion, seed=seed)
    result.meta.update(model=model, rubric=rubric.name)
    return result


def analyze(
    table: pd.DataFrame,
    items: pd.DataFrame,
    *,
    judge_family: str,
    generator_field: str = "generator",
    gold_field: str | None = None,
    criterion: str = "overall",
    judge: str | None = None,
    seed: int = 0,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> ProbeResult:
    """Self-preference statistics from a judged table plus the items' generator (and gold) fields."""
    if not isinstance(items, pd.DataFrame) or "item_id" not in items.columns:
        raise ConfigError("self_preference.analyze needs the items as a DataFrame with an item_id column "
                          f"(got {type(items).__name__}" + (f" with columns {list(items.columns)})" if
                                                            isinstance(items, pd.DataFrame) else ")"))
    items = items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
    family = model_family(judge_family)
    pairwise = f"{generator_field}_a" in items.columns and f"{generator_field}_b" in items.columns
    if pairwise:
        rows, detail = _pairwise(table, items, family, generator_field, gold_field, criterion, judge, seed,
                                 n_resamples)
    elif generator_field in items.columns:
        rows, detail = _direct(table, items, family, generator_field, gold_field, criterion, judge)
    else:
        raise ConfigError(f"items need a {generator_field!r} column (direct) or {generator_field}_a/_b (pairwise)")
    return ProbeResult("self_preference", table, summary_frame(rows), details={"items": detail},
                       meta={"judge_family": family, "criterion": criterion, "n_items": int(len(detail))})


def _direct(table: pd.DataFrame, items: pd.DataFrame, family: str, generator_field: str, gold_field: str | None,
            criterion: str, judge: str | None) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    values = item_values(table, criterion=criterion, mode="direct", judge=judge)
    cond = "original" if "original" in values.columns else values.columns[0]
    df = pd.DataFrame({"score": values[cond]})
    df["own"] = items[generator_field].reindex(df.index).map(lambda g: float(model_family(g) == family))
    formula = "score ~ own"
    if gold_field is not None:
        if gold_field not in items.columns:
            raise ConfigError(f"items have no gold column {gold_field!r}")
        df["gold"] = pd.to_numeric(items[gold_field].reindex(df.index), errors="coerce")
        formula += " + gold"
    complete = df.dropna()
    dropped = len(df) - len(complete)
    notes = [f"{dropped} item(s) unscored or without gold dropped" if dropped else ""]
    if gold_field is None:
        notes.append("no gold scores: quality differences between families are not controlled")
    note = join_notes(*notes)
    method = f"OLS {formula}, HC3 robust SE, 95% CI"
    if complete["own"].nunique() < 2 or len(complete) < 4:
        return [result_row("own_family_effect", math.nan, n=len(complete), method=method,
                           note="needs >= 4 scored items from both own and other families")], complete
    fit = smf.ols(formula, data=complete).fit(cov_type="HC3")
    lo, hi = fit.conf_int().loc["own"]
    row = result_row("own_family_effect", float(fit.params["own"]), n=len(complete), ci_low=lo, ci_high=hi,
                     p_value=float(fit.pvalues["own"]), method=method, policy="unscored items dropped", note=note)
    return [row], complete


def _pairwise(table: pd.DataFrame, items: pd.DataFrame, family: str, generator_field: str, gold_field: str | None,
              criterion: str, judge: str | None, seed: int, n_resamples: int) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    values = item_values(table, criterion=criterion, mode="pairwise", judge=judge)
    cond = "original" if "original" in values.columns else values.columns[0]
    fam_a = items[f"{generator_field}_a"].reindex(values.index).map(lambda g: model_family(g) == family)
    fam_b = items[f"{generator_field}_b"].reindex(values.index).map(lambda g: model_family(g) == family)
    mixed = fam_a != fam_b
    own_points = np.where(fam_a, values[cond], 1.0 - values[cond])
    df = pd.DataFrame({"own_points": own_points, "own_is_A": fam_a}, index=values.index)[mixed]
    policy = "items with exactly one own-family candidate; unscored dropped"
    if gold_field is not None:
        if gold_field not in items.columns:
            raise ConfigError(f"items have no gold column {gold_field!r}")
        gold_a = items[gold_field].reindex(df.index).map(lambda w: POINTS.get(w, math.nan))
        df["gold_own_points"] = np.where(df["own_is_A"], gold_a, 1.0 - gold_a)
        complete = df.dropna()
        diffs = (complete["own_points"] - complete["gold_own_points"]).to_numpy(float)
        row = shift_row(diffs, metric="own_family_win_rate_minus_gold", condition="", dropped=len(df) - len(complete),
                        seed=seed, n_resamples=n_resamples, policy=policy)
    else:
        complete = df.dropna()
        diffs = (complete["own_points"] - 0.5).to_numpy(float)
        row = shift_row(diffs, metric="own_family_win_rate_minus_half", condition="",
                        dropped=len(df) - len(complete), seed=seed, n_resamples=n_resamples, policy=policy)
        row["note"] = join_notes(row["note"], "no gold labels: quality is not controlled")
    return [row], complete
