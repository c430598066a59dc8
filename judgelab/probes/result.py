"""ProbeResult: what every bias probe returns (the judgments table, a tidy summary, a plot)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

SUMMARY_COLUMNS: tuple[str, ...] = (
    "statistic", "condition", "estimate", "ci_low", "ci_high", "p_value", "n", "method", "policy", "note",
)


def summary_row(
    statistic: str,
    estimate: float,
    *,
    n: int,
    method: str,
    condition: str = "",
    ci_low: float = math.nan,
    ci_high: float = math.nan,
    p_value: float = math.nan,
    policy: str = "",
    note: str = "",
) -> dict[str, Any]:
    """One summary row; NaN (never 0) where a value is undefined, with ``note`` saying why."""
    return {
        "statistic": statistic,
        "condition": condition,
        "estimate": _float(estimate),
        "ci_low": _float(ci_low),
        "ci_high": _float(ci_high),
        "p_value": _float(p_value),
        "n": int(n),
        "method": method,
        "policy": policy,
        "note": note,
    }


def from_stats_frame(frame: pd.DataFrame, *, statistic: str | None = None, condition: str = "",
                     policy: str = "", note: str = "") -> list[dict[str, Any]]:
    """Rows of a judgelab.stats tidy frame (metric/estimate/ci/p/n/method) as summary rows."""
    rows = []
    for rec in frame.to_dict(orient="records"):
        notes = [x for x in (str(rec.get("note") or ""), note) if x]
        rows.append(summary_row(
            statistic or str(rec["metric"]), rec["estimate"], n=int(rec["n"]), method=str(rec["method"]),
            condition=condition, ci_low=rec.get("ci_low", math.nan), ci_high=rec.get("ci_high", math.nan),
            p_value=rec.get("p_value", math.nan), policy=policy, note="; ".join(notes),
        ))
    return rows


def summary_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows), columns=list(SUMMARY_COLUMNS))
    for col in ("estimate", "ci_low", "ci_high", "p_value"):
        df[col] = df[col].astype(float)
    df["n"] = df["n"].astype(int)
    return df


def _float(value: Any) -> float:
    if value is None or value is pd.NA:
        return math.nan
    return float(value)


@dataclass
class ProbeResult:
    """A probe's outcome.

    ``table``: the judgments table, one ``condition`` per perturbation; ``summary``: tidy statistics
    (see SUMMARY_COLUMNS); ``details``: probe-specific frames (per-item pairs, sensitivity tables);
    ``meta``: what was run (probe name, model, rubric, parameters).
    """

    probe: str
    table: pd.DataFrame
    summary: pd.DataFrame
    details: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    plotter: Callable[[ProbeResult, Any], Any] | None = None

    def statistic(self, name: str, condition: str = "", policy: str | None = None) -> pd.Series:
        """The one summary row with this statistic (and condition/policy); KeyError naming it if absent."""
        s = self.summary
        mask = (s["statistic"] == name) & (s["condition"] == condition)
        if policy is not None:
            mask &= s["policy"] == policy
        found = s[mask]
        if len(found) != 1:
            raise KeyError(f"probe {self.probe!r} has {len(found)} summary rows for statistic {name!r} "
                           f"(condition {condition!r}, policy {policy!r})")
        return found.iloc[0]

    def summary_json(self) -> str:
        """The summary as ONE line of JSON (NaN -> null), with the probe's metadata."""
        records = [{k: _jsonable(v) for k, v in rec.items()} for rec in self.summary.to_dict(orient="records")]
        payload = {"probe": self.probe, **{k: _jsonable(v) for k, v in self.meta.items()}, "summary": records}
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))

    def plot(self, ax: Any = None) -> Any:
        """A seaborn figure of the probe's estimates with their intervals; returns the Axes."""
        if self.plotter is not None:
            return self.plotter(self, ax)
        return plot_estimates(self, ax)

    def __repr__(self) -> str:
        return f"ProbeResult({self.probe!r}: {len(self.table)} judgment rows, {len(self.summary)} statistics)"


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


def plot_estimates(result: ProbeResult, ax: Any = None, statistics: Iterable[str] | None = None) -> Any:
    """Point estimates with their interval as horizontal error bars, one line per statistic x condition."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    s = result.summary
    if statistics is not None:
        s = s[s["statistic"].isin(list(statistics))]
    s = s[np.isfinite(s["estimate"].to_numpy(dtype=float))].copy()
    labels = s["statistic"] + s["condition"].map(lambda c: f" [{c}]" if c else "")
    # the policy only tells rows apart when one statistic is reported under several policies
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
