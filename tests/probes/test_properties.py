"""Property tests of every probe's analysis form on generated judgments tables (tests/stats/strategies.py).

The generated tables hold one judge (plus gold rows), a criterion, the probe's conditions and unscored
and missing rows; each test states its invariant. Examples are derandomized and few, resamples small.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgelab import probes
from judgelab.errors import JudgelabError
from judgelab.probes import (
    PROBES,
    authority,
    injection,
    length,
    position,
    positive_bias,
    repeats,
    scale_order,
    self_preference,
    sycophancy,
)
from tests.stats.strategies import (
    PROPERTY,
    Design,
    Kind,
    build_table,
    designs,
    renamed,
    same_results,
    shuffled,
)

ALL = ("estimate", "ci_low", "ci_high", "n", "p_value")
POINT = ("estimate", "n", "p_value")
KEYS = ("metric", "condition", "policy")
FAST: dict[str, Any] = {"n_resamples": 20, "seed": 0}


@dataclass(frozen=True)
class Analysis:
    """A probe's analysis on a design: ``call(table, design, **kw)``; the conditions it reads."""

    kind: Kind
    conditions: tuple[str, ...]
    call: Callable[..., Any]
    baseline: str | None = "original"  # deleting it refuses; deleting another condition drops its rows
    repeats: int = 1


def _items(d: Design) -> pd.DataFrame:
    gens = ["openai/gpt-4o", "meta/llama-3"]
    return pd.DataFrame({"item_id": d.items, "generator": [gens[k % 2] for k in range(len(d.items))]})


ANALYSES: dict[str, Analysis] = {
    "position": Analysis("winner", ("original", "swapped"), lambda t, d, **kw: position.analyze(
        t, criterion=d.criteria[0], **FAST, **kw), baseline=None),
    "positive_bias": Analysis("score", ("original",), lambda t, d, **kw: positive_bias.analyze(
        t, gold="gold", **FAST, **kw), baseline=None),
    "repeats": Analysis("score", ("original",), lambda t, d, **kw: repeats.analyze(
        t, criterion=d.criteria[0], **FAST, **kw), baseline=None, repeats=3),
    "authority": Analysis("score", ("original", *importlib.import_module("judgelab.probes.authority").CONDITIONS), lambda t, d, **kw: authority.analyze(
        t, criterion=d.criteria[0], **FAST, **kw)),
    "scale_order": Analysis("score", ("scale:ascending", "scale:descending"), lambda t, d, **kw:
                            scale_order.analyze(t, criterion=d.criteria[0], **FAST, **kw),
                            baseline="scale:ascending"),
    "injection": Analysis("score", ("original", "inject:ignore_rubric"), lambda t, d, **kw: injection.analyze(
        t, criterion=d.criteria[0], top=5.0, **FAST, **kw)),
    "sycophancy": Analysis("score", ("original", "challenged"), lambda t, d, **kw: sycophancy.analyze(
        t, criterion=d.criteria[0], scale=(1, 5), mode="direct", **FAST, **kw)),
    "length": Analysis("score", ("original", "filler+50w", "filler+200w"), lambda t, d, **kw: length.analyze(
        t, criterion=d.criteria[0], **FAST, **kw)),
    "self_preference": Analysis("score", ("original",), lambda t, d, **kw: self_preference.analyze(
        t, _items(d), judge_family="gpt", criterion=d.criteria[0], **FAST, **kw), baseline=None),
}


def _design(name: str, **ranges: Any) -> st.SearchStrategy[Design]:
    spec = ANALYSES[name]
    ranges.setdefault("n_judges", (1, 1))
    ranges.setdefault("n_items", (8, 14))
    return designs(spec.kind, conditions=[list(spec.conditions)], n_repeats=(spec.repeats, spec.repeats),
                   **ranges)


def _summary(result: Any) -> pd.DataFrame:
    return result.summary.reset_index(drop=True)


def _with_rows(d: Design, *, judges: list[str] | None = None, criteria: list[str] | None = None) -> pd.DataFrame:
    """The design's table plus another judge's or another criterion's rows (same items, conditions, repeats)."""
    extra = build_table(d.items, judges or d.judges, criteria or d.criteria, d.conditions, d.repeats, d.kind,
                        d.seed + 1, gold="gold" if criteria else None)
    return pd.concat([d.table, extra], ignore_index=True)


