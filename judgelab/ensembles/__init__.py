"""Several judges, or a judge and humans, together: panels, cascades, confidence signals, human review,
latent-truth reliability.

panels (``judgelab.panel``), cascades (``judgelab.cascade``), confidence (agreement signals such as
position consistency and logprob mass), review (the human-review queue), latent (each judge's accuracy
estimated from the judges' agreement: :func:`latent_truth`, and the estimated truth as a rater:
:func:`latent_truth_labels`). Modules are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = ["latent_truth", "latent_truth_labels"]

_LAZY = {"latent_truth": "judgelab.ensembles.latent", "latent_truth_labels": "judgelab.ensembles.latent"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgelab.ensembles' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*__all__, "cascades", "confidence", "panels", "review", "latent"])
