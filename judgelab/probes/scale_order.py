"""Scale-order bias: the same direct rubric with its levels listed 1-to-5 or 5-to-1, as numbers or labels.

Each variant is a :class:`~judgelab.probes.wrappers.ScaleOrderRubric` (an explicit scale section
added to the prompt); conditions are ``scale:<order>/<style>``. Every variant is compared with
``scale:ascending/numbers`` by the mean paired score change (bootstrap CI, Wilcoxon test).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgelab.errors import ConfigError
from judgelab.probes.experiment import paired_changes, prepare, run_conditions
from judgelab.probes.result import ProbeResult, summary_frame
from judgelab.probes.wrappers import ScaleOrderRubric
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES

__all__ = ["BASELINE", "DEFAULT_VARIANTS", "analyze", "condition_name", "scale_order"]

BASELINE = "scale:ascending/numbers"
DEFAULT_VARIANTS: tuple[tuple[str, str], ...] = (
    ("ascending", "numbers"), ("descending", "numbers"), ("ascending", "labels"), ("descending", "labels"),
)


def condition_name(order: str, style: str) -> str:
    return f"scale:{order}/{style}"


def scale_order(
    items: Any, rubric: Rubric | str, model: str,
    *,
    variants: tuple[tuple[str, str], ...] = DEFAULT_VARIANTS,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the items under each (order, style) scale variant."""
    item_df, rubric = prepare(items, rubric)
    if rubric.mode == "pairwise" or rubric.scale is None:
        raise ConfigError(f"the scale_order probe needs a rubric with a score scale; {rubric.name!r} has none")
    if ("ascending", "numbers") not in variants:
        variants = (("ascending", "numbers"), *variants)
    conditions = {condition_name(o, s): (item_df, ScaleOrderRubric(rubric, o, s)) for o, s in variants}
    table = run_conditions(conditions, model, seed=seed, **run_kw)
    result = analyze(table, criterion=criterion, seed=seed)
    result.meta.update(model=model, rubric=rubric.name)
    return result


def analyze(table: pd.DataFrame, *, criterion: str = "overall", judge: str | None = None, seed: int = 0,
            n_resamples: int = DEFAULT_RESAMPLES) -> ProbeResult:
    """Scale-order statistics from a table with ``scale:<order>/<style>`` conditions."""
    others = sorted(c for c in set(table.loc[table["criterion"] == criterion, "condition"].astype(str))
                    if c.startswith("scale:") and c != BASELINE)
    if BASELINE not in set(table["condition"]) or not others:
        raise ConfigError(f"the table needs the {BASELINE!r} condition and at least one other scale variant")
    changes = paired_changes(table, lambda present: [c for c in present if c in others], baseline=BASELINE,
                             criterion=criterion, judge=judge, seed=seed, n_resamples=n_resamples)
    return ProbeResult("scale_order", table, summary_frame(changes.rows),
                       meta={"criterion": criterion, "baseline": BASELINE, "n_items": int(len(changes.wide))})
