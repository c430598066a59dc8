"""Hierarchical screening (a cascade): a cheap judge sees every item, a strong judge only the hard ones.

``judgelab.cascade(cheap, strong, escalate_when=0.75).run(items, rubric, ...)`` runs the cheap
judge (both orders by default, so position consistency gives each verdict a confidence), sends
the items whose cheap verdict is unscored or matches ``escalate_when`` to the strong judge, and
writes the final verdicts as judge ``"cascade:<cheap>-><strong>"`` rows.
:func:`cascade_from_tables` replays the same decision on tables where BOTH judges judged every
item (e.g. LLMBar's released ChatGPT and GPT-4 verdicts) and measures what the cascade costs:
strong calls saved, USD saved where prices are known, and agreement lost against running the
strong judge on everything (and accuracy against gold, when there is gold).

``escalate_when``: a number t (escalate when confidence < t), ``"inconsistent"`` (the two orders
disagree), ``"tie"`` (the cheap verdict is TIE), or a function of the consolidated cheap rows
returning a boolean per row. An unscored cheap verdict is always escalated.

Escalation with a guarantee: ``judgelab.cascade(cheap, strong, guarantee=(alpha, delta))`` plus
``.calibrate(labelled_table)``, or :func:`calibrate_cascade` and :func:`apply_cascade` on tables,
choose the confidence thresholds by Learn-then-Test (:func:`judgelab.stats.ltt_cascade`) so that, with
probability at least 1 − delta over the calibration items, the judges' verdicts on the items they keep
agree with gold at least 1 − alpha of the time; the rest go to humans (``CascadeResult.to_human``, a
review queue ready for :func:`judgelab.ensembles.review.import_review`). The report gives the share
kept by each judge, the share sent to humans, and the agreement on kept items where gold is known.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.engine.items import read_items
from judgelab.engine.runner import run
from judgelab.ensembles.confidence import POSITION_CONDITION, position_consistency
from judgelab.ensembles.panels import Panel
from judgelab.errors import ArgumentTypeError, ConfigError, user_errors
from judgelab.stats.bootstrap import DEFAULT_RESAMPLES, bootstrap, mean_statistic
from judgelab.stats.corrected.ltt import CascadeCalibration, cascade_decisions, ltt_cascade
from judgelab.stats.tidy import result_row, tidy_frame

__all__ = ["HUMAN_TIER", "SWAP_CONDITIONS", "Cascade", "CascadeResult", "EscalateWhen", "EscalationRule", "apply_cascade",
           "calibrate_cascade", "cascade", "cascade_from_tables", "cascade_report", "cascade_rows", "consolidated",
           "escalation_mask", "rule_from_verdicts", "tier_verdicts"]

EscalateWhen = float | str | Callable[[pd.DataFrame], Sequence[bool] | np.ndarray | pd.Series]
SWAP_CONDITIONS = ("original", "swapped")  # the two presentation orders a verdict is consolidated from


HUMAN_TIER = "human"  # the last tier of a guaranteed cascade: items no judge keeps


@dataclass
class CascadeResult:
    table: pd.DataFrame  # cheap rows, strong rows, their consolidated rows, and the cascade's rows
    report: pd.DataFrame  # tidy: escalation rate, calls, USD, agreement with strong-on-everything, accuracy
    to_human: pd.DataFrame | None = None  # guaranteed cascades: the review queue of items no judge kept


def _judge_name(judge: Any) -> str:
    if isinstance(judge, Panel):
        return judge.name
    if isinstance(judge, str):
        return judge
    if not hasattr(judge, "model_name"):
        raise ArgumentTypeError(f"a cascade tier is a model name, a judge object or a panel, not {type(judge).__name__}")
    return str(judge.model_name)


def _run_tier(tier: Any, items: pd.DataFrame, rubric: Any, **kwargs: Any) -> pd.DataFrame:
    """A tier is a model name, a judge object, or a panel (whose aggregate rows are its verdicts)."""
    if isinstance(tier, Panel):
        return tier.run(items, rubric, **kwargs)
    return run(items, rubric, tier, **kwargs)


@user_errors
def consolidated(table: pd.DataFrame, judge: str, conditions: tuple[str, str] = SWAP_CONDITIONS) -> pd.DataFrame:
    """One verdict per item for ``judge``: swap-consolidated when both orders exist, else its only order."""
    rows = table[(table["judge"] == judge) & table["side"].isna()]
    if rows.empty:
        raise ConfigError(f"judge {judge!r} has no whole-answer rows in the table")
    if rows["criterion"].nunique() > 1:  # per-criterion winners too: the cascade decides on the overall verdict
        if not (rows["criterion"] == "overall").any():
            raise ConfigError(f"judge {judge!r} has several criteria and no 'overall' verdict to screen on")
        rows = rows[rows["criterion"] == "overall"]
    if set(conditions) <= set(rows["condition"]):
        return position_consistency(rows, conditions=conditions)
    if rows["condition"].nunique() > 1:
        raise ConfigError(f"judge {judge!r} has conditions {sorted(set(rows['condition']))}; expected {conditions} "
                         "or a single condition")
    return rows.reset_index(drop=True)


@user_errors
def escalation_mask(verdicts: pd.DataFrame, escalate_when: EscalateWhen) -> np.ndarray:
    """True where a consolidated cheap verdict goes to the strong judge."""
    _check_rule(escalate_when)
    unscored = (~judgments.is_scored(verdicts)).to_numpy()
    if callable(escalate_when):
        chosen = np.asarray(escalate_when(verdicts), dtype=bool)
        if chosen.shape != unscored.shape:
            raise ConfigError(f"escalate_when returned {chosen.shape[0]} values for {len(verdicts)} verdicts")
    elif isinstance(escalate_when, int | float) and not isinstance(escalate_when, bool):
        conf = verdicts["confidence"].astype(float).to_numpy()
        chosen = ~(conf >= float(escalate_when))  # a missing confidence escalates too
    elif escalate_when == "inconsistent":
        chosen = np.array([judgments.detail(r).get("consistent") is False for _, r in verdicts.iterrows()])
    else:  # "tie" (_check_rule refused anything else)
        chosen = (verdicts["winner"] == "TIE").fillna(False).to_numpy(dtype=bool)
    return unscored | chosen


def _check_rule(escalate_when: EscalateWhen) -> None:
    if callable(escalate_when) or (isinstance(escalate_when, str) and escalate_when in ("inconsistent", "tie")):
        return
    if isinstance(escalate_when, bool) or not isinstance(escalate_when, int | float) or not 0 <= escalate_when <= 1:
        raise ConfigError(f"escalate_when must be a confidence threshold in [0, 1], 'inconsistent', 'tie' or a "
                         f"function, not {escalate_when!r}")


def _calls(rows: pd.DataFrame) -> int:
    """Model calls behind rows: unique call ids when recorded (one per row for released tables)."""
    with_id = rows["call_id"].notna()
    return int(rows.loc[with_id, "call_id"].nunique() + (~with_id).sum())


def _usd(rows: pd.DataFrame) -> float:
    costs = rows.drop_duplicates("call_id")["cost_usd"] if rows["call_id"].notna().all() else rows["cost_usd"]
    values = costs.astype(float).to_numpy()
    return float(values.sum()) if len(values) and np.isfinite(values).all() else float("nan")


@user_errors
def cascade_rows(cheap: pd.DataFrame, strong: pd.DataFrame, escalate: np.ndarray, name: str) -> pd.DataFrame:
    """The cascade's final verdicts: the cheap verdict, or the strong one where escalated."""
    if np.ndim(escalate) != 1 or len(escalate) != len(cheap):
        raise ConfigError(f"escalate must hold one True/False per cheap verdict ({len(cheap)}), got {escalate!r}")
    strong_by_item = strong.set_index("item_id")
    out = []
    for (_, row), up in zip(cheap.iterrows(), escalate, strict=True):
        src = strong_by_item.loc[row["item_id"]] if up and row["item_id"] in strong_by_item.index else row
        if up and row["item_id"] not in strong_by_item.index:
            raise ConfigError(f"item {row['item_id']!r} was escalated but the strong judge has no verdict for it")
        new = {c: src[c] for c in ("criterion", "status", "unscored_reason", "winner", "verdict", "score",
                                   "confidence", "condition", "rubric", "rubric_version")}
        new.update(run_id=f"{name}:{row['run_id']}", item_id=row["item_id"], judge=name, repeat=0,
                   detail={"tier": "strong" if up else "cheap", "escalated": bool(up)},
                   created_at=pd.Timestamp.now(tz="UTC"))
        out.append(new)
    return judgments.make_table(out)


