"""judgelab: a Jupyter-first research toolkit for LLM-as-a-judge studies.

Run a judge (``run`` / ``arun``) over items with a rubric, get ONE long judgments table back,
and measure it with ``judgelab.stats``; probe it for biases with ``judgelab.probes``.

The engine (and with it litellm, which takes seconds to import) is loaded on first use, so
``import judgelab.stats`` or ``judgelab.datasets`` stays fast.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
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
}

# lazily loaded functions whose arguments are guarded (judgelab.errors.user_errors); the runner's entry points
# check their own arguments before any call
_GUARDED = frozenset({"from_frame", "load_rubric", "panel", "cascade", "report", "reparse", "estimate"})

__all__ = ["COLUMNS", "STATUSES", "JudgelabError", "aggregate_repeats", "fill_unscored", "load", "make_table", "save",
           "validate", "__version__", *_LAZY,
           "stats", "datasets", "probes", "rubrics", "ensembles", "studies", "viz", "engine", "backends"]


_SUBPACKAGES = ("stats", "datasets", "probes", "rubrics", "ensembles", "studies", "viz", "engine", "backends")


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


# ---------------------------------------------------------------- modules moved in 0.2
# The old import paths keep working for one release, each with a FutureWarning naming the new home
# (a shim module forwards attribute access; nothing is copied).
_MOVED: dict[str, tuple[str, ...]] = {
    "judgelab.runner": ("judgelab.engine.runner",),
    "judgelab.batch": ("judgelab.engine.batch",),
    "judgelab.reparse": ("judgelab.engine.reparse",),
    "judgelab.cache": ("judgelab.engine.cache",),
    "judgelab.budget": ("judgelab.engine.budget", "judgelab.backends.pricing"),
    "judgelab.items": ("judgelab.engine.items",),
    "judgelab.logprobs": ("judgelab.engine.logprobs",),
    "judgelab.sync": ("judgelab.engine.sync",),
    "judgelab.scaleout": ("judgelab.backends.router",),
    "judgelab.prompting": ("judgelab.rubrics.prompting",),
    "judgelab.parsing": ("judgelab.rubrics.parsing",),
    "judgelab.verdicts": ("judgelab.rubrics.chess_commentary", "judgelab.rubrics.unified_judge",
                          "judgelab.rubrics.reference_gold", "judgelab.rubrics.direct_score",
                          "judgelab.rubrics.pairwise", "judgelab.rubrics.base"),
    "judgelab.chess_features": ("judgelab.rubrics.chess_features",),
    "judgelab.rubric_generation": ("judgelab.rubrics.generation",),
    "judgelab.rubrics.common": ("judgelab.rubrics.spec_rubric",),
    "judgelab.rubrics.generic": ("judgelab.rubrics.direct_score", "judgelab.rubrics.pairwise",
                                 "judgelab.rubrics.spec"),
    "judgelab.panels": ("judgelab.ensembles.panels",),
    "judgelab.cascades": ("judgelab.ensembles.cascades",),
    "judgelab.confidence": ("judgelab.ensembles.confidence",),
    "judgelab.review": ("judgelab.ensembles.review",),
    "judgelab.calibration": ("judgelab.stats.calibration",),
    "judgelab.panel_agreement": ("judgelab.stats.panel_agreement",),
    "judgelab.reproduce": ("judgelab.studies.reproduce",),
    "judgelab.demo": ("judgelab.studies.demo",),
    "judgelab.reference": ("judgelab.studies",),
    "judgelab.reference.llmbar_study": ("judgelab.studies.llmbar_study",),
    "judgelab.reference.openqa_study": ("judgelab.studies.openqa_study",),
    "judgelab.reference.summeval_study": ("judgelab.studies.summeval_study",),
    "judgelab.reference.paper": ("judgelab.studies.paper",),
    "judgelab.plots": ("judgelab.viz.plots", "judgelab.studies.figures"),
    "judgelab.style": ("judgelab.viz.style",),
    "judgelab.widgets": ("judgelab.viz.widgets",),
}


# names that changed with the move (old module -> {old name: new name}); the old name warns and forwards
_RENAMED: dict[str, dict[str, str]] = {
    "judgelab.plots": {
        "meta_forest": "plot_meta_forest", "score_distributions": "plot_score_distributions",
        "positive_bias_forest": "plot_positive_bias_forest", "agreement_heatmap": "plot_agreement_heatmap",
        "pairwise_accuracy_grid": "plot_pairwise_accuracy_grid", "length_effect": "plot_length_effect",
        "agreement_forest": "plot_agreement_forest", "error_breakdown": "plot_error_breakdown",
        "quickstart_scores": "plot_score_shares", "mae_vs_rho": "plot_mae_vs_rho",
        "metric_vs_size": "plot_metric_vs_size", "paper_side_by_side": "plot_paper_side_by_side",
    },
    "judgelab.reference.summeval_study": {
        "meta_evaluation": "meta_evaluation_table", "score_distributions": "score_distribution_table",
        "positive_bias": "positive_bias_table", "model_agreement": "model_agreement_table",
    },
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the old module paths of :data:`_MOVED` as thin forwarding modules that warn once."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in _MOVED:
            return None
        is_package = any(other.startswith(fullname + ".") for other in _MOVED)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=is_package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        homes = _MOVED[module.__name__]
        warnings.warn(f"{module.__name__} has moved to {' / '.join(homes)}; the old path works until judgelab 0.3",
                      FutureWarning, stacklevel=2)
        targets = [importlib.import_module(home) for home in homes]
        renamed = _RENAMED.get(module.__name__, {})

        def forward(name: str) -> Any:
            if name in renamed:
                warnings.warn(f"{module.__name__}.{name} is now {homes[0]}.{renamed[name]}", FutureWarning,
                              stacklevel=2)
                name = renamed[name]
            for target in targets:
                if hasattr(target, name):
                    return getattr(target, name)
            raise AttributeError(f"module {module.__name__!r} (moved to {homes[0]}) has no attribute {name!r}")

        module.__getattr__ = forward  # type: ignore[attr-defined]
        module.__all__ = sorted({n for t in targets for n in getattr(t, "__all__", ())})  # type: ignore[attr-defined]


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
