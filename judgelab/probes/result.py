"""ProbeResult: what every bias probe returns (the judgments table, a tidy summary, a plot).

The summary is a tidy result frame like every statistic's (:mod:`judgelab.stats.tidy`):
``metric, estimate, ci_low, ci_high, p_value, n, method``, then the probe's ``condition`` (the
perturbation a row measures, "" when it measures all of them) and ``policy`` (how unscored and
tied verdicts were counted), and ``note`` (why a value is NaN, what was dropped).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.stats import EmptyInputError
from judgelab.stats.tidy import BASE_COLUMNS, join_notes, result_row, tidy_frame

__all__ = ["SUMMARY_COLUMNS", "MetricNotFoundError", "ProbeResult", "from_stats_frame", "plot_estimates", "stats_rows",
           "summary_frame"]


class MetricNotFoundError(JudgelabError, KeyError):
    """``ProbeResult.metric`` found no (or several) summary rows for the metric asked for."""

PROBE_CONTEXT: dict[str, str] = {"condition": "", "policy": ""}  # the columns a probe adds, and their default
SUMMARY_COLUMNS: tuple[str, ...] = (*BASE_COLUMNS, *PROBE_CONTEXT, "note")


def from_stats_frame(frame: pd.DataFrame, *, metric: str | None = None, condition: str = "",
                     policy: str = "", note: str = "") -> list[dict[str, Any]]:
    """The rows of a :mod:`judgelab.stats` result frame as probe summary rows (renamed ``metric`` if given)."""
    return [result_row(metric or str(rec["metric"]), rec["estimate"], n=int(rec["n"]), method=str(rec["method"]),
                       ci_low=rec.get("ci_low", math.nan), ci_high=rec.get("ci_high", math.nan),
                       p_value=rec.get("p_value", math.nan), note=join_notes(str(rec.get("note") or ""), note),
                       condition=condition, policy=policy)
            for rec in frame.to_dict(orient="records")]


def stats_rows(compute: Callable[[], pd.DataFrame], metrics: Sequence[str], *, condition: str = "",
               policy: str = "", note: str = "") -> list[dict[str, Any]]:
    """The ``metrics`` rows of the stats frame ``compute()`` returns, as probe summary rows; when the statistic
    has no scored data to work on (a live judge whose every answer was unscored), one row per metric with
    NaN, n = 0 and a note saying so, instead of an error that would lose the probe's table."""
    try:
        frame = compute()
    except EmptyInputError as err:
        return [result_row(m, math.nan, n=0, method="not computed", condition=condition, policy=policy,
                           note=join_notes(f"no scored data: {err}", note)) for m in metrics]
    return from_stats_frame(frame[frame["metric"].isin(list(metrics))], condition=condition, policy=policy, note=note)


def summary_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A probe summary from result rows (:func:`judgelab.stats.tidy.result_row` with condition/policy)."""
    return tidy_frame(rows, defaults=PROBE_CONTEXT)[list(SUMMARY_COLUMNS)]


@dataclass
class ProbeResult:
    """A probe's outcome.

    ``table``: the judgments table, one ``condition`` per perturbation; ``summary``: tidy statistics
    (:data:`SUMMARY_COLUMNS`); ``details``: probe-specific frames (per-item pairs, sensitivity tables);
    ``meta``: what was run (probe name, model, rubric, parameters).
    """

    probe: str
    table: pd.DataFrame
    summary: pd.DataFrame
    details: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    plotter: Callable[[ProbeResult, Any], Any] | None = None

    def metric(self, name: str, condition: str = "", policy: str | None = None) -> pd.Series:
        """The one summary row of this metric (and condition/policy); KeyError naming it if absent."""
        s = self.summary
        mask = (s["metric"] == name) & (s["condition"] == condition)
        if policy is not None:
            mask &= s["policy"] == policy
        found = s[mask]
        if len(found) != 1:
            raise MetricNotFoundError(f"probe {self.probe!r} has {len(found)} summary rows for metric {name!r} "
                           f"(condition {condition!r}, policy {policy!r})")
        return found.iloc[0]

    def statistic(self, name: str, condition: str = "", policy: str | None = None) -> pd.Series:
        """Renamed :meth:`metric` (the summary's ``statistic`` column is now ``metric``); works until 0.3."""
        warnings.warn("ProbeResult.statistic() is now ProbeResult.metric(); the old name works until judgelab 0.3",
                      FutureWarning, stacklevel=2)
        return self.metric(name, condition, policy)

    def summary_json(self) -> str:
        """The summary as ONE line of JSON (NaN -> null), with the probe's metadata."""
        records = [{k: _jsonable(v) for k, v in rec.items()} for rec in self.summary.to_dict(orient="records")]
        payload = {"probe": self.probe, **{k: _jsonable(v) for k, v in self.meta.items()}, "summary": records}
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))

    def plot(self, ax: Any = None) -> Any:
        """The probe's estimates with their intervals: the Axes (drawn into ``ax`` when given), or the
        Figure when the probe's plot has several panels (position: rates and policies)."""
        if self.plotter is not None:
            return self.plotter(self, ax)
        return plot_estimates(self, ax)

    def __repr__(self) -> str:
        return f"ProbeResult({self.probe!r}: {len(self.table)} judgment rows, {len(self.summary)} summary rows)"

    def _repr_html_(self) -> str:
        """The notebook view: the summary line, the summary (intervals and p-values in one cell), the table's head."""
        from judgelab.viz.notebook_views import result_html

        return result_html(f"{self.probe} probe", self.table, summary=self.summary)


def _jsonable(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if value is pd.NA or value is None:
        return None
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def plot_estimates(result: ProbeResult, ax: Any = None, metrics: Iterable[str] | None = None) -> Any:
    """Point estimates with their interval as horizontal error bars, one line per metric x condition; the Axes."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    s = result.summary
    if metrics is not None:
        s = s[s["metric"].isin(list(metrics))]
    s = s[np.isfinite(s["estimate"].to_numpy(dtype=float))].copy()
    labels = s["metric"] + s["condition"].map(lambda c: f" [{c}]" if c else "")
    # the policy only tells rows apart when one metric is reported under several policies
    repeated = labels.duplicated(keep=False)
    s["label"] = labels + s["policy"].where(repeated, "").map(lambda p: f" ({p})" if p else "")
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.45 * max(len(s), 2) + 1.2))
    sns.scatterplot(data=s, x="estimate", y="label", ax=ax, color="black", zorder=3)
    lo = (s["estimate"] - s["ci_low"]).clip(lower=0).fillna(0).to_numpy()
    hi = (s["ci_high"] - s["estimate"]).clip(lower=0).fillna(0).to_numpy()
    ax.errorbar(s["estimate"], s["label"], xerr=[lo, hi], fmt="none", ecolor="grey", capsize=3)
    ax.set_xlabel("estimate (bars: reported interval)")
    ax.set_ylabel("")
    ax.set_title(f"{result.probe} probe")
    return ax
