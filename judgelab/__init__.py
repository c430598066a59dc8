"""judgelab: a Jupyter-first research toolkit for LLM-as-a-judge studies.

Run a judge (``run`` / ``arun``) over items with a rubric, get ONE long judgments table back,
and measure it with ``judgelab.stats``; probe it for biases with ``judgelab.probes``.

The engine (and with it litellm, which takes seconds to import) is loaded on first use, so
``import judgelab.stats`` or ``judgelab.datasets`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

# Importing judgelab changes no environment variable: litellm's offline price map is scoped to litellm's
# import (judgelab.backends.pricing.offline_litellm), OpenMP's thread policy to the embedded judge's first use.
from judgelab import judgments as _judgments
from judgelab.errors import JudgelabError, user_errors
from judgelab.judgments import COLUMNS, STATUSES

# the public functions guard their arguments: a caller's mistake ends in a JudgelabError (judgelab.errors)
load, make_table, save, validate, aggregate_repeats, fill_unscored = (
    user_errors(f) for f in (_judgments.load, _judgments.make_table, _judgments.save, _judgments.validate,
                             _judgments.aggregate_repeats, _judgments.fill_unscored))

__version__ = "0.1.0"

_LAZY = {
    "run": "judgelab.engine.runner",
    "arun": "judgelab.engine.runner",
    "estimate": "judgelab.engine.runner",
    "run_grid": "judgelab.engine.grid",
    "arun_grid": "judgelab.engine.grid",
    "aestimate": "judgelab.engine.runner",
    "RunAborted": "judgelab.engine.runner",
    "RunEstimate": "judgelab.engine.runner",
    "RunResult": "judgelab.engine.runner",
    "RunStats": "judgelab.engine.runner",
    "RunConfig": "judgelab.engine.config",
    "reparse": "judgelab.engine.reparse",
    "load_rubric": "judgelab.rubrics",
    "panel": "judgelab.ensembles.panels",
    "Panel": "judgelab.ensembles.panels",
    "cascade": "judgelab.ensembles.cascades",
    "Cascade": "judgelab.ensembles.cascades",
    "router_judge": "judgelab.backends.router",
    "RouterJudge": "judgelab.backends.router",
    "batch_run": "judgelab.engine.batch",
    "abatch_run": "judgelab.engine.batch",
    "from_frame": "judgelab.datasets.frame",
    "parse_score": "judgelab.rubrics.parse_text",
    "parse_winner": "judgelab.rubrics.parse_text",
    "parse_label": "judgelab.rubrics.parse_text",
    "Parsed": "judgelab.rubrics.parse_text",
    "report": "judgelab.viz.report",
    "show": "judgelab.viz.tables",
    "from_inspect": "judgelab.imports",
    "from_promptfoo": "judgelab.imports",
    "from_deepeval": "judgelab.imports",
    "render_conversation": "judgelab.conversations",
}

# lazily loaded functions whose arguments are guarded (judgelab.errors.user_errors); the runner's entry points
# check their own arguments before any call
_GUARDED = frozenset({"from_frame", "load_rubric", "panel", "cascade", "report", "reparse", "estimate"})

__all__ = ["COLUMNS", "STATUSES", "JudgelabError", "aggregate_repeats", "fill_unscored", "load", "make_table", "save",
           "validate", "__version__", *_LAZY,
           "stats", "datasets", "probes", "rubrics", "ensembles", "studies", "viz", "engine", "backends",
           "distributed", "labels"]


_SUBPACKAGES = ("stats", "datasets", "probes", "rubrics", "ensembles", "studies", "viz", "engine", "backends",
                "distributed", "labels")


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:  # `judgelab.stats.spearman(...)` after a bare `import judgelab`
        return importlib.import_module(f"judgelab.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgelab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    if name in _GUARDED:
        value = user_errors(value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
