"""Latent-truth judge reliability (judgelab.ensembles.latent_truth / latent_truth_labels) on seeded simulated
judges whose confusion matrices are known, on refusals, and on generated small tables."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judgelab import judgments, stats
from judgelab.ensembles import latent_truth, latent_truth_labels
from judgelab.errors import JudgelabError
from judgelab.judgments import make_table

pytest.importorskip("crowdkit", reason="crowd-kit is the optional extra judgelab[latent]")

ACCURACIES = {"j1": 0.6, "j2": 0.7, "j3": 0.75, "j4": 0.8, "j5": 0.9}


def _simulate(n_items: int = 400, seed: int = 1, accuracies: dict[str, float] = ACCURACIES,
              gold: bool = True) -> pd.DataFrame:
    """Binary truth with prior 0.6 'yes'; each judge gives the truth with its accuracy (symmetric errors, so
    its Dawid-Skene accuracy is exactly that number), independently given the truth."""
    rng = np.random.default_rng(seed)
    truth = np.where(rng.random(n_items) < 0.6, "yes", "no")
    rows = []
    for i, t in enumerate(truth):
        base = {"run_id": "sim", "item_id": f"i{i}", "rubric": "r", "criterion": "acceptable",
                "condition": "original"}
        for judge, acc in accuracies.items():
            label = t if rng.random() < acc else ("no" if t == "yes" else "yes")
            rows.append({**base, "judge": judge, "verdict": label})
        if gold:
            rows.append({**base, "judge": "gold", "verdict": t})
    return make_table(rows)


def _check_recovery(res: pd.DataFrame, table: pd.DataFrame, *, cover: bool) -> None:
    acc = res[res["metric"] == "accuracy"].set_index("judge")
    for judge, true in ACCURACIES.items():
        row = acc.loc[judge]
        assert abs(row["estimate"] - true) < 0.05, (judge, row["estimate"])
        assert row["ci_low"] <= row["estimate"] <= row["ci_high"], (judge, row["ci_low"], row["ci_high"])
        if cover:
            assert row["ci_low"] <= true <= row["ci_high"], (judge, row["ci_low"], row["ci_high"])
        assert row["n"] == 400
    conf = res[res["metric"] == "confusion"]
    sums = conf.groupby(["judge", "true_label"])["estimate"].sum()
    assert np.allclose(sums.to_numpy(), 1.0)
    actual = res[res["metric"] == "actual_accuracy"].set_index("judge")
    wide = table.pivot(index="item_id", columns="judge", values="verdict")
    for judge in ACCURACIES:
        assert actual.loc[judge, "estimate"] == pytest.approx(float((wide[judge] == wide["gold"]).mean()))
        assert actual.loc[judge, "ci_low"] <= actual.loc[judge, "estimate"] <= actual.loc[judge, "ci_high"]


def test_dawid_skene_recovers_known_accuracies() -> None:
    """Invariant: on 400 items from 5 conditionally independent judges of known accuracy (.6-.9), the Dawid-Skene
    accuracy of each judge is within 0.05 of the truth and inside its own bootstrap interval (8 refits: the
    plumbing; coverage is the slow test's); the confusion rows of a judge sum to 1 over given labels;
    actual_accuracy (vs gold) is the plain agreement."""
    table = _simulate()
    res = latent_truth(table, judges=list(ACCURACIES), method="dawid_skene", n_resamples=8, seed=3)
    _check_recovery(res, table, cover=False)


@pytest.mark.long
def test_dawid_skene_intervals_cover_the_known_accuracies() -> None:
    """Invariant: with 100 refits, each judge's 95% percentile interval covers its simulated accuracy (5 judges on
    one seeded table; about 45 s)."""
    table = _simulate()
    res = latent_truth(table, judges=list(ACCURACIES), method="dawid_skene", n_resamples=100, seed=3)
    _check_recovery(res, table, cover=True)


@pytest.mark.parametrize("method", ["one_coin", "glad"])
def test_other_models_recover_accuracies_roughly(method: str) -> None:
    """Invariant: one-coin's skill and GLAD's posterior-expected agreement are within 0.07 of the simulated
    accuracies (symmetric errors: both models fit), with no resampling."""
    res = latent_truth(_simulate(n_items=300, seed=5), judges=list(ACCURACIES), method=method, n_resamples=0)
    acc = res[res["metric"] == "accuracy"].set_index("judge")["estimate"]
    for judge, true in ACCURACIES.items():
        assert abs(acc[judge] - true) < 0.07, (method, judge, acc[judge])


def test_majority_equals_a_direct_pandas_plurality() -> None:
    """Invariant: with five judges on binary labels (no ties), the latent:majority rater is the pandas plurality of
    each item and each judge's majority accuracy is its agreement with that plurality."""
    table = _simulate(n_items=120, seed=7, gold=False)
    with_truth = latent_truth_labels(table, judges=list(ACCURACIES), method="majority")
    latent = with_truth[with_truth["judge"] == "latent:majority"].set_index("item_id")["verdict"]
    wide = table.pivot(index="item_id", columns="judge", values="verdict")
    plurality = wide.apply(lambda r: r.value_counts().idxmax(), axis=1)
    assert (latent.reindex(plurality.index) == plurality).all()
    res = latent_truth(table, judges=list(ACCURACIES), method="majority", n_resamples=0)
    acc = res.set_index("judge")["estimate"]
    for judge in ACCURACIES:
        assert acc[judge] == pytest.approx(float((wide[judge] == plurality).mean()))


