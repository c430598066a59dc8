"""A panel of judges (PoLL, a "panel of LLM evaluators"): several models judge the same items; a rule combines their votes.

``judgelab.panel([...], aggregate="majority").run(items, rubric, ...)`` runs every member (each a
model name, a mapping with ``model``/``name``/``api_base``/``api_key``/``weight``, or a judge object
such as :func:`judgelab.backends.router.router_judge`) with the usual :func:`judgelab.run` options and
returns ONE judgments table: each member's own rows (``judge`` = member name) plus one aggregate row
per item x criterion x side x condition x repeat with ``judge = "panel:<rule>"``.

Rules (the same rule is applied to each condition separately; swap consolidation is
:func:`judgelab.ensembles.confidence.position_consistency`):

=============  =====================================  ===============================================
rule           pairwise winners ("A"/"B"/"TIE")       scores
=============  =====================================  ===============================================
``majority``   most votes                             most common score (the mode)
``weighted``   most weight (``weights=``)             weighted mean
``mean``       not defined (raises)                   mean
``median``     not defined (raises)                   median (the midpoint of the two middle scores)
=============  =====================================  ===============================================

Ties are settled by ``tie``: ``"tie"`` gives the verdict "TIE" (scores: the mean of the tied modal
scores); ``"first_member"`` takes the vote of the earliest member (in panel order) among the tied
options. An aggregate needs ``quorum`` scored members (default: half of the members, rounded up);
with fewer it is an unscored row naming how many members scored, never a guess.

The aggregate's ``confidence`` is member agreement: the (weighted) share of scoring members whose
vote is the aggregate verdict (scores: the share within ``score_tolerance`` of the aggregate).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.engine.runner import RunAborted, RunStats, arun
from judgelab.engine.sync import run_sync
from judgelab.ensembles.confidence import key_groups

__all__ = ["GROUP_KEYS", "RULES", "TIE_RULES", "Member", "Panel", "PanelResult", "Rule", "TieRule", "aggregate_panel",
           "panel"]

Rule = Literal["majority", "weighted", "mean", "median"]
TieRule = Literal["tie", "first_member"]
RULES: tuple[str, ...] = ("majority", "weighted", "mean", "median")
TIE_RULES: tuple[str, ...] = ("tie", "first_member")
GROUP_KEYS: tuple[str, ...] = ("item_id", "criterion", "side", "condition", "repeat")


@dataclass(frozen=True)
class Member:
    """One panel member: what to call (a model name or judge object), its name in the table, its weight."""

    model: Any
    name: str
    api_base: str | None = None
    api_key: str | None = None
    weight: float = 1.0


@dataclass
class PanelResult:
    table: pd.DataFrame
    stats: dict[str, RunStats] = field(default_factory=dict)
    aborted: dict[str, str] = field(default_factory=dict)  # member -> why its run stopped early


def _member(spec: Any, weight: float | None) -> Member:
    if isinstance(spec, str):
        return Member(spec, spec, weight=1.0 if weight is None else weight)
    if isinstance(spec, Mapping):
        unknown = set(spec) - {"model", "name", "api_base", "api_key", "weight"}
        if unknown or "model" not in spec:
            raise ValueError(f"a panel member mapping needs 'model' (and may have name, api_base, api_key, "
                             f"weight); got keys {sorted(spec)}")
        model = spec["model"]
        name = spec.get("name") or (model if isinstance(model, str) else model.model_name)
        w = spec.get("weight", 1.0 if weight is None else weight)
        return Member(model, str(name), spec.get("api_base"), spec.get("api_key"), float(w))
    if hasattr(spec, "model_name") and hasattr(spec, "acall"):
        return Member(spec, str(spec.model_name), weight=1.0 if weight is None else weight)
    raise TypeError(f"a panel member must be a model name, a mapping or a judge object, not {type(spec).__name__}")


class Panel:
    """Members plus the aggregation rule; use :meth:`run` (or :meth:`arun`) like :func:`judgelab.run`."""

    def __init__(self, members: Sequence[Any], aggregate: Rule = "majority", *,
                 weights: Mapping[str, float] | Sequence[float] | None = None, tie: TieRule = "tie",
                 quorum: int | None = None, score_tolerance: float = 0.5) -> None:
        if aggregate not in RULES:
            raise ValueError(f"aggregate must be one of {RULES}, not {aggregate!r}")
        if tie not in TIE_RULES:
            raise ValueError(f"tie must be one of {TIE_RULES}, not {tie!r}")
        if len(members) < 2:
            raise ValueError("a panel needs at least two members")
        listed = list(weights) if weights is not None and not isinstance(weights, Mapping) else None
        if listed is not None and len(listed) != len(members):
            raise ValueError(f"weights has {len(listed)} values for {len(members)} members")
        self.members = [_member(m, listed[i] if listed else None) for i, m in enumerate(members)]
        if isinstance(weights, Mapping):
            unknown = set(weights) - {m.name for m in self.members}
            if unknown:
                raise ValueError(f"weights name judges that are not members: {sorted(unknown)}")
            self.members = [Member(m.model, m.name, m.api_base, m.api_key, float(weights.get(m.name, m.weight)))
                            for m in self.members]
        names = [m.name for m in self.members]
        if len(set(names)) != len(names):
            raise ValueError(f"panel member names must be distinct: {names} (give each a 'name')")
        if any(m.weight < 0 or not math.isfinite(m.weight) for m in self.members):
            raise ValueError("member weights must be finite and non-negative")
        self.rule, self.tie, self.score_tolerance = aggregate, tie, score_tolerance
        self.quorum = quorum if quorum is not None else math.ceil(len(self.members) / 2)
        if not 1 <= self.quorum <= len(self.members):
            raise ValueError(f"quorum must be between 1 and {len(self.members)}, got {quorum}")

    @property
    def name(self) -> str:
        return f"panel:{self.rule}"

    @property
    def weights(self) -> dict[str, float]:
        return {m.name: m.weight for m in self.members}

    async def arun(self, items: Any, rubric: Any, *, return_stats: bool = False,
                   **run_kwargs: Any) -> pd.DataFrame | PanelResult:
        """Run every member concurrently (each with ``run_kwargs``), then add the aggregate rows."""
        for reserved in ("judge", "api_base", "api_key"):
            if reserved in run_kwargs:
                raise ValueError(f"{reserved}= is set per member (a mapping with {reserved!r}), not for the panel")
        runs = [arun(items, rubric, m.model, judge=m.name, api_base=m.api_base, api_key=m.api_key,
                     return_stats=True, **run_kwargs) for m in self.members]
        outcomes = await asyncio.gather(*runs, return_exceptions=True)
        result = PanelResult(table=judgments.empty_table())
        tables = []
        for member, outcome in zip(self.members, outcomes, strict=True):
            if isinstance(outcome, RunAborted):  # its rows are all there, unscored where it stopped
                result.aborted[member.name] = str(outcome)
                outcome = outcome.result
            elif isinstance(outcome, BaseException):
                raise outcome
            tables.append(outcome.table)
            result.stats[member.name] = outcome.stats
        members_table = pd.concat(tables, ignore_index=True)
        result.table = judgments.validate(pd.concat([members_table, self.aggregate(members_table)],
                                                    ignore_index=True))
        return result if return_stats else result.table

    def run(self, items: Any, rubric: Any, **kwargs: Any) -> pd.DataFrame | PanelResult:
        """Synchronous :meth:`arun`; safe inside a running event loop (Jupyter)."""
        return run_sync(lambda: self.arun(items, rubric, **kwargs), name="judgelab-panel")

    def aggregate(self, table: pd.DataFrame) -> pd.DataFrame:
        """The aggregate rows for the members' rows in ``table`` (other judges' rows are ignored)."""
        return aggregate_panel(table, [m.name for m in self.members], self.rule, weights=self.weights,
                               tie=self.tie, quorum=self.quorum, score_tolerance=self.score_tolerance)


def panel(members: Sequence[Any], aggregate: Rule = "majority", *,
          weights: Mapping[str, float] | Sequence[float] | None = None, tie: TieRule = "tie",
          quorum: int | None = None, score_tolerance: float = 0.5) -> Panel:
    """A :class:`Panel` of judges; see the module docstring for the rules, the tie rule and the quorum."""
    return Panel(members, aggregate, weights=weights, tie=tie, quorum=quorum, score_tolerance=score_tolerance)


def aggregate_panel(table: pd.DataFrame, judges: Sequence[str], rule: Rule = "majority", *,
                    weights: Mapping[str, float] | None = None, tie: TieRule = "tie", quorum: int | None = None,
                    score_tolerance: float = 0.5, judge_name: str | None = None) -> pd.DataFrame:
    """Aggregate rows (judge ``panel:<rule>``) from the rows of ``judges`` in an existing table.

    Works on any judgments table (e.g. released judgments of several models), not only on a run.
    """
    if rule not in RULES:
        raise ValueError(f"aggregate must be one of {RULES}, not {rule!r}")
    if tie not in TIE_RULES:
        raise ValueError(f"tie must be one of {TIE_RULES}, not {tie!r}")
    judges = list(judges)
    absent = [j for j in judges if not (table["judge"] == j).any()]
    if absent:
        raise ValueError(f"panel member(s) {absent} have no rows in the table")
    weights = {j: float((weights or {}).get(j, 1.0)) for j in judges}
    quorum = quorum if quorum is not None else math.ceil(len(judges) / 2)
    rows = table[table["judge"].isin(judges)]
    run_id = "panel-" + hashlib.sha256("|".join(sorted(set(rows["run_id"].astype(str)))).encode()).hexdigest()[:12]
    order = {j: i for i, j in enumerate(judges)}
    out = []
    for base, group in key_groups(rows, GROUP_KEYS):
        group = group.sort_values("judge", key=lambda s: s.map(order))
        dup = group["judge"].duplicated()
        if dup.any():
            raise ValueError(f"judge {group.loc[dup, 'judge'].iloc[0]!r} has several rows for {base}")
        base = dict(base)
        base.update(run_id=run_id, rubric=group["rubric"].iloc[0], rubric_version=group["rubric_version"].iloc[0],
                    judge=judge_name or f"panel:{rule}", created_at=pd.Timestamp.now(tz="UTC"))
        out.append(_aggregate_group(group, base, rule, weights, tie, quorum, score_tolerance, len(judges)))
    return judgments.make_table(out) if out else judgments.empty_table()


def _aggregate_group(group: pd.DataFrame, base: dict[str, Any], rule: str, weights: Mapping[str, float],
                     tie: str, quorum: int, tolerance: float, n_members: int) -> dict[str, Any]:
    ok = judgments.scored(group)
    labels = ok["winner"].notna().any()
    votes: dict[str, Any]
    if labels:
        votes = {j: w for j, w in zip(ok["judge"], ok["winner"], strict=True) if isinstance(w, str)}
    else:
        votes = {j: float(s) for j, s in zip(ok["judge"], ok["score"], strict=True) if pd.notna(s)}
    detail: dict[str, Any] = {"rule": rule, "tie_rule": tie, "votes": votes, "members": n_members}
    if len(votes) < quorum:
        statuses = Counter(group.loc[~judgments.is_scored(group), "status"])
        status = statuses.most_common(1)[0][0] if statuses else judgments.PARSE_ERROR
        reason = f"only {len(votes)} of {n_members} panel members scored this (quorum {quorum})"
        return {**base, "status": status, "unscored_reason": reason, "detail": detail}
    w = {j: weights[j] for j in votes}
    if labels:
        if rule in ("mean", "median"):
            raise ValueError(f"aggregate={rule!r} needs scores; pairwise winners use 'majority' or 'weighted'")
        tally: Counter[str] = Counter()
        for j, v in votes.items():
            tally[v] += w[j] if rule == "weighted" else 1.0
        winner, tied = _pick(tally, votes, tie)
        total = sum(tally.values())
        conf = tally[winner] / total if total > 0 else math.nan
        if winner == "TIE" and "TIE" not in tally:
            conf = max(tally.values()) / total if total > 0 else math.nan  # the tied options' share
        detail["tie_broken"] = tied
        return {**base, "status": judgments.OK, "winner": winner, "verdict": winner, "confidence": conf,
                "detail": detail}
    values = np.array(list(votes.values()), dtype=float)
    wv = np.array(list(w.values()), dtype=float)
    if rule == "mean":
        score = float(values.mean())
    elif rule == "median":
        score = float(np.median(values))
    elif rule == "weighted":
        if wv.sum() <= 0:
            raise ValueError("weighted aggregate: the scoring members' weights sum to zero")
        score = float(np.average(values, weights=wv))
    else:
        tally = Counter({float(v): 0.0 for v in values})
        for v in values:
            tally[float(v)] += 1.0
        picked, tied = _pick(tally, {j: float(v) for j, v in votes.items()}, tie)
        score = float(np.mean([v for v, c in tally.items() if c == max(tally.values())])) if picked == "TIE" \
            else float(picked)
        detail["tie_broken"] = tied
    conf = float(np.mean(np.abs(values - score) <= tolerance))
    return {**base, "status": judgments.OK, "score": score, "confidence": conf, "detail": detail}


def _pick(tally: Counter[Any], votes: Mapping[str, Any], tie: str) -> tuple[Any, bool]:
    """(the option with the most votes, whether a tie had to be broken)."""
    top = max(tally.values())
    leaders = [o for o, c in tally.items() if math.isclose(c, top)]
    if len(leaders) == 1:
        return leaders[0], False
    if tie == "first_member":
        return next(v for v in votes.values() if v in leaders), True
    return "TIE", True
