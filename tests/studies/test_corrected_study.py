"""studies/corrected_study on the released data (notebook 08 and `judgelab reproduce`'s corrected group), small settings.

The all-human values are recomputed here from the raw released files' tables with pandas, independently
of the corrected-estimate code, so a wrong join or a dropped item fails the test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judgelab import judgments
from judgelab.datasets import llmbar, openqa, summeval
from judgelab.studies import corrected_study as cs
from judgelab.viz.plots import PlotInputError, plot_corrected_coverage, plot_corrected_intervals


@pytest.fixture(scope="module")
def cases(data_dir: Path) -> dict[str, cs.Case]:
    return cs.load_cases(data_dir)


def _human_truths(data_dir: Path) -> dict[str, float]:
    """The all-human value of each case, straight from the loaders' tables with pandas."""
    se = summeval("gpt-3.5-turbo-0301", data_dir=data_dir, criteria=("coherence",)).table
    coherence = se[(se["judge"] == "human") & (se["criterion"] == "coherence")]
    oq = openqa("gpt-4", data_dir=data_dir).table
    human = oq[oq["judge"] == "human"]
    gold = []
    for split in ("LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "LLMBar/Adversarial/GPTInst",
                  "LLMBar/Adversarial/GPTOut", "LLMBar/Adversarial/Manual"):
        t = llmbar(split, "GPT-4", "Vanilla_NoRules", data_dir=data_dir).table
        gold.append(t.loc[(t["judge"] == "gold") & (t["condition"] == "original"), ["item_id", "winner"]])
    g = pd.concat(gold).drop_duplicates("item_id")
    return {"SummEval coherence": float(coherence.drop_duplicates("item_id")["score"].mean()),
            "OpenQA": float((human.drop_duplicates("item_id")["verdict"] == "yes").mean()),
            "LLMBar": float((g["winner"] == "A").mean()), "n_summeval": len(coherence["item_id"].unique()),
            "n_openqa": human["item_id"].nunique(), "n_llmbar": len(g)}


def test_the_all_human_truth_is_the_mean_of_every_gold_label(cases, data_dir: Path):
    truths = _human_truths(data_dir)
    assert (truths["n_summeval"], truths["n_openqa"], truths["n_llmbar"]) == (1200, 1490, 419)
    for name, case in cases.items():
        draws = cs.hidden_label_draws(case, n_labels=cs.HIDDEN_LABELS[name], n_draws=3, seed=1)
        assert draws["truth"].iloc[0] == pytest.approx(truths[name], abs=1e-12), name
        assert set(draws["estimator"]) == set(case.methods)
        # every visible-label estimate is a mean of values on the gold scale
        ok = draws["estimate"].notna()
        lo, hi = (1, 5) if name.startswith("SummEval") else (0, 1)
        assert draws.loc[ok, "estimate"].between(lo - 0.5, hi + 0.5).all()


def test_coverage_table_counts_draws_and_stays_in_unit_interval(cases):
    draws = cs.hidden_label_draws(cases["OpenQA"], n_labels=200, n_draws=40, seed=0)
    cov = cs.coverage_table(draws)
    assert list(cov["estimator"]) == list(cases["OpenQA"].methods)
    assert (cov["n"] + cov["n_undefined"] == 40).all()
    assert cov["estimate"].between(0, 1).all() and (cov["ci_low"] <= cov["estimate"]).all()
    classical = cov.set_index("estimator").loc["classical"]
    assert classical["width_vs_classical"] == pytest.approx(1.0)
    # recount one method's coverage from the draws by hand
    ppi = draws[draws["estimator"] == "ppi++"]
    hand = float(((ppi["ci_low"] <= ppi["truth"]) & (ppi["truth"] <= ppi["ci_high"])).mean())
    assert cov.set_index("estimator").loc["ppi++", "estimate"] == pytest.approx(hand)
    # a good judge (OpenQA gpt-4) narrows PPI++ below classical on the same draws
    assert cov.set_index("estimator").loc["ppi++", "width_vs_classical"] < 1


def test_one_draw_shows_exactly_n_labels_and_the_rest_unlabelled(cases):
    out = cs.one_draw(cases["SummEval coherence"], n_labels=150, seed=3)
    means = out[out["metric"] == "mean"]
    assert set(means["estimator"]) == {"classical", "ppi", "ppi++", "calibrated"}
    assert (means["n_labelled"] == 150).all() and (means["n_unlabelled"] == 1200 - 150).all()
    assert means["truth"].nunique() == 1
    plot_corrected_intervals(out)  # draws one group
    with pytest.raises(PlotInputError, match="several 'mean' rows"):
        plot_corrected_intervals(pd.concat([out, out]))


