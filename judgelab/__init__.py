"""judgelab: a Jupyter-first research toolkit for LLM-as-a-judge studies.

Run a judge (``run`` / ``arun``) over items with a rubric, get ONE long judgments table back,
and measure it with ``judgelab.stats``; probe it for biases with ``judgelab.probes``.
"""

from __future__ import annotations

import os

# litellm must never reach for the network to fetch its price map at import time.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from judgelab.judgments import COLUMNS, STATUSES, load, make_table, save, validate  # noqa: E402
from judgelab.reparse import reparse  # noqa: E402
from judgelab.runner import RunAborted, RunResult, RunStats, arun, run  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "COLUMNS",
    "STATUSES",
    "RunAborted",
    "RunResult",
    "RunStats",
    "arun",
    "load",
    "make_table",
    "reparse",
    "run",
    "save",
    "validate",
    "__version__",
]