def _gold(table: pd.DataFrame, gold: str | None) -> pd.Series | None:
    if gold is None or not (table["judge"] == gold).any():
        return None
    rows = table[(table["judge"] == gold) & judgments.is_scored(table) & table["side"].isna()]
    _one_label_per_item(rows, rows["winner"], gold)
    return rows.drop_duplicates("item_id").set_index("item_id")["winner"]


@user_errors
def cascade_report(cheap_rows: pd.DataFrame, strong_rows: pd.DataFrame, cheap: pd.DataFrame, strong_all: pd.DataFrame
                   | None, final: pd.DataFrame, escalate: np.ndarray, *, gold: pd.Series | None,
                   strong_rows_all: pd.DataFrame | None, n_resamples: int = DEFAULT_RESAMPLES,
                   seed: int = 0) -> pd.DataFrame:
    """Tidy report; ``strong_all`` / ``strong_rows_all`` are the strong judge on EVERY item (None if unknown)."""
    n = len(cheap)
    escalated_items = set(cheap.loc[escalate, "item_id"])
    strong_used = strong_rows[strong_rows["item_id"].isin(escalated_items)]
    rows = [result_row("escalation_rate", escalate.mean() if n else np.nan, n=n, method="share of items escalated",
                       n_escalated=int(escalate.sum()))]
    cheap_calls, strong_calls = _calls(cheap_rows), _calls(strong_used)
    rows.append(result_row("calls_cascade", cheap_calls + strong_calls, n=n, method="cheap calls on every item + "
                           "strong calls on escalated items", cheap_calls=cheap_calls, strong_calls=strong_calls))
    cost_cascade = _usd(cheap_rows) + _usd(strong_used)
    if strong_rows_all is not None:
        all_calls = _calls(strong_rows_all)
        rows.append(result_row("calls_strong_on_everything", all_calls, n=n, method="strong calls on every item"))
        rows.append(result_row("strong_calls_saved", 1 - strong_calls / all_calls if all_calls else np.nan, n=n,
                               method="share of strong calls avoided"))
        rows.append(result_row("net_calls_saved", all_calls - cheap_calls - strong_calls, n=n,
                               method="strong-on-everything calls minus cascade calls (cheap calls count)"))
        usd_all = _usd(strong_rows_all)
        note = "" if np.isfinite(cost_cascade) and np.isfinite(usd_all) else "price unknown for some calls"
        rows.append(result_row("usd_saved", usd_all - cost_cascade, n=n, note=note,
                               method="strong-on-everything cost minus cascade cost (USD)",
                               usd_cascade=cost_cascade, usd_strong_on_everything=usd_all))
    else:
        rows.append(result_row("usd_cascade", cost_cascade, n=n, method="cascade cost (USD)",
                               note="" if np.isfinite(cost_cascade) else "price unknown for some calls"))
    final_w = final.set_index("item_id")["winner"]
    if strong_all is not None:
        ref = strong_all.set_index("item_id")["winner"].reindex(final_w.index)
        same = np.array([isinstance(a, str) and a == b for a, b in zip(final_w, ref, strict=True)], dtype=float)
        b = bootstrap(mean_statistic(same), len(same), n_resamples=n_resamples, seed=seed, return_distribution=False)
        rows.append(result_row("agreement_with_strong_on_everything", b.estimate, n=len(same), **b.fields(),
                               method=f"share of items whose cascade verdict equals the strong judge's; CI: {b.method}"))
        rows.append(result_row("agreement_lost", 1 - b.estimate, n=len(same), ci_low=1 - b.ci_high,
                               ci_high=1 - b.ci_low, method="1 - agreement with strong on everything"))
    if gold is not None:
        labels = gold.reindex(final_w.index)
        correct = {}
        tiers = {"cheap_only": cheap.set_index("item_id")["winner"], "cascade": final_w}
        if strong_all is not None:
            tiers["strong_only"] = strong_all.set_index("item_id")["winner"]
        for tier, verdicts in tiers.items():
            v = verdicts.reindex(final_w.index)
            correct[tier] = np.array([isinstance(a, str) and a == g for a, g in zip(v, labels, strict=True)], float)
            b = bootstrap(mean_statistic(correct[tier]), len(labels), n_resamples=n_resamples, seed=seed,
                          return_distribution=False)
            rows.append(result_row(f"accuracy_{tier}", b.estimate, n=len(labels), **b.fields(),
                                   method=f"share matching gold (TIE and unscored count wrong); CI: {b.method}"))
        if "strong_only" in correct:
            diff = correct["cascade"] - correct["strong_only"]
            b = bootstrap(mean_statistic(diff), len(diff), n_resamples=n_resamples, seed=seed,
                          return_distribution=False)
            rows.append(result_row("accuracy_cascade_minus_strong", b.estimate, n=len(diff), **b.fields(),
                                   method=f"paired difference in accuracy; CI: paired {b.method}"))
    return tidy_frame(rows)


