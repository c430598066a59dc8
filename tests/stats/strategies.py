"""Hypothesis strategies that generate judgments tables, for property tests of statistics and probes.

A generated :class:`Design` is a full judgments table over items x raters x criteria x conditions x
repeats, with the messes real tables have: unscored rows (status ``parse_error``), missing rows (no row
at all for a judge's item), model judges, human annotators (``human:<name>``) and a gold rater, and a
``document_id`` (two items per document) and ``system`` column to cluster and group on. Hypothesis draws
the structure (how many items, judges, criteria ...) and one seed; the values come from a seeded NumPy
generator around a latent truth per item and criterion, so statistics are not degenerate and examples
are cheap. Transforms give the variants the properties compare: :func:`cell` (one design cell of a
bigger table), :func:`shuffled`, :func:`renamed`, :func:`with_duplicate`.

Other test modules import these (``from tests.stats.strategies import designs``); :data:`PROPERTY`
is the settings every property test uses: derandomized (the same examples on every run, so CI is
deterministic), a bounded number of examples, no deadline (bootstraps vary in time on a shared machine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st

from judgelab.judgments import make_table

__all__ = ["FAST", "PROPERTY", "PROPERTY_FEW", "Design", "Kind", "cell", "designs", "renamed", "same_results", "shuffled", "with_duplicate"]

Kind = Literal["score", "verdict", "winner"]

# no shrinking: a failing example is printed as drawn, and shrinking a table costs minutes
PROPERTY = settings(max_examples=3, deadline=None, derandomize=True, database=None,
                    phases=(Phase.explicit, Phase.reuse, Phase.generate),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROPERTY_FEW = settings(PROPERTY, max_examples=2)  # a test run once per statistic and design column
FAST: dict[str, Any] = {"n_resamples": 20, "seed": 0}
_WINNERS = np.array(["A", "B", "TIE"], dtype=object)


@dataclass(frozen=True)
class Design:
    """A generated judgments table and the names of what it holds."""

    table: pd.DataFrame
    kind: Kind
    items: list[str]
    judges: list[str]  # model judges
    annotators: list[str]  # human:<name>
    gold: str | None
    criteria: list[str]
    conditions: list[str]
    repeats: list[int]
    seed: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def raters(self) -> list[str]:
        return [*self.judges, *self.annotators, *([self.gold] if self.gold else [])]


def build_table(items: Sequence[str], raters: Sequence[str], criteria: Sequence[str], conditions: Sequence[str],
                repeats: Sequence[int], kind: Kind, seed: int, *, gold: str | None = "gold",
                unscored_rate: float = 0.1, missing_rate: float = 0.05) -> pd.DataFrame:
    """The rows of a design: each rater judges each item x criterion x condition x repeat around a latent truth.

    A non-gold rater's cell is missing (no row) with ``missing_rate`` and unscored with ``unscored_rate``;
    gold rows are always present and scored (pairwise gold: in the first condition only, as loaders record it).
    Pairwise winners are in ORIGINAL labels in every condition.
    """
    rng = np.random.default_rng(seed)
    truth_score = {(i, c): int(rng.integers(1, 6)) for i in items for c in criteria}
    truth_winner = {(i, c): str(rng.choice(_WINNERS, p=[0.45, 0.45, 0.1])) for i in items for c in criteria}
    noise = {r: int(rng.integers(0, 3)) for r in raters}
    accuracy = {r: float(rng.uniform(0.55, 0.95)) for r in raters}
    rows = []
    for condition in conditions:
        for repeat in repeats:
            for rater in raters:
                for k, item in enumerate(items):
                    for criterion in criteria:
                        is_gold = rater == gold
                        if is_gold and kind == "winner" and condition != conditions[0]:
                            continue  # pairwise gold labels are per item, recorded once (as loaders do)
                        if not is_gold and rng.random() < missing_rate:
                            continue
                        row: dict[str, Any] = {
                            "run_id": "run", "item_id": item, "rubric": "r", "criterion": criterion,
                            "judge": rater, "condition": condition, "repeat": repeat,
                            "document_id": f"d{k // 2}", "system": f"s{k % 3}",
                        }
                        if not is_gold and rng.random() < unscored_rate:
                            rows.append({**row, "status": "parse_error", "unscored_reason": "unreadable"})
                            continue
                        score = float(np.clip(truth_score[item, criterion]
                                              + (0 if is_gold else rng.integers(-noise[rater], noise[rater] + 1)),
                                              1, 5))
                        if kind == "score":
                            row["score"] = score
                        elif kind == "verdict":
                            row["verdict"] = "yes" if score >= 3 else "no"
                        else:
                            truth = truth_winner[item, criterion]
                            right = is_gold or rng.random() < accuracy[rater]
                            row["winner"] = truth if right else str(rng.choice([w for w in _WINNERS if w != truth]))
                        rows.append({**row, "status": "ok"})
    return make_table(rows)


@st.composite
def designs(
    draw: st.DrawFn,
    kind: Kind = "score",
    *,
    n_items: tuple[int, int] = (6, 12),
    n_judges: tuple[int, int] = (2, 3),
    n_annotators: tuple[int, int] = (0, 0),
    n_criteria: tuple[int, int] = (1, 1),
    conditions: Sequence[Sequence[str]] | None = None,
    n_repeats: tuple[int, int] = (1, 1),
    gold: bool = True,
    unscored: bool = True,
    missing: bool = True,
) -> Design:
    """A :class:`Design` of ``kind`` values; each range is drawn (inclusive). ``conditions``: the condition
    name lists to choose from (default ``[["original"]]``)."""
    n = draw(st.integers(*n_items))
    items = [f"i{k}" for k in range(n)]
    judges = [f"judge{k}" for k in range(draw(st.integers(*n_judges)))]
    annotators = [f"human:a{k}" for k in range(draw(st.integers(*n_annotators)))]
    criteria = [f"c{k}" for k in range(draw(st.integers(*n_criteria)))]
    condition_names = list(draw(st.sampled_from(list(conditions or [["original"]]))))
    repeats = list(range(draw(st.integers(*n_repeats))))
    seed = draw(st.integers(0, 2**31 - 1))
    gold_name = "gold" if gold else None
    raters = [*judges, *annotators, *([gold_name] if gold_name else [])]
    table = build_table(items, raters, criteria, condition_names, repeats, kind, seed, gold=gold_name,
                        unscored_rate=0.1 if unscored else 0.0, missing_rate=0.05 if missing else 0.0)
    return Design(table, kind, items, judges, annotators, gold_name, criteria, condition_names, repeats, seed)


def cell(table: pd.DataFrame, **values: Any) -> pd.DataFrame:
    """The rows of one design cell (``criterion="c0"``, ``condition="original"`` ...), index reset."""
    mask = np.ones(len(table), dtype=bool)
    for col, value in values.items():
        mask &= (table[col] == value).fillna(False).to_numpy(dtype=bool)
    return table[mask].reset_index(drop=True)


def shuffled(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """The same rows in another order (and a scrambled index)."""
    order = np.random.default_rng(seed).permutation(len(table))
    out = table.iloc[order]
    out.index = np.random.default_rng(seed + 1).permutation(len(out)) + 1000
    return out


def renamed(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Item ids replaced one-to-one by other names (that sort in another order)."""
    ids = list(pd.unique(table["item_id"].astype(str)))
    new = [f"z{v:05d}" for v in np.random.default_rng(seed).permutation(len(ids))]
    return table.assign(item_id=table["item_id"].astype(str).map(dict(zip(ids, new, strict=True))).astype("string"))


