"""A notebook view of how rubric variants differ: pick two, see the spec fields and the prompts side by side.

:func:`variant_diff_html` renders the same content as :func:`judgelab.rubrics.diff_rubrics` as HTML (the
changed spec fields as a table, the first request's prompt for an example item as a side-by-side diff);
:class:`VariantDiffView` puts two dropdowns over a mapping of named rubrics in front of it. The state is
in ordinary widget values (``.left.value``, ``.right.value``), so tests drive it headless.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Mapping
from typing import Any

import ipywidgets as w

from judgelab.errors import ConfigError
from judgelab.rubrics.registry import diff_example, prompt_text, spec_differences
from judgelab.rubrics.spec_rubric import SpecRubric

__all__ = ["VariantDiffView", "variant_diff_html"]


def variant_diff_html(a: SpecRubric, b: SpecRubric, *, item: Mapping[str, Any] | None = None,
                      wrap: int = 70) -> str:
    """HTML: the spec fields where ``a`` and ``b`` differ, then their prompts for ``item`` side by side."""
    rows = "".join(f"<tr><td><code>{html.escape(k)}</code></td><td>{html.escape(x)}</td><td>{html.escape(y)}</td></tr>"
                   for k, x, y in spec_differences(a, b))
    head = (f"<p><b>{html.escape(a.name)}</b> v{html.escape(a.version)} vs <b>{html.escape(b.name)}</b> "
            f"v{html.escape(b.version)}</p>")
    table = (f"<table><tr><th>spec field</th><th>{html.escape(a.name)}</th><th>{html.escape(b.name)}</th></tr>{rows}"
             "</table>" if rows else "<p>No spec field differs.</p>")
    example = diff_example(a, b, dict(item) if item is not None else None)
    if example is None:
        return head + table + "<p>No example item to render a prompt: pass item=.</p>"
    left, right = prompt_text(a, example).splitlines(), prompt_text(b, example).splitlines()
    if left == right:
        return head + table + "<p>The rendered prompts are identical.</p>"
    side = difflib.HtmlDiff(wrapcolumn=wrap).make_table(left, right, a.name, b.name, context=True, numlines=2)
    return head + table + f"<p>Prompt for item {html.escape(str(example.get('item_id', '?')))}:</p>" + side


class VariantDiffView(w.VBox):
    """Two dropdowns over ``rubrics`` (name -> rubric) and the HTML diff of the chosen pair."""

    def __init__(self, rubrics: Mapping[str, SpecRubric], *, item: Mapping[str, Any] | None = None) -> None:
        if len(rubrics) < 2:
            raise ConfigError("VariantDiffView needs at least two rubrics to compare")
        self.rubrics, self.item = dict(rubrics), item
        names = list(self.rubrics)
        self.left = w.Dropdown(options=names, value=names[0], description="left")
        self.right = w.Dropdown(options=names, value=names[1], description="right")
        self.output = w.HTML()
        for control in (self.left, self.right):
            control.observe(lambda _change: self.refresh(), names="value")
        super().__init__([w.HBox([self.left, self.right]), self.output])
        self.refresh()

    def refresh(self) -> None:
        self.output.value = variant_diff_html(self.rubrics[self.left.value], self.rubrics[self.right.value],
                                              item=self.item)
