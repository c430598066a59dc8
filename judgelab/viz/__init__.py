"""Figures and interactive views: plots (generic figures that take ``ax=``), style, widgets.

Modules are imported on first use (matplotlib and ipywidgets are not needed to judge or to compute
statistics).
"""

__all__: list[str] = []
