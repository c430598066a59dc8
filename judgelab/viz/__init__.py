"""Figures and interactive views: plots (generic figures that take ``ax=``), style, widgets, the Labeler.

Modules are imported on first use (matplotlib and ipywidgets are not needed to judge or to compute
statistics): ``judgelab.viz.Labeler`` loads :mod:`judgelab.viz.labeler` when first asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__: list[str] = ["Labeler"]

_LAZY = {"Labeler": "judgelab.viz.labeler"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgelab.viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