@user_errors
def cascade_from_tables(table: pd.DataFrame, cheap: str, strong: str, *, escalate_when: EscalateWhen = 0.75,
                        gold: str | None = "gold", conditions: tuple[str, str] = SWAP_CONDITIONS,
                        n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> CascadeResult:
    """Replay a cascade on a table where both judges judged every item; measure savings and agreement lost."""
    cheap_v, strong_v = consolidated(table, cheap, conditions), consolidated(table, strong, conditions)
    escalate = escalation_mask(cheap_v, escalate_when)
    name = f"cascade:{cheap}->{strong}"
    final = cascade_rows(cheap_v, strong_v, escalate, name)
    cheap_rows = table[table["judge"] == cheap]
    strong_rows = table[table["judge"] == strong]
    report = cascade_report(cheap_rows, strong_rows, cheap_v, strong_v, final, escalate, gold=_gold(table, gold),
                            strong_rows_all=strong_rows, n_resamples=n_resamples, seed=seed)
    return CascadeResult(table=final, report=report)


def _verdicts(rows: pd.DataFrame) -> pd.Series:
    """Each row's verdict: its winner, else its verdict label, else its score (None when it has none)."""
    out = pd.Series([None] * len(rows), index=rows.index, dtype=object)
    for col in ("score", "verdict", "winner"):  # the later columns win
        values = rows[col].astype(object)
        out = values.where(rows[col].notna(), out)
    return out


@user_errors
def tier_verdicts(table: pd.DataFrame, tiers: Sequence[str], *, gold: str | Mapping[str, Any] | None = "gold",
                  conditions: tuple[str, str] = SWAP_CONDITIONS) -> pd.DataFrame:
    """One row per item: each tier's consolidated verdict and confidence, and (with gold) whether it is right.

    Columns ``item_id``, ``<tier>|verdict``, ``<tier>|confidence`` (NaN for an unscored verdict: it is
    never kept), ``<tier>|correct`` and ``gold``. Items missing from a tier get NaN confidence.
    """
    if not tiers:
        raise ConfigError("give at least one judge tier")
    out: pd.DataFrame | None = None
    for tier in tiers:
        rows = consolidated(table, tier, conditions)
        ok = judgments.is_scored(rows)
        part = pd.DataFrame({"item_id": rows["item_id"].astype(str),
                             f"{tier}|verdict": _verdicts(rows).where(ok, None),
                             f"{tier}|confidence": rows["confidence"].astype(float).where(ok.to_numpy())})
        if part["item_id"].duplicated().any():
            raise ConfigError(f"judge {tier!r} has several consolidated verdicts for one item; filter to one "
                              "criterion and repeat first")
        out = part if out is None else out.merge(part, on="item_id", how="outer")
    assert out is not None
    if gold is not None:
        if isinstance(gold, str):
            rows = table[(table["judge"] == gold) & judgments.is_scored(table)]
            if rows.empty:
                raise ConfigError(f"no scored rows of gold {gold!r} in the table")
            _one_label_per_item(rows, _verdicts(rows), gold)
            labels = dict(zip(rows["item_id"].astype(str), _verdicts(rows), strict=True))
        else:
            labels = {str(k): v for k, v in dict(gold).items()}
        out["gold"] = out["item_id"].map(labels)
        for tier in tiers:
            out[f"{tier}|correct"] = [isinstance(g, str | int | float) and v is not None and v == g
                                      for v, g in zip(out[f"{tier}|verdict"], out["gold"], strict=True)]
    return out.sort_values("item_id").reset_index(drop=True)


def _one_label_per_item(rows: pd.DataFrame, labels: pd.Series, gold: str) -> None:
    """Refuse gold rows that give one item several different labels (never pick one of them silently)."""
    per_item = pd.DataFrame({"item_id": rows["item_id"].astype(str).to_numpy(),
                             "label": labels.astype(object).to_numpy()}).groupby("item_id")["label"].nunique()
    if (per_item > 1).any():
        first = list(per_item[per_item > 1].index[:3])
        raise ConfigError(f"gold {gold!r} gives {int((per_item > 1).sum())} item(s) several different labels (first: "
                          f"{first}); filter its rows to one criterion, condition and repeat")


@dataclass(frozen=True)
class EscalationRule:
    """Certified confidence thresholds for a cascade of judges (keep at the first tier that reaches its own)."""

    tiers: tuple[str, ...]
    calibration: CascadeCalibration

    @property
    def thresholds(self) -> dict[str, float]:
        return dict(zip(self.tiers, self.calibration.thresholds, strict=True))

    def report(self) -> pd.DataFrame:
        """The guarantee and what it costs on the calibration items, as a tidy frame."""
        return tidy_frame(self.report_rows())

    def report_rows(self) -> list[dict[str, Any]]:
        """The rows of :meth:`report`."""
        cal = self.calibration
        n = cal.n_calibration
        ltt = (f"Learn-then-Test over confidence thresholds (fixed sequence; Bonferroni over the later tiers' grid), "
               f"exact binomial p-values; calibration on {n} labelled items")
        note = "" if cal.certified else ("no threshold could be certified: every item goes to humans (label more "
                                         "calibration items, or relax alpha/delta)")
        rows = [result_row("guaranteed_agreement", 1 - cal.alpha, n=n, method=f"{ltt}: with probability >= "
                           f"{1 - cal.delta:g}, agreement with gold on the kept items >= {1 - cal.alpha:g}",
                           alpha=cal.alpha, delta=cal.delta, certified=cal.certified, note=note,
                           **{f"threshold|{t}": v for t, v in self.thresholds.items()}),
                result_row("coverage", cal.coverage, n=n, method="share of calibration items the judges keep"),
                result_row("calibration_agreement_on_kept", 1 - cal.risk if cal.n_kept else np.nan, n=cal.n_kept,
                           method="agreement with gold on the kept calibration items")]
        for tier, kept in zip(self.tiers, cal.kept_per_tier, strict=True):
            rows.append(result_row(f"kept_by|{tier}", kept / n if n else np.nan, n=n,
                                   method=f"share of calibration items {tier} keeps"))
        rows.append(result_row("to_human_rate", cal.to_human, n=n, method="share of calibration items no judge keeps"))
        return rows


@user_errors
def calibrate_cascade(table: pd.DataFrame, tiers: Sequence[str], *, alpha: float, delta: float,
                      gold: str | Mapping[str, Any] = "gold", conditions: tuple[str, str] = SWAP_CONDITIONS,
                      items: Sequence[str] | None = None, max_levels: int = 8) -> EscalationRule:
    """Certified thresholds for ``tiers`` (cheap first) from labelled calibration items (``items``: a subset).

    Every tier must have judged every calibration item (a replay of released verdicts, or a calibration
    run); the confidence is each tier's consolidated ``confidence`` (position consistency, votes,
    repeats or logprob mass). Items without gold are not calibration items.
    """
    frame = tier_verdicts(table, tiers, gold=gold, conditions=conditions)
    return rule_from_verdicts(frame, tiers, alpha=alpha, delta=delta, items=items, max_levels=max_levels)


@user_errors
def rule_from_verdicts(frame: pd.DataFrame, tiers: Sequence[str], *, alpha: float, delta: float,
                       items: Sequence[str] | None = None, max_levels: int = 8) -> EscalationRule:
    """:func:`calibrate_cascade` on a :func:`tier_verdicts` frame (compute it once to calibrate many splits)."""
    frame = frame[frame["gold"].notna()]
    if items is not None:
        frame = frame[frame["item_id"].isin(set(map(str, items)))]
    if frame.empty:
        raise ConfigError("no calibration item has a gold label and a verdict of every tier")
    cal = ltt_cascade([frame[f"{t}|confidence"].to_numpy() for t in tiers],
                      [frame[f"{t}|correct"].to_numpy(dtype=bool) for t in tiers], alpha=alpha, delta=delta,
                      max_levels=max_levels)
    return EscalationRule(tuple(tiers), cal)


@user_errors
def apply_cascade(table: pd.DataFrame, rule: EscalationRule, *, gold: str | Mapping[str, Any] | None = "gold",
                  conditions: tuple[str, str] = SWAP_CONDITIONS, items: Sequence[str] | None = None,
                  item_fields: pd.DataFrame | None = None, n_resamples: int = DEFAULT_RESAMPLES,
                  seed: int = 0) -> CascadeResult:
    """Replay a certified cascade on tables where every tier judged every item (``items``: a subset).

    The table of the result holds the kept verdicts as judge ``"cascade:<tier>->...->human"`` rows (detail
    names the tier); ``to_human`` is the review queue of the other items. The report adds, where gold is
    known on these items, the agreement on kept items (with a bootstrap interval) to the rule's report.
    """
    use_gold = gold if gold is not None and (not isinstance(gold, str) or (table["judge"] == gold).any()) else None
    frame = tier_verdicts(table, rule.tiers, gold=use_gold, conditions=conditions)
    if items is not None:
        frame = frame[frame["item_id"].isin(set(map(str, items)))].reset_index(drop=True)
    confs = [frame[f"{t}|confidence"].to_numpy(dtype=float) for t in rule.tiers]
    tier = cascade_decisions(confs, rule.calibration.thresholds)
    name = "cascade:" + "->".join([*rule.tiers, HUMAN_TIER])
    kept = tier >= 0
    rows = []
    for i in np.flatnonzero(kept):
        who = rule.tiers[tier[i]]
        verdict = frame.at[i, f"{who}|verdict"]
        is_label = isinstance(verdict, str)
        rows.append({"run_id": name, "item_id": frame.at[i, "item_id"], "rubric": "cascade", "criterion": "overall",
                     "judge": name, "condition": "original", "repeat": 0, "status": judgments.OK,
                     "winner": verdict if is_label and verdict in ("A", "B", "TIE") else None,
                     "verdict": verdict if is_label else None, "score": None if is_label else verdict,
                     "confidence": frame.at[i, f"{who}|confidence"],
                     "detail": {"tier": who, "threshold": rule.thresholds[who]}, "created_at": pd.Timestamp.now(tz="UTC")})
    final = judgments.make_table(rows) if rows else judgments.empty_table()
    n = len(frame)
    extra = [*rule.report_rows(), result_row("applied_coverage", kept.mean() if n else np.nan, n=n,
                        method="share of these items the judges keep"),
             result_row("applied_to_human_rate", 1 - kept.mean() if n else np.nan, n=n,
                        method="share of these items sent to humans", n_to_human=int((~kept).sum()))]
    for k, t in enumerate(rule.tiers):
        extra.append(result_row(f"applied_kept_by|{t}", float((tier == k).mean()) if n else np.nan, n=n,
                                method=f"share of these items {t} keeps"))
    if "gold" in frame.columns and kept.any():
        known = kept & frame["gold"].notna().to_numpy()
        right = np.array([frame.at[i, f"{rule.tiers[tier[i]]}|correct"] for i in np.flatnonzero(known)], dtype=float)
        if len(right):
            b = bootstrap(mean_statistic(right), len(right), n_resamples=n_resamples, seed=seed,
                          return_distribution=False)
            extra.append(result_row("agreement_on_kept", b.estimate, n=len(right), **b.fields(),
                                    method=f"share of kept verdicts matching gold; CI: {b.method}",
                                    guaranteed_at_least=1 - rule.calibration.alpha))
    judged = table[table["judge"].isin(rule.tiers)]
    human_keys = pd.DataFrame({"item_id": frame.loc[~kept, "item_id"].to_numpy(), "criterion": "overall",
                               "side": None})
    from judgelab.ensembles.review import _queue  # the review queue's layout, same subpackage

    judged = judged.assign(item_id=judged["item_id"].astype(str))
    human_rows = judged[judged["side"].isna()]
    keys = human_rows.merge(human_keys[["item_id"]], on="item_id")[["item_id", "criterion", "side"]].drop_duplicates()
    queue = _queue(human_rows, keys, item_fields)
    return CascadeResult(table=final, report=tidy_frame(extra), to_human=queue)


class Cascade:
    """A cheap judge screens every item; a strong judge re-judges the escalated ones (see module docstring)."""

    def __init__(self, cheap: Any, strong: Any, *, escalate_when: EscalateWhen = 0.75,
                 cheap_kwargs: dict[str, Any] | None = None, strong_kwargs: dict[str, Any] | None = None,
                 guarantee: tuple[float, float] | None = None) -> None:
        _check_rule(escalate_when)
        self.cheap, self.strong, self.escalate_when = cheap, strong, escalate_when
        self.cheap_kwargs, self.strong_kwargs = dict(cheap_kwargs or {}), dict(strong_kwargs or {})
        if guarantee is not None and (len(guarantee) != 2 or not all(0 < float(v) < 1 for v in guarantee)):
            raise ConfigError(f"guarantee must be (alpha, delta), both in (0, 1), not {guarantee!r}")
        self.guarantee = guarantee
        self.rule: EscalationRule | None = None
        suffix = f"->{HUMAN_TIER}" if guarantee else ""
        self.name = f"cascade:{self._name(cheap)}->{self._name(strong)}{suffix}"

    def calibrate(self, table: pd.DataFrame, *, gold: str | Mapping[str, Any] = "gold",
                  items: Sequence[str] | None = None, max_levels: int = 8) -> EscalationRule:
        """Certify the thresholds of a ``guarantee=(alpha, delta)`` cascade on labelled calibration items.

        ``table``: both judges' rows (both orders, or another confidence) and gold rows for the same
        items, e.g. from a calibration run or released verdicts. The rule is kept for :meth:`run`.
        """
        if self.guarantee is None:
            raise ConfigError("calibrate() certifies a guarantee: create the cascade with guarantee=(alpha, delta)")
        alpha, delta = self.guarantee
        self.rule = calibrate_cascade(table, [self._name(self.cheap), self._name(self.strong)], alpha=alpha,
                                      delta=delta, gold=gold, items=items, max_levels=max_levels)
        return self.rule

    @staticmethod
    def _name(judge: Any) -> str:
        return _judge_name(judge)

    def run(self, items: Any, rubric: Any, *, swap: bool = True, measure_against_strong: bool = False,
            gold: Mapping[str, str] | pd.Series | None = None, **run_kwargs: Any) -> CascadeResult:
        """Run the cascade. ``measure_against_strong`` also runs the strong judge on every item (for a
        study: the calls it adds are not part of the cascade's cost). ``gold``: item_id -> winner."""
        if self.guarantee is not None and self.rule is None:
            raise ConfigError("this cascade has a guarantee: certify its thresholds with .calibrate(labelled_table) "
                              "before run()")
        item_df = read_items(items)
        cheap_table = _run_tier(self.cheap, item_df, rubric, swap=swap, **{**run_kwargs, **self.cheap_kwargs})
        cheap_name, strong_name = self._name(self.cheap), self._name(self.strong)
        cheap_v = consolidated(cheap_table, cheap_name)
        rule = self.rule
        escalate = escalation_mask(cheap_v, self.escalate_when if rule is None else
                                   (lambda v: ~(v["confidence"].astype(float) >= rule.thresholds[cheap_name])
                                    .to_numpy(dtype=bool)))
        wanted = item_df if measure_against_strong else item_df[item_df["item_id"].isin(set(cheap_v.loc[escalate,
                                                                                                          "item_id"]))]
        strong_table = judgments.empty_table()
        if len(wanted):
            strong_table = _run_tier(self.strong, wanted, rubric, swap=swap, **{**run_kwargs, **self.strong_kwargs})
        strong_v = consolidated(strong_table, strong_name) if len(strong_table) else strong_table
        final = cascade_rows(cheap_v, strong_v, escalate, self.name)
        gold_series = None if gold is None else pd.Series(dict(gold), dtype=object)
        report = cascade_report(cheap_table, strong_table, cheap_v, strong_v if measure_against_strong else None,
                                final, escalate, gold=gold_series,
                                strong_rows_all=strong_table if measure_against_strong else None)
        to_human = None
        if rule is not None:
            final, report, to_human = self._to_humans(rule, final, report, cheap_table, strong_table, strong_v,
                                                      escalate, cheap_v, item_df)
        parts = [cheap_table, strong_table, final]
        if POSITION_CONDITION in set(cheap_v["condition"]):
            parts.append(cheap_v)
        if len(strong_v) and POSITION_CONDITION in set(strong_v["condition"]):
            parts.append(strong_v)
        table = judgments.validate(pd.concat([p for p in parts if len(p)], ignore_index=True))
        return CascadeResult(table=table, report=report, to_human=to_human)

    def _to_humans(self, rule: EscalationRule, final: pd.DataFrame, report: pd.DataFrame, cheap_table: pd.DataFrame,
                   strong_table: pd.DataFrame, strong_v: pd.DataFrame, escalate: np.ndarray, cheap_v: pd.DataFrame,
                   item_df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """Send the escalated items the strong judge is not confident about to humans."""
        from judgelab.ensembles.review import _queue  # the review queue's layout, same subpackage

        strong_name = self._name(self.strong)
        conf = (strong_v.set_index("item_id")["confidence"].astype(float).where(judgments.is_scored(strong_v).to_numpy())
                if len(strong_v) else pd.Series(dtype=float))
        escalated = cheap_v.loc[escalate, "item_id"]
        human = [i for i in escalated if not conf.get(i, np.nan) >= rule.thresholds[strong_name]]
        n = len(cheap_v)
        rows = [*report.to_dict("records"), *rule.report_rows(),
                result_row("applied_to_human_rate", len(human) / n if n else np.nan, n=n,
                           method="share of these items sent to humans", n_to_human=len(human))]
        judged = pd.concat([p for p in (cheap_table, strong_table) if len(p)], ignore_index=True)
        judged = judged[judged["side"].isna()]
        keys = judged[judged["item_id"].isin(human)][["item_id", "criterion", "side"]].drop_duplicates()
        return final[~final["item_id"].isin(human)], tidy_frame(rows), _queue(judged, keys, item_df)


@user_errors
def cascade(cheap: Any, strong: Any, *, escalate_when: EscalateWhen = 0.75,
            guarantee: tuple[float, float] | None = None, **kwargs: Any) -> Cascade:
    """A :class:`Cascade`; cheap and strong are model names, judge objects or panels.

    ``guarantee=(alpha, delta)``: certify the thresholds with ``.calibrate(labelled_table)`` (Learn-then-Test;
    ``escalate_when`` is then replaced by the certified thresholds) and send what neither judge keeps to humans.
    """
    return Cascade(cheap, strong, escalate_when=escalate_when, guarantee=guarantee, **kwargs)
