"""Scale-order bias: the same direct rubric with its level anchors listed low-to-high or high-to-low.

Each order is a real variant of the rubric, ``rubric.variant(anchor_order=...)``
(:mod:`judgelab.rubrics.variants`): the anchors the rubric already shows are reordered and nothing is
added to the prompt, so the rubric needs level anchors (editorial_summary has them; give any rubric
some with ``rubric.variant(criteria={name: {"anchors": {...}}})``). Conditions are ``scale:<order>``;
each is compared with ``scale:ascending`` by the mean paired score change (bootstrap CI, Wilcoxon test).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from judgelab.errors import ConfigError
from judgelab.probes.experiment import paired_changes, prepare, run_conditions
from judgelab.probes.result import ProbeResult, summary_frame
from judgelab.rubrics.base import Rubric
from judgelab.stats import DEFAULT_RESAMPLES

__all__ = ["BASELINE", "ORDERS", "analyze", "condition_name", "order_variant", "scale_order"]

ORDERS: tuple[str, ...] = ("ascending", "descending")
BASELINE = "scale:ascending"


def condition_name(order: str) -> str:
    return f"scale:{order}"


def order_variant(rubric: Rubric, order: str) -> Rubric:
    """The rubric with its level anchors listed in ``order`` (a variant named ``<rubric>-anchors_<order>``)."""
    if order not in ORDERS:
        raise ConfigError(f"anchor order must be one of {', '.join(ORDERS)}, not {order!r}")
    variant = getattr(rubric, "variant", None)
    if not callable(variant):
        raise ConfigError(f"the scale_order probe reorders a rubric's level anchors with rubric.variant(); "
                          f"{rubric.name!r} is not a spec-driven rubric (load one with load_rubric or from YAML)")
    return variant(f"{rubric.name}-anchors_{order}", anchor_order=order)


def scale_order(
    items: Any, rubric: Rubric | str, model: str,
    *,
    orders: tuple[str, ...] = ORDERS,
    criterion: str = "overall",
    seed: int = 0,
    **run_kw: Any,
) -> ProbeResult:
    """Judge the items with the rubric's anchors in each order (ascending is always run, as the baseline)."""
    item_df, rubric = prepare(items, rubric)
    if rubric.mode == "pairwise" or rubric.scale is None:
        raise ConfigError(f"the scale_order probe needs a rubric with a score scale; {rubric.name!r} has none")
    orders = tuple(dict.fromkeys(("ascending", *orders)))
    conditions = {condition_name(o): (item_df, order_variant(rubric, o)) for o in orders}
    table = run_conditions(conditions, model, seed=seed, **run_kw)
    result = analyze(table, criterion=criterion, seed=seed)
    result.meta.update(model=model, rubric=rubric.name,
                       variants={c: r.name for c, (_, r) in conditions.items()})
    return result


def analyze(table: pd.DataFrame, *, criterion: str = "overall", judge: str | None = None, seed: int = 0,
            n_resamples: int = DEFAULT_RESAMPLES) -> ProbeResult:
    """Scale-order statistics from a table with ``scale:<order>`` conditions."""
    others = sorted(c for c in set(table.loc[table["criterion"] == criterion, "condition"].astype(str))
                    if c.startswith("scale:") and c != BASELINE)
    if BASELINE not in set(table["condition"]) or not others:
        raise ConfigError(f"the table needs the {BASELINE!r} condition and at least one other anchor order")
    changes = paired_changes(table, lambda present: [c for c in present if c in others], baseline=BASELINE,
                             criterion=criterion, judge=judge, seed=seed, n_resamples=n_resamples)
    return ProbeResult("scale_order", table, summary_frame(changes.rows),
                       meta={"criterion": criterion, "baseline": BASELINE, "n_items": int(len(changes.wide))})