@pytest.mark.parametrize("name", list(ANALYSES))
@PROPERTY
@given(data=st.data())
def test_probe_analysis_reads_one_question(name: str, data: st.DataObject) -> None:
    """Invariants of a probe's analysis (no calls) on one judge's table:

    - the same rows in another order, or with the items renamed, give the same estimates, n and p-values;
    - another criterion's rows change nothing (the analysis reads ``criterion=``), intervals included;
    - another judge's rows are refused (several judges) unless ``judge=`` names one, which gives the same result;
    - a second scored row for one item, condition and repeat (a copy from another run) is an error.
    """
    spec = ANALYSES[name]
    d = data.draw(_design(name))
    base = _summary(spec.call(d.table, d))
    same_results(base, _summary(spec.call(shuffled(d.table, d.seed), d)), columns=POINT, keys=KEYS)
    if name != "self_preference":  # its items frame names the items: renaming both is the same table
        # the position probe's policy "first" draws each item's first-shown order from its id (seeded, as the
        # engine's order="random"): a renamed item may draw the other order, so those rows are left out
        seeded_by_name = (lambda f: f[f["policy"] != "first"].reset_index(drop=True)) if name == "position" else \
            (lambda f: f)
        same_results(seeded_by_name(base), seeded_by_name(_summary(spec.call(renamed(d.table, d.seed), d))),
                     columns=POINT, keys=KEYS)
    more_criteria = _with_rows(d, criteria=["another criterion"])
    same_results(base, _summary(spec.call(more_criteria, d)), columns=ALL, keys=KEYS)
    two_judges = _with_rows(d, judges=["another judge"])
    with pytest.raises(JudgelabError, match="several judges"):
        spec.call(two_judges, d)
    same_results(base, _summary(spec.call(two_judges, d, judge=d.judges[0])), columns=ALL, keys=KEYS)
    scored = d.table[(d.table["judge"] == d.judges[0]) & (d.table["status"] == "ok")]
    copy = scored.iloc[[int(np.random.default_rng(d.seed).integers(len(scored)))]].assign(run_id="another run")
    with pytest.raises(JudgelabError):
        spec.call(pd.concat([d.table, copy], ignore_index=True), d)


@pytest.mark.parametrize("name", [n for n, a in ANALYSES.items() if len(a.conditions) > 1])
@PROPERTY
@given(data=st.data())
def test_a_deleted_condition_leaves_no_metric_computed_from_it(name: str, data: st.DataObject) -> None:
    """Invariant: deleting a probe's condition either refuses (the baseline, or an order the probe needs) or leaves
    no row for that condition with a number in it; every other condition's own rows are unchanged."""
    spec = ANALYSES[name]
    d = data.draw(_design(name))
    base = _summary(spec.call(d.table, d))
    for gone in spec.conditions:
        table = d.table[(d.table["condition"] != gone) | (d.table["judge"] == "gold")]
        if gone == spec.baseline or spec.baseline is None:
            with pytest.raises(JudgelabError):
                spec.call(table, d)
            continue
        try:
            out = _summary(spec.call(table, d))
        except JudgelabError:
            continue  # the probe needs every condition it lists
        about = out[out["condition"].astype(str).str.contains(gone, regex=False)]
        assert about["estimate"].isna().all() and (about["n"] == 0).all(), about
        # rows of the other conditions (a row over all conditions, condition "", may change: it used the deleted one)
        kept = base[~base["condition"].astype(str).str.contains(gone, regex=False) & (base["condition"] != "")
                    & base["condition"].isin(set(out["condition"]))]
        rest = out[out["condition"].isin(set(kept["condition"]))]
        rest = rest[rest["metric"].isin(set(kept["metric"]))]
        same_results(kept.reset_index(drop=True), rest.reset_index(drop=True), columns=ALL, keys=KEYS)


@PROPERTY
@given(d=designs("winner", conditions=[["original", "swapped"]], n_judges=(1, 1), n_repeats=(2, 2)))
def test_position_needs_repeat_when_the_table_has_several(d: Design) -> None:
    """Invariant: a position table with several repeats is refused unless repeat= names one, which equals the
    analysis of that repeat's rows alone."""
    with pytest.raises(JudgelabError, match="pass repeat="):
        position.analyze(d.table, criterion=d.criteria[0], **FAST)
    one = position.analyze(d.table, criterion=d.criteria[0], repeat=1, **FAST)
    alone = position.analyze(d.table[(d.table["repeat"] == 1) | (d.table["judge"] == "gold")],
                             criterion=d.criteria[0], **FAST)
    same_results(one.summary, alone.summary, columns=ALL, keys=KEYS)


def test_every_probe_analysis_is_covered() -> None:
    """Every probe (each has an analysis form) is in :data:`ANALYSES`, and the scale-order baseline is the one the
    probe uses."""
    assert set(PROBES) == set(ANALYSES) == {p for p in probes.__all__ if p in PROBES}
    assert importlib.import_module("judgelab.probes.scale_order").BASELINE == ANALYSES["scale_order"].baseline