def test_posterior_rater_rows_validate_and_statistics_run_on_them() -> None:
    """Invariant: latent_truth_labels adds one latent:dawid_skene row per item (status ok, confidence the posterior
    of its label), the table validates, and cohen_kappa / percent_agreement of a judge vs the new rater run."""
    table = _simulate(n_items=150, seed=11)
    out = latent_truth_labels(table, judges=list(ACCURACIES))
    judgments.validate(out)
    new = out[out["judge"] == "latent:dawid_skene"]
    assert len(new) == 150 and (new["status"] == "ok").all()
    assert ((new["confidence"] >= 0.5) & (new["confidence"] <= 1)).all()
    assert len(out) == len(table) + 150
    kappa = stats.cohen_kappa("j5", "latent:dawid_skene", data=out, value="verdict")
    agree = stats.percent_agreement("j5", "latent:dawid_skene", data=out, value="verdict")
    assert 0 < kappa["estimate"].iloc[0] <= 1 and 0.8 < agree["estimate"].iloc[0] <= 1


def test_unscored_rows_are_counted_not_dropped_silently() -> None:
    """Invariant: a judge's unscored rows are left out of the fit, counted in n_unscored and the note, and n is the
    number of items it labelled; the latent rater gets an unscored row for an item no judge scored."""
    table = _simulate(n_items=100, seed=2, gold=False)
    unscored = (table["judge"] == "j1") & table["item_id"].isin(["i0", "i1", "i2"])
    nobody = table["item_id"] == "i3"
    table.loc[unscored | nobody, "verdict"] = pd.NA
    table.loc[unscored | nobody, "status"] = "parse_error"
    table.loc[unscored | nobody, "unscored_reason"] = "unreadable"
    res = latent_truth(table, judges=list(ACCURACIES), method="one_coin", n_resamples=0)
    j1 = res.set_index("judge").loc["j1"]
    assert j1["n_unscored"] == 4 and j1["n"] == 96 and "4 unscored" in j1["note"]
    out = latent_truth_labels(table, judges=list(ACCURACIES), method="one_coin")
    row = out[(out["judge"] == "latent:one_coin") & (out["item_id"] == "i3")].iloc[0]
    assert row["status"] == "missing" and "no judge" in row["unscored_reason"]


def _one_sentence(exc: JudgelabError) -> str:
    text = str(exc)
    assert text and "\n" not in text
    return text


