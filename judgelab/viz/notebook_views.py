"""The notebook view of a result: what a run, a probe or a data set shows as ``_repr_html_``.

:func:`result_html` gives the title and :func:`summary_line` (items, judgment rows ok / unscored, judges, and
for a run its calls, cache hits, cost and time), a summary frame when the result has one, and the head of the
judgments table. The results' classes import this module (at call time) and it imports none of them, so a
result never depends on the HTML report (:mod:`judgelab.viz.report`, which reads results and shares the
summary line).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.viz.style import frame_html

__all__ = ["result_html", "summary_line"]

_HEAD_COLUMNS = ("item_id", "judge", "criterion", "side", "condition", "repeat", "status", "score", "winner",
                 "verdict", "confidence", "unscored_reason")


# ---------------------------------------------------------------- the summary line
def summary_line(table: pd.DataFrame, stats: Mapping[str, Any] | None = None) -> str:
    """One sentence: items, judgments (ok / unscored), judges, and for a run its calls, cache hits, cost and time."""
    counts = judgments.status_counts(table)
    ok = counts.get(judgments.OK, 0)
    judges = sorted(judgments.distinct_text(table["judge"]))
    parts = [f"{table['item_id'].nunique():,} items", f"{len(table):,} judgment rows ({ok:,} ok, "
             f"{len(table) - ok:,} unscored)", f"{len(judges)} judge(s): {', '.join(judges[:6])}"
             + (" …" if len(judges) > 6 else "")]
    conditions = sorted(judgments.distinct_text(table["condition"]))
    if conditions and conditions != ["original"]:
        parts.append(f"conditions: {', '.join(conditions)}")
    if stats:
        parts.append(f"{stats.get('api_calls', 0):,} API calls, {stats.get('cache_hits', 0):,} cache hits, "
                     f"{stats.get('retries', 0):,} retries")
        cost = stats.get("cost_usd")
        parts.append("cost unknown" if cost is None or (isinstance(cost, float) and math.isnan(cost))
                     else f"cost ${cost:.4f}")
        if stats.get("wall_s") is not None:
            parts.append(f"{float(stats['wall_s']):.1f} s")
    return "; ".join(parts)


# ---------------------------------------------------------------- notebook views
def result_html(title: str, table: pd.DataFrame, *, stats: Mapping[str, Any] | None = None,
                summary: pd.DataFrame | None = None, head: int = 10) -> str:
    """The notebook view of a result: its title and summary line, a summary frame when given, the table's head."""
    columns = [c for c in _HEAD_COLUMNS if c in table.columns and table[c].notna().any()]
    parts = [f"<div><b>{html.escape(title)}</b>: {html.escape(summary_line(table, stats))}</div>"]
    if summary is not None and len(summary):
        parts.append(frame_html(summary))
    parts.append(frame_html(table[columns], max_rows=head))
    return "\n".join(parts)
