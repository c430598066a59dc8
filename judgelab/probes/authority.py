"""Authority bias: add confident phrasing or a fabricated citation without changing the content.

Conditions "confident" (a prefixed claim of certainty) and "citation" (an appended, made-up
reference). Direct rubrics: score change vs the original; pairwise rubrics: candidate A is
perturbed and the change of A's points is measured. Mean paired change with a bootstrap CI and a
Wilcoxon signed-rank test per condition.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgelab.errors import ConfigError
from judgelab.probes.experiment import (
    candidate_field,
    change_metric,
    infer_mode,
    item_values,
    paired_shift_rows,
    perturbed_conditions,
    prepare,
    run_conditions,
)
from judgelab.probes.perturbations import AUTHORITY_PERTURBATIONS
from judgelab.probes.result import ProbeResult, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES

__all__ = ["CONDITIONS", "analyze", "authority"]

CONDITIONS: tuple[str, ...] = tuple(p.name for p in AUTHORITY_PERTURBATIONS)


def authority(
    items: Any,
    rubric: Rubric | str,
    model: str,
    *,
    field: str | None = None,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the original items and their confident / cited copies."""
    item_df, rubric = prepare(items, rubric)
    target = candidate_field(rubric, field)
    conditions = perturbed_conditions(item_df, rubric, target, AUTHORITY_PERTURBATIONS)
    table = run_conditions(conditions, model, seed=seed, **run_kw)
    result = analyze(table, criterion=criterion, seed=seed)
    result.meta.update(model=model, rubric=rubric.name, field=target)
    return result


def analyze(table: pd.DataFrame, *, criterion: str = "overall", judge: str | None = None, seed: int = 0,
            n_resamples: int = DEFAULT_RESAMPLES) -> ProbeResult:
    """Authority statistics from a table with "original", "confident" and/or "citation" conditions."""
    mode = infer_mode(table[table["criterion"] == criterion])
    wide = item_values(table, criterion=criterion, mode=mode, judge=judge)
    present = [c for c in CONDITIONS if c in wide.columns]
    if not present:
        raise ConfigError(f"the table has none of the authority conditions {CONDITIONS}")
    rows = paired_shift_rows(wide, "original", present, metric=change_metric(mode), seed=seed, n_resamples=n_resamples)
    return ProbeResult("authority", table, summary_frame(rows),
                       meta={"criterion": criterion, "mode": mode, "n_items": int(len(wide))})
