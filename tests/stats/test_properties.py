"""Property tests of every public statistic on generated judgments tables (tests/stats/strategies.py).

Each test states its invariant; each runs every statistic of :data:`STATISTICS` on derandomized
examples (the same on every run), with few resamples. Point estimates, ``n`` and analytic p-values must
not depend on row order or item names; intervals may (a resample draws rows by position), so the
order tests leave them out, while the tests that compare a result with the same rows in another table
compare the intervals too (same rows, same order, same seed: the same resamples).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgelab import stats
from judgelab.errors import JudgelabError
from judgelab.stats import AmbiguousQuestionError, StatsInputError
from judgelab.stats.panel_agreement import member_agreement
from tests.stats.strategies import (
    FAST,
    PROPERTY,
    PROPERTY_FEW,
    Design,
    Kind,
    cell,
    designs,
    renamed,
    same_results,
    shuffled,
    with_duplicate,
)

ALL = ("estimate", "ci_low", "ci_high", "n", "p_value")
POINT = ("estimate", "n", "p_value")
TWO_ORDERS = [["original", "swapped"]]


@dataclass(frozen=True)
class Statistic:
    """How to call one public statistic on a design: ``call(table, design, **by)``."""

    kind: Kind
    call: Callable[..., pd.DataFrame]
    order_free: tuple[str, ...] = POINT  # columns that must not depend on row order or item names
    keys: tuple[str, ...] = ("metric",)  # columns that identify a result row
    pairs: bool = False  # n counts the keys where the first judge and gold are both scored
    by: str = "by"  # the argument that splits groups (pairwise_accuracy takes a sequence)
    judges: int = 1  # model judges the call names
    conditions: tuple[tuple[str, ...], ...] = (("original",),)
    splits: tuple[str, ...] = ()  # design columns the statistic splits on by default
    per_run: bool = False  # scores each run_id apart (a copy from another run is another run, not a duplicate)
    reads: str | None = None  # the one condition it reads, if it filters
    no_by: bool = False  # takes no by=: its refusal says to filter, not which by= to pass


def _j(d: Design, k: int = 0) -> str:
    return d.judges[k]


def _seq_by(by: Any, base: tuple[str, ...]) -> dict[str, Any]:
    return {} if by is None else {"by": (*base, by)}


STATISTICS: dict[str, Statistic] = {
    "spearman": Statistic("score", lambda t, d, **kw: stats.spearman(_j(d), "gold", data=t, **FAST, **kw), pairs=True),
    "kendall": Statistic("score", lambda t, d, **kw: stats.kendall(_j(d), "gold", data=t, **FAST, **kw), pairs=True),
    "pearson": Statistic("score", lambda t, d, **kw: stats.pearson(_j(d), "gold", data=t, **FAST, **kw), pairs=True),
    "error_metrics": Statistic("score", lambda t, d, **kw: stats.error_metrics(_j(d), "gold", data=t, **FAST, **kw),
                               pairs=True),
    "mae": Statistic("score", lambda t, d, **kw: stats.mae(_j(d), "gold", data=t, **FAST, **kw), pairs=True),
    "rmse": Statistic("score", lambda t, d, **kw: stats.rmse(_j(d), "gold", data=t, **FAST, **kw), pairs=True),
    "mean_signed_difference": Statistic(
        "score", lambda t, d, **kw: stats.mean_signed_difference(_j(d), "gold", data=t, **FAST, **kw), pairs=True),
    "positive_bias": Statistic("score", lambda t, d, **kw: stats.positive_bias(_j(d), "gold", data=t, **FAST, **kw)),
    "score_distributions": Statistic(
        "score", lambda t, d, **kw: stats.score_distributions(_j(d), "gold", data=t, **kw),
        order_free=("count", "share", "n"), keys=("rater", "score")),
    "bootstrap_ci": Statistic("score", lambda t, d, **kw: stats.bootstrap_ci(
        _j(d), "gold", data=t, statistic="mean_difference", **FAST, **kw), pairs=True),
    "meta_evaluation": Statistic("score", lambda t, d, **kw: stats.meta_evaluation(
        _j(d), "gold", data=t, group="document_id", system="system", item="document_id", **FAST, **kw),
        keys=("level", "metric")),
    "group_level_correlation": Statistic("score", lambda t, d, **kw: stats.group_level_correlation(
        _j(d), "gold", "document_id", data=t, **FAST, **kw)),
    "per_group_correlations": Statistic("score", lambda t, d, **kw: stats.per_group_correlations(
        _j(d), "gold", "document_id", data=t, **kw), keys=("group",)),
    "system_level_correlation": Statistic("score", lambda t, d, **kw: stats.system_level_correlation(
        _j(d), "gold", "system", item="document_id", data=t, **FAST, **kw)),
    "system_pair_accuracy": Statistic("score", lambda t, d, **kw: stats.system_pair_accuracy(
        _j(d), "gold", "system", item="document_id", data=t, **FAST, **kw)),
    "agreement_matrix": Statistic("score", lambda t, d, **kw: stats.agreement_matrix(
        t, raters=[_j(d), "gold"], **FAST, **kw), keys=("judge_a", "judge_b"), pairs=True),
    "unscored_sensitivity": Statistic("score", lambda t, d, **kw: stats.unscored_sensitivity(
        t, _j(d), "gold", statistic="spearman", **FAST, **kw),
        order_free=("estimate", "n", "p_value", "estimate_if_unscored_min", "estimate_if_unscored_max")),
    "dependent_correlation_test": Statistic("score", lambda t, d, **kw: _by_wrapped(
        stats.dependent_correlation_test, t, _j(d), _j(d, 1), "gold", **kw), keys=("test",), judges=2),
    "compare_judges": Statistic("score", lambda t, d, **kw: _by_wrapped(
        stats.compare_judges, t, _j(d), _j(d, 1), "gold", **FAST, **kw), keys=("part",),
        order_free=("estimate", "n"), judges=2),
    "percent_agreement": Statistic("verdict", lambda t, d, **kw: stats.percent_agreement(
        _j(d), "gold", data=t, value="verdict", **FAST, **kw), pairs=True),
    "cohen_kappa": Statistic("verdict", lambda t, d, **kw: stats.cohen_kappa(
        _j(d), "gold", data=t, value="verdict", **FAST, **kw), pairs=True),
    "flip_rate": Statistic("verdict", lambda t, d, **kw: stats.flip_rate(
        _j(d), "gold", data=t, value="verdict", **kw), pairs=True),
    "fleiss_kappa": Statistic("verdict", lambda t, d, **kw: stats.fleiss_kappa(
        data=t, raters=d.judges, value="verdict", **FAST, **kw), judges=2),
    "krippendorff_alpha": Statistic("score", lambda t, d, **kw: stats.krippendorff_alpha(
        data=t, raters=d.judges, level="interval", **FAST, **kw), judges=2),
    "icc": Statistic("score", lambda t, d, **kw: stats.icc(data=t, raters=d.judges, **kw), judges=2),
    "member_agreement": Statistic("score", lambda t, d, **kw: member_agreement(
        t, d.judges, **FAST, **kw), keys=("judge_x", "judge_y", "metric"), judges=2),
    "pairwise_accuracy": Statistic("winner", lambda t, d, by=None: stats.pairwise_accuracy(
        t, policy="tie", **FAST, **_seq_by(by, ("run_id", "judge"))), keys=("judge", "metric"),
        by="sequence", conditions=tuple(map(tuple, TWO_ORDERS)), per_run=True),
    "pairwise_policy_sensitivity": Statistic("winner", lambda t, d, by=None: stats.pairwise_policy_sensitivity(
        t, **FAST, **_seq_by(by, ("run_id", "judge"))), keys=("judge", "metric"),
        order_free=("estimate_exclude", "estimate_tie", "estimate_wrong", "estimate_net", "n_tie"), by="sequence",
        conditions=tuple(map(tuple, TWO_ORDERS)), per_run=True),
    "pairwise_agreement": Statistic("winner", lambda t, d, by=None: stats.pairwise_agreement(
        t, _j(d), "gold", **FAST, **({} if by is None else {"by": ("criterion", by) if by != "criterion" else
                                                               ("criterion",)})),
        keys=("criterion", "policy"), order_free=("estimate", "n"), by="sequence", splits=("criterion",),
        conditions=tuple(map(tuple, TWO_ORDERS)), reads="original"),
}


# statistics other branches add (classification, both-order comparison): covered once they are public
if hasattr(stats, "classification_report"):
    STATISTICS["classification_report"] = Statistic("verdict", lambda t, d, **kw: stats.classification_report(
        _j(d), "gold", data=t, value="verdict", **FAST, **kw), pairs=True)
if hasattr(stats, "confusion_matrix"):
    STATISTICS["confusion_matrix"] = Statistic("verdict", lambda t, d, **kw: stats.confusion_matrix(
        _j(d), "gold", data=t, value="verdict", **kw), order_free=("count", "row_share", "n"),
        keys=("gold", "predicted"), pairs=True)
if hasattr(stats, "compare_pairwise_judges"):
    STATISTICS["compare_pairwise_judges"] = Statistic("winner", lambda t, d, **kw: _by_wrapped(
        lambda a, b, g, data, **k: stats.compare_pairwise_judges(data, a, b, g, **k), t, _j(d), _j(d, 1), "gold",
        policy="tie", **FAST, **kw), keys=("part",), order_free=("estimate", "n"), judges=2,
        conditions=tuple(map(tuple, TWO_ORDERS)), no_by=True)


def _by_wrapped(func: Callable[..., pd.DataFrame], table: pd.DataFrame, *names: str, by: Any = None,
                **kwargs: Any) -> pd.DataFrame:
    """A statistic without by= (compare.py), split by hand, so the property still covers its input rule."""
    if by is None:
        return func(*names, data=table, **kwargs)
    parts = [func(*names, data=part, **kwargs).assign(**{by: key}) for key, part in table.groupby(by, sort=True)]
    return pd.concat(parts, ignore_index=True)


def _design(name: str, **ranges: Any) -> st.SearchStrategy[Design]:
    spec = STATISTICS[name]
    ranges.setdefault("n_judges", (max(spec.judges, 2), 3))
    ranges.setdefault("conditions", [list(c) for c in spec.conditions])
    return designs(spec.kind, **ranges)


def _order_free(name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    spec = STATISTICS[name]
    return spec.order_free, spec.keys


def _paired_keys(table: pd.DataFrame, x: str, y: str, value: str) -> int:
    ok = table[(table["status"] == "ok") & table[value].notna()]
    a = ok[ok["judge"] == x][["item_id", "criterion"]]
    b = ok[ok["judge"] == y][["item_id", "criterion"]]
    return len(a.merge(b, on=["item_id", "criterion"]))


@pytest.mark.parametrize("name", list(STATISTICS))
@PROPERTY
@given(data=st.data())
def test_one_question_invariants(name: str, data: st.DataObject) -> None:
    """Invariants, on one generated design cell (unscored and missing rows included):

    - the same rows in another order, or with the items renamed one-to-one, give the same estimates, n and
      p-values (the statistic reads keys, never positions or names);
    - adding the rows of another model judge and of a human annotator leaves a statistic of named raters
      unchanged, intervals included;
    - a second scored row for one rater's rating (a copy from another run) is an error, never averaged or
      counted twice;
    - ``n`` of a two-rater statistic is the number of keys both raters scored.
    """
    spec = STATISTICS[name]
    d = data.draw(_design(name, n_judges=(spec.judges + 1, spec.judges + 1), n_annotators=(1, 1)))
    extra = [d.judges[-1], *d.annotators]
    named = Design(d.table[~d.table["judge"].isin(extra)].reset_index(drop=True), d.kind, d.items, d.judges[:-1],
                   [], d.gold, d.criteria, d.conditions, d.repeats, d.seed)
    base = spec.call(named.table, named)
    columns, keys = _order_free(name)
    same_results(base, spec.call(shuffled(named.table, d.seed), named), columns=columns, keys=keys)
    if name != "per_group_correlations":  # its groups are documents, unchanged; items only inside them
        same_results(base, spec.call(renamed(named.table, d.seed), named), columns=columns, keys=keys)
    more = spec.call(d.table, named)
    if name in ("pairwise_accuracy", "pairwise_policy_sensitivity"):  # one block per judge: the named judges'
        more = more[more["judge"].isin(named.judges)].reset_index(drop=True)
    same_results(base, more, columns=ALL if "estimate" in base else spec.order_free, keys=keys)
    with pytest.raises(StatsInputError):
        spec.call(with_duplicate(named.table, named.judges[0], d.seed, run_id=None if spec.per_run else "another run",
                                 condition=spec.reads), named)
    if spec.pairs:
        expected = _paired_keys(named.table, named.judges[0], "gold", d.kind)
        assert (base["n"] == expected).all(), (base["n"].tolist(), expected)


@pytest.mark.parametrize("column", ["criterion", "condition", "repeat"])
@pytest.mark.parametrize("name", list(STATISTICS))
@PROPERTY_FEW
@given(data=st.data())
def test_another_criterion_condition_or_repeat_is_refused_or_split_off(name: str, column: str,
                                                                       data: st.DataObject) -> None:
    """Invariant: a table with a second criterion, condition or repeat is refused (naming by=) unless by= splits
    it, and then each group's rows equal the statistic on that group's rows alone -- intervals included: adding a
    design cell never changes a result that does not ask for it."""
    spec = STATISTICS[name]
    if column == "condition" and spec.conditions != (("original",),):
        pytest.skip("the two presentation orders are this statistic's own design")
    two = {"criterion": {"n_criteria": (2, 2)}, "repeat": {"n_repeats": (2, 2)},
           "condition": {"conditions": [["original", "perturbed"]]}}[column]
    d = data.draw(_design(name, **two))
    if column in spec.splits:
        split = spec.call(d.table, d)
    else:
        with pytest.raises(AmbiguousQuestionError, match=".*" if spec.no_by else f"by=.*'{column}'|by='{column}'"):
            spec.call(d.table, d)
        split = spec.call(d.table, d, by=column)
    values = sorted(pd.unique(d.table[column].astype(object)))
    _, keys = _order_free(name)
    for value in values:
        alone = spec.call(cell(d.table, **{column: value}), d).drop(columns=[column], errors="ignore")
        part = split[split[column].astype(str) == str(value)].drop(columns=[column]).reset_index(drop=True)
        same_results(alone.reset_index(drop=True), part, columns=ALL if "estimate" in alone else _order_free(name)[0],
                     keys=[k for k in keys if k in alone.columns and k != column])


@PROPERTY
@given(d=designs("score", n_judges=(3, 3)))
def test_n_of_multi_rater_statistics_counts_the_items_they_use(d: Design) -> None:
    """Invariant: the ICC's n is the items every named rater scored; Krippendorff's alpha's is the items at least
    two scored; the raters column names exactly the raters asked for."""
    ok = d.table[(d.table["status"] == "ok") & d.table["judge"].isin(d.judges)]
    per_item = ok.groupby("item_id")["judge"].nunique()
    icc = stats.icc(data=d.table, raters=d.judges)
    alpha = stats.krippendorff_alpha(data=d.table, raters=d.judges, level="interval", **FAST)
    assert (icc["n"] == int((per_item == len(d.judges)).sum())).all()
    assert alpha["n"].iloc[0] == int((per_item >= 2).sum())
    assert (icc["raters"] == ", ".join(d.judges)).all() and alpha["raters"].iloc[0] == ", ".join(d.judges)


@pytest.mark.parametrize("statistic", ["fleiss_kappa", "krippendorff_alpha", "icc"])
@PROPERTY
@given(d=designs("score", n_judges=(2, 3), n_annotators=(2, 3)))
def test_default_raters_never_mix_roles_and_never_take_gold(statistic: str, d: Design) -> None:
    """Invariant: without raters=, a multi-rater statistic refuses human annotators mixed with model judges;
    on the judges alone, adding gold rows or a panel's aggregate rows changes nothing (they are left out, and the
    note says so)."""
    call = {"fleiss_kappa": lambda t: stats.fleiss_kappa(data=t, labels=[1.0, 2.0, 3.0, 4.0, 5.0], **FAST),
            "krippendorff_alpha": lambda t: stats.krippendorff_alpha(data=t, level="interval", **FAST),
            "icc": lambda t: stats.icc(data=t)}[statistic]
    with pytest.raises(AmbiguousQuestionError, match="pass raters="):
        call(d.table)
    models = d.table[d.table["judge"].isin(d.judges)].reset_index(drop=True)
    panel = models[models["judge"] == d.judges[0]].assign(judge="panel:mean")
    base = call(models)
    more = call(pd.concat([models, d.table[d.table["judge"] == "gold"], panel], ignore_index=True))
    same_results(base, more, columns=ALL, keys=("metric",))
    assert (more["raters"] == ", ".join(d.judges)).all()
    assert more["note"].str.contains("'gold'").all() and more["note"].str.contains("'panel:mean'").all()


@PROPERTY
@given(d=designs("winner", conditions=TWO_ORDERS, n_judges=(1, 2)), which=st.sampled_from([0, 1]))
def test_a_deleted_order_leaves_no_metric_computed_from_it(d: Design, which: int) -> None:
    """Invariant: with one presentation order deleted, every pairwise metric that needs it is NaN with n 0 and
    a note naming the missing condition; the metrics of the remaining order are unchanged."""
    gone = d.conditions[which]
    kept = d.table[(d.table["condition"] != gone) | (d.table["judge"] == "gold")]
    full = stats.pairwise_accuracy(d.table, policy="tie", **FAST).set_index(["judge", "metric"])
    part = stats.pairwise_accuracy(kept, policy="tie", **FAST).set_index(["judge", "metric"])
    remaining = "accuracy_original" if which == 1 else "accuracy_swapped"
    for (judge, metric), row in part.iterrows():
        if metric == remaining:
            assert row["estimate"] == full.loc[(judge, metric), "estimate"] and row["n"] == full.loc[(judge, metric),
                                                                                                      "n"]
        else:
            assert np.isnan(row["estimate"]) and row["n"] == 0 and f"'{gone}'" in row["note"]


def test_every_public_statistic_is_covered_or_said_why_not() -> None:
    """The registry covers the public statistics that read a judgments table; the others are listed with why."""
    not_here = {
        # arrays, numbers or result frames in (or, for the length statistics, columns the caller names and
        # probes.length feeds): no judgments table to pool, nothing for these properties to check
        "adjust_pvalues", "agreement_label", "agreement_matrix_wide", "bootstrap", "kendall_statistic",
        "mean_statistic", "pearson_statistic", "spearman_statistic", "vectorized_statistic", "mcnemar_test",
        "n_for_correlation", "n_for_correlation_difference", "n_for_flip_rate", "n_for_kappa", "ltt_cascade",
        "ltt_threshold", "is_judgments_table", "pair_conditions", "pair_judges", "length_controlled_win_rate",
        "length_score_correlation",
        # judge-corrected family: their own input layer (stats.corrected.means.corrected_inputs), covered by
        # test_corrected_family_refuses_undetermined_tables below
        "corrected_mean", "corrected_difference", "conformal_interval", "label_budget", "projected_width",
        "alt_test", "compare_rubrics",
        "correlation",  # as spearman/kendall/pearson
        # a battles frame, not a judgments table: tests/stats/test_ranking.py checks row-order and side invariance
        "win_rate_matrix", "elo_ratings",
        # rankings: a battles frame or a judgments table whose items name their systems (columns this registry's
        # generated designs do not have); tests/stats/test_ranking.py and test_ranking_tables.py check their
        # judge / criterion / unscored refusals, by= blocks and row-order invariance on generated tables
        "rank_systems", "rank_by_score", "ranking_agreement",
        # a battles frame with judge and human verdict columns, not a judgments table:
        # tests/stats/test_ranking_corrected.py checks its refusals and row-order / side invariance
        "rank_systems_corrected",
        # not a statistic: scores reshaped into battles, checked against a brute-force pairing on generated
        # score tables (row order shuffled in every draw) in tests/stats/test_score_battles.py
        "battles_from_scores",
        # a draw of items to label, not an estimate: tests/labels/test_selection.py checks its probabilities,
        # seeding and refusals (one row per item of the judge, else refused)
        "select_for_labelling",
    }
    public = {n for n in stats.__all__ if callable(getattr(stats, n)) and not isinstance(getattr(stats, n), type)}
    covered = set(STATISTICS) | {"fleiss_kappa", "krippendorff_alpha", "icc"}
    missing = sorted(public - covered - not_here)
    assert not missing, f"public statistics without a property test: {missing}"


@PROPERTY
@given(d=designs("score", n_criteria=(2, 2), n_judges=(1, 1)))
def test_corrected_family_refuses_undetermined_tables(d: Design) -> None:
    """Invariant: the judge-corrected estimators and compare_rubrics refuse a judge with several criteria unless
    by=/criterion= says which (their own input layer follows the same rule)."""
    judge = d.judges[0]
    with pytest.raises(JudgelabError, match="by="):
        stats.corrected_mean(d.table, judge=judge, gold="gold", method="classical")
    out = stats.corrected_mean(d.table, judge=judge, gold="gold", method="classical", by="criterion")
    assert set(out["criterion"]) == set(d.criteria)
    variants = pd.concat([d.table, d.table[d.table["judge"] == judge].assign(rubric="r2")], ignore_index=True)
    with pytest.raises(JudgelabError, match="criteria"):
        stats.compare_rubrics(variants, "gold", n_resamples=10)
