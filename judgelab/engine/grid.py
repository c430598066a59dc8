"""A grid of runs in one pass: rubric variants x models x conditions x repeats -> ONE judgments table.

``arun_grid`` plans every cell with the engine's own planner (:func:`judgelab.engine.rows.plan_jobs`)
and options (:class:`~judgelab.engine.config.RunConfig`), then runs all of them through the runner's
single pass (:func:`judgelab.engine.runner.run_cells`): one cache, one budget over the whole grid
(:class:`~judgelab.engine.budget.BudgetGuard`), one progress bar; a fatal error of a model (a bad key)
stops that model's calls in every cell, the other models go on. A grid killed and run again asks
only the requests the cache does not hold, exactly like :func:`judgelab.run`.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.engine.budget import BudgetGuard
from judgelab.engine.cache import RequestCache
from judgelab.engine.config import RunConfig
from judgelab.engine.items import read_items
from judgelab.engine.rows import plan_jobs
from judgelab.engine.runner import RunResult, RunStats, engine_for, open_cache, resolve_model, run_cells
from judgelab.engine.sync import sync_twin
from judgelab.errors import ConfigError, JudgelabError
from judgelab.rubrics.base import Rubric

__all__ = ["arun_grid", "run_grid"]

# options the grid sets itself, per cell or once for the whole grid
_GRID_OWNED = ("judge", "condition", "repeats", "max_cost_usd", "concurrency", "progress")


def _rubrics(rubrics: Mapping[str, Rubric | str | Path]) -> dict[str, Rubric]:
    from judgelab.rubrics import load_rubric

    if not isinstance(rubrics, Mapping) or not rubrics:
        raise ConfigError("rubrics must be a non-empty mapping {name: rubric object, built-in name or YAML path}")
    out: dict[str, Rubric] = {}
    for key, rubric in rubrics.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"rubric names must be non-empty strings, not {key!r}")
        if isinstance(rubric, str | Path):
            try:
                rubric = load_rubric(rubric)
            except JudgelabError as err:
                raise ConfigError(f"grid rubric {key!r}: {err}") from None
        out[key] = rubric
    return out


def _models(models: Sequence[str | Any] | Mapping[str, str | Any]) -> dict[str, tuple[str, Any]]:
    """{judge name: (model name, judge object or None)}."""
    if isinstance(models, str):
        models = [models]
    if not isinstance(models, Mapping):
        models = list(models or [])
        if not models:
            raise ConfigError("models is empty; give at least one model name or judge object")
        names = [m if isinstance(m, str) else getattr(m, "model_name", repr(m)) for m in models]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ConfigError(f"model(s) {dup} appear twice; give a mapping {{judge name: model}} to run one "
                              "model under two names")
        models = dict(zip(names, models, strict=True))
    if not models:
        raise ConfigError("models is empty; give at least one model name or judge object")
    return {str(name): resolve_model(model) for name, model in models.items()}


def _conditions(items: Any, conditions: Mapping[str, Any] | None, default: str) -> dict[str, pd.DataFrame]:
    base = read_items(items)
    if conditions is None:
        return {default: base}
    if not isinstance(conditions, Mapping) or not conditions:
        raise ConfigError("conditions must be a non-empty mapping {name: None (the items), items, or a function "
                          "items -> items}")
    out = {}
    for name, value in conditions.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"condition names must be non-empty strings, not {name!r}")
        if value is None:
            out[name] = base
        elif callable(value):
            out[name] = read_items(value(base.copy()))
        else:
            out[name] = read_items(value)
    return out


async def arun_grid(
    items: Any,
    rubrics: Mapping[str, Rubric | str | Path],
    models: Sequence[str | Any] | Mapping[str, str | Any],
    *,
    conditions: Mapping[str, None | Any | Callable[[pd.DataFrame], Any]] | None = None,
    repeats: int = 1,
    max_cost_usd: float | None = None,
    cache: bool | str | Path | RequestCache = True,
    concurrency: int = 8,
    progress: bool = True,
    return_stats: bool = False,
    **options: Any,
) -> pd.DataFrame | RunResult:
    """Judge ``items`` with every rubric on every model, in every condition, ``repeats`` times: ONE table.

    rubrics: {name: rubric object, built-in name or YAML path}; the name fills the ``rubric`` column
    (the rubric's fingerprint fills ``rubric_version``), e.g. ``{"base": r, "short": r.variant(scale=(1, 3))}``.
    models: model names / judge objects (the ``judge`` column is the model name), or {judge name: model}.
    conditions: None (one condition, named by the ``condition`` option, default "original"), or
    {name: None (the items as given) | other items | a function items DataFrame -> items}.
    max_cost_usd: ONE budget for the whole grid: once spent + reserved estimates would pass it, no cell
    issues another call and the remaining requests are "skipped_budget" rows.
    cache / concurrency / progress: one cache, one pool of ``concurrency`` parallel calls, one progress bar.
    A grid stopped half-way (killed, interrupted) and run again asks only the requests not in the cache.
    options: any other option of :func:`judgelab.run` (temperature, seed, swap, order, api_base, api_key,
    max_tokens, reasoning_effort, ...), applied to every cell.
    return_stats: a :class:`~judgelab.engine.runner.RunResult` (table + grid-wide stats) instead of the table.
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    owned = sorted(set(options) & set(_GRID_OWNED))
    unknown = sorted(set(options) - set(RunConfig.__dataclass_fields__))
    if owned or unknown:
        raise ConfigError(f"run_grid() cannot take option(s) {owned + unknown}: it takes the options of run() "
                          f"except {list(_GRID_OWNED)} (the grid's axes and shared settings)")
    base = RunConfig(repeats=repeats, max_cost_usd=max_cost_usd, concurrency=concurrency, progress=progress,
                     **options)
    rubric_map = _rubrics(rubrics)
    model_map = _models(models)
    condition_items = _conditions(items, conditions, base.condition)
    cache_obj, own_cache = open_cache(cache)
    stats, faults, budget = RunStats(), Counter[str](), BudgetGuard(max_cost_usd)
    health: dict[str, dict[str, Any]] = {judge: {} for judge in model_map}  # a bad key stops its model once
    cells = []
    item_ids: set[Any] = set()
    for cond, item_df in condition_items.items():
        item_ids.update(item_df["item_id"])
        config = dataclasses.replace(base, condition=cond)
        for label, rubric in rubric_map.items():
            jobs = plan_jobs(item_df, rubric, condition=cond, swap=config.swap, order=config.order,
                             seed=config.seed, repeats=config.repeats)
            for judge, (model_name, caller) in model_map.items():
                cell_config = dataclasses.replace(config, judge=judge)
                engine = engine_for(item_df, rubric, model_name, cell_config, cache_obj, caller,
                                    budget=budget, stats=stats, faults=faults, health=health[judge])
                engine.rubric_label = label
                cells.append((engine, jobs))
    stats.items, stats.requests = len(item_ids), sum(len(jobs) for _, jobs in cells)
    try:
        result = await run_cells(cells, concurrency=concurrency, progress=progress,
                                 desc=f"judging a grid of {len(cells)} runs", max_cost_usd=max_cost_usd,
                                 t0=t0, cpu0=cpu0)
    finally:
        if own_cache and cache_obj is not None:
            cache_obj.close()
    return result if return_stats else result.table


run_grid = sync_twin(arun_grid, "run_grid")