def with_duplicate(table: pd.DataFrame, judge: str, seed: int, *, run_id: str | None = "another run",
                   condition: str | None = None) -> pd.DataFrame:
    """The table plus a second scored row of one of ``judge``'s scored rows (in ``condition`` if given): a copy
    from another run, or from the same run (``run_id=None``) for a statistic that scores each run apart."""
    rows = table[(table["judge"] == judge) & (table["status"] == "ok")]
    if condition is not None:
        rows = rows[rows["condition"] == condition]
    pick = rows.iloc[[int(np.random.default_rng(seed).integers(len(rows)))]]
    return pd.concat([table, pick if run_id is None else pick.assign(run_id=run_id)], ignore_index=True)


def same_results(a: pd.DataFrame, b: pd.DataFrame, *, columns: Sequence[str] = ("estimate", "n", "p_value"),
                 keys: Sequence[str] = (), atol: float = 1e-9) -> None:
    """Assert two result frames agree on ``columns`` (NaN equals NaN), rows matched on ``keys`` (or in order)."""
    assert len(a) == len(b), f"{len(a)} vs {len(b)} rows"
    if keys:
        a = a.sort_values(list(keys), kind="stable").reset_index(drop=True)
        b = b.sort_values(list(keys), kind="stable").reset_index(drop=True)
        assert a[list(keys)].astype(str).equals(b[list(keys)].astype(str))
    for col in columns:
        if col not in a.columns:
            continue
        x, y = a[col].to_numpy(), b[col].to_numpy()
        if np.issubdtype(np.asarray(x).dtype, np.number) and np.issubdtype(np.asarray(y).dtype, np.number):
            np.testing.assert_allclose(x.astype(float), y.astype(float), atol=atol, rtol=0, equal_nan=True,
                                       err_msg=col)
        else:
            assert list(map(str, x)) == list(map(str, y)), col
