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
from judgelab.probes.experiment import paired_changes, run_perturbed
from judgelab.probes.perturbations import AUTHORITY_PERTURBATIONS
from judgelab.probes.result import ProbeResult, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES

__all__ = ["CONDITIONS", "analyze", "authority"]

CONDITIONS: tuple[str, ...] = tuple(p.name for p in AUTHORITY_PERTURBATIONS)


def authority(
    items: Any, rubric: Rubric | str, model: str,
    *,
    field: str | None = None,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the original items and their confident / cited copies."""
    run = run_perturbed(items, rubric, model, AUTHORITY_PERTURBATIONS, field=field, seed=seed, **run_kw)
    result = analyze(run.table, criterion=criterion, seed=seed)
    result.meta.update(model=model, rubric=run.rubric.name, field=run.field)
    return result


def analyze(table: pd.DataFrame, *, criterion: str = "overall", judge: str | None = None, seed: int = 0,
            n_resamples: int = DEFAULT_RESAMPLES) -> ProbeResult:
    """Authority statistics from a table with "original", "confident" and/or "citation" conditions."""
    changes = paired_changes(table, lambda present: [c for c in CONDITIONS if c in present], criterion=criterion,
                             judge=judge, seed=seed, n_resamples=n_resamples)
    if not changes.conditions:
        raise ConfigError(f"the table has none of the authority conditions {CONDITIONS}")
    return ProbeResult("authority", table, summary_frame(changes.rows),
                       meta={"criterion": criterion, "mode": changes.mode, "n_items": int(len(changes.wide))})
