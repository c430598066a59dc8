"""judgelab: a Jupyter-first research toolkit for LLM-as-a-judge studies.

Run a judge (``run`` / ``arun``) over items with a rubric, get ONE long judgments table back,
and measure it with ``judgelab.stats``; probe it for biases with ``judgelab.probes``.

The engine (and with it litellm, which takes seconds to import) is loaded on first use, so
``import judgelab.stats`` or ``judgelab.datasets`` stays fast.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# litellm must never reach for the network to fetch its price map at import time.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from judgelab.judgments import COLUMNS, STATUSES, load, make_table, save, validate  # noqa: E402

__version__ = "0.1.0"

_LAZY = {
    "run": "judgelab.runner",
    "arun": "judgelab.runner",
    "RunAborted": "judgelab.runner",
    "RunResult": "judgelab.runner",
    "RunStats": "judgelab.runner",
    "reparse": "judgelab.reparse",
    "load_rubric": "judgelab.rubrics",
    "panel": "judgelab.panels",
    "Panel": "judgelab.panels",
    "cascade": "judgelab.cascades",
    "Cascade": "judgelab.cascades",
    "router_judge": "judgelab.scaleout",
    "RouterJudge": "judgelab.scaleout",
    "batch_run": "judgelab.batch",
}

__all__ = ["COLUMNS", "STATUSES", "load", "make_table", "save", "validate", "__version__", *_LAZY,
           "stats", "datasets", "probes", "rubrics"]


_SUBPACKAGES = ("stats", "datasets", "probes", "rubrics")


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:  # `judgelab.stats.spearman(...)` after a bare `import judgelab`
        return importlib.import_module(f"judgelab.{name}")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgelab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