def test_simulations_at_small_settings():
    cov = cs.coverage_simulation(("binary", "clustered"), n_sims=30, seed=0)
    assert set(cov["design"]) == {"binary", "clustered"}
    assert "rogan_gladen" in set(cov.loc[cov["design"] == "binary", "estimator"])
    assert "rogan_gladen" not in set(cov.loc[cov["design"] == "clustered", "estimator"])  # continuous scores
    assert ((cov["n"] + cov["n_undefined"]) == 30).all() and cov["estimate"].between(0, 1).all()
    ltt = cs.ltt_simulation(n_sims=30, seed=0)
    assert list(ltt["setup"]) == ["single judge", "cascade"] and (ltt["n"] == 30).all()
    assert ltt["estimate"].between(0, 1).all() and ltt["mean_coverage"].between(0, 1).all()
    with pytest.raises(PlotInputError, match="needs columns"):
        plot_corrected_coverage(cov.drop(columns=["nominal"]), group="design")


def test_budget_curve_measured_width_shrinks_with_labels(cases):
    curve = cs.budget_curve(cases["OpenQA"], n_grid=(100, 400), n_draws=10, seed=0)
    measured = curve[curve["kind"] == "measured over draws"].set_index(["estimator", "n_labels"])["estimate"]
    for method in ("classical", "ppi++"):
        assert measured[(method, 400)] < measured[(method, 100)]
    projected = curve[curve["kind"] == "projected from a pilot"]
    assert len(projected) == 4 and projected["estimate"].gt(0).all()


def test_unscored_judge_rows_are_imputed_and_counted_in_openqa(cases):
    case = cases["OpenQA"]
    judge_rows = case.table[case.table["judge"] == case.judge]
    n_unscored = int((~judgments.is_scored(judge_rows)).sum())
    out = cs.one_draw(case, n_labels=200, seed=0)
    means = out[out["metric"] == "mean"]
    assert n_unscored > 0 and (means["n_unscored_imputed"] == n_unscored).all()
    assert (means["n_labelled"] + means["n_unlabelled"] == 1490).all()
    assert np.isfinite(means["estimate"]).all()


@pytest.mark.slow  # reads LLMBar's 6 strategies x 5 splits for GPT-4's votes (~10 s on 2 shared cores)
def test_llmbar_cascade_shares_add_up_and_certified_splits_are_checked(data_dir: Path):
    out = cs.llmbar_cascade(data_dir, alpha=0.15, delta=0.1, n_splits=5, seed=0, n_resamples=200)
    splits = out["splits"]
    assert len(splits) == 5
    assert np.allclose(splits["coverage"] + splits["to_human"], 1)
    assert np.allclose(splits["kept_by|ChatGPT"] + splits["kept_by|GPT-4"], splits["coverage"])
    kept = splits[splits["coverage"] > 0]
    assert (kept["meets_target"] == (kept["agreement_on_kept"] >= 0.85)).all()
    acc = out["accuracy"]["accuracy"]  # swap-consolidated: an order-inconsistent pair counts as wrong
    assert acc.between(0, 1).all() and acc["GPT-4|correct"] > acc["ChatGPT|correct"]
    first = out["first_split"].set_index("metric")
    assert first.loc["applied_coverage", "estimate"] + first.loc["applied_to_human_rate", "estimate"] == \
        pytest.approx(1)


@pytest.mark.slow  # the Alt-Test over SummEval's 4 criteria and OpenQA (~10 s)
def test_alt_test_table_has_one_verdict_per_judge_criterion_and_epsilon(data_dir: Path):
    out = cs.alt_test_table(data_dir, epsilons=(0.15,), summeval_judges=("gpt-3.5-turbo-0301",),
                            openqa_judges=("gpt-4",))
    wins = out[out["metric"] == "winning_rate"]
    assert len(wins) == 5  # SummEval x 4 criteria + OpenQA
    assert wins["estimate"].isin([0, 1 / 3, 2 / 3, 1]).all()  # a share of 3 annotators
    per_annotator = out[out["metric"] == "alt_test_annotator"]
    assert len(per_annotator) == 15 and per_annotator["p_value"].between(0, 1).all()