def test_refusals_are_one_sentence_judgelab_errors() -> None:
    """Invariant: one judge, an unknown judge, several criteria, all rows unscored and one label only each raise a
    JudgelabError with one sentence naming the problem."""
    table = _simulate(n_items=30, seed=4, gold=False)
    judges = list(ACCURACIES)
    with pytest.raises(JudgelabError, match="at least two judges") as one:
        latent_truth(table, judges=["j1"])
    _one_sentence(one.value)
    with pytest.raises(JudgelabError, match="nobody") as unknown:
        latent_truth(table, judges=["j1", "nobody"])
    _one_sentence(unknown.value)
    two = pd.concat([table, table.assign(criterion="fluency")], ignore_index=True)
    with pytest.raises(JudgelabError, match="criteria") as criteria:
        latent_truth(make_table(two), judges=judges)
    _one_sentence(criteria.value)
    dead = table.assign(verdict=pd.NA, status="api_error", unscored_reason="down")
    with pytest.raises(JudgelabError, match="no scored") as unscored:
        latent_truth(make_table(dead), judges=judges)
    _one_sentence(unscored.value)
    with pytest.raises(JudgelabError, match="only one label"):
        latent_truth(make_table(table.assign(verdict="yes")), judges=judges)


def test_scores_are_categories_and_the_latent_rater_keeps_them_numeric() -> None:
    """Invariant: value='score' fits on the distinct scores as categories and the latent rater's label is one of
    them, in the score column."""
    rng = np.random.default_rng(0)
    rows = [{"run_id": "s", "item_id": f"i{i}", "rubric": "r", "criterion": "c", "condition": "original", "judge": j,
             "score": float(rng.integers(1, 4))} for i in range(40) for j in ("a", "b", "c")]
    table = make_table(rows)
    res = latent_truth(table, judges=["a", "b", "c"], value="score", n_resamples=0)
    assert set(res.loc[res["metric"] == "confusion", "true_label"]) == {1.0, 2.0, 3.0}
    out = latent_truth_labels(table, judges=["a", "b", "c"], value="score")
    assert set(out.loc[out["judge"] == "latent:dawid_skene", "score"].dropna()) <= {1.0, 2.0, 3.0}


labels = st.sampled_from(["A", "B", "TIE"])
cells = st.one_of(labels, st.none())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(cells, min_size=3, max_size=3), min_size=1, max_size=6),
       st.sampled_from(["majority", "dawid_skene", "one_coin"]))
def test_generated_small_tables_never_traceback(grid: list[list[str | None]], method: str) -> None:
    """Invariant: any small table of pairwise winners from three judges (some unscored) gives a result frame with
    one accuracy row per judge, and a latent rater that validates -- or a JudgelabError; never another exception."""
    rows = []
    for i, line in enumerate(grid):
        for j, w in zip(("x", "y", "z"), line, strict=True):
            base = {"run_id": "h", "item_id": f"i{i}", "rubric": "r", "criterion": "overall", "condition": "original",
                    "judge": j}
            rows.append({**base, "winner": w} if w else {**base, "status": "parse_error", "unscored_reason": "?"})
    table = make_table(rows)
    try:
        res = latent_truth(table, judges=["x", "y", "z"], method=method, value="winner", n_resamples=2)
        out = latent_truth_labels(table, judges=["x", "y", "z"], method=method, value="winner")
    except JudgelabError:
        return
    assert sorted(res.loc[res["metric"] == "accuracy", "judge"]) == ["x", "y", "z"]
    judgments.validate(out)


def test_without_crowd_kit_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invariant: when crowd-kit cannot be imported, a model fit raises a JudgelabError naming judgelab[latent]
    (simulated by hiding the installed package from the import system); majority needs no library."""
    monkeypatch.setitem(sys.modules, "crowdkit", None)
    table = _simulate(n_items=20, seed=9, gold=False)
    with pytest.raises(JudgelabError, match=r"judgelab\[latent\]"):
        latent_truth(table, judges=list(ACCURACIES), n_resamples=0)
    assert len(latent_truth(table, judges=list(ACCURACIES), method="majority", n_resamples=0)) == 5


def test_default_judges_leave_out_gold_and_latent_raters() -> None:
    """Invariant: without judges=, the model judges are fitted; gold and a latent:<method> rater added earlier are
    not among them."""
    table = latent_truth_labels(_simulate(n_items=60, seed=12), judges=list(ACCURACIES), method="majority")
    res = latent_truth(table, method="majority", n_resamples=0)
    assert sorted(res.loc[res["metric"] == "accuracy", "judge"]) == sorted(ACCURACIES)
