"""stats.compare_rubrics: held-out selection of the best rubric variant, paired clustered CIs, Holm p-values.

Cross-checked against scipy / scikit-learn / statsmodels on an explicit split, and by a seeded simulation:
a planted best variant is selected and its held-out CI covers its true Spearman rho at about the nominal
rate, and with no true difference the Holm-corrected p-values reject at most at 5% (family-wise).
Print the simulation's rates with more replications:  python -m tests.stats.test_compare_rubrics
"""

from __future__ import annotations

import gc
import math
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from judgelab.errors import ConfigError, JudgelabError
from judgelab.stats import compare_rubrics

TAU = 0.7  # sd of the document effect; items within a document share it


def simulated_table(rng: np.random.Generator, reps: int, noise: tuple[float, ...], *, n_docs: int = 40,
                    per_doc: int = 4) -> pd.DataFrame:
    """One judge per replication ("rep<k>"), each with variants v0.. whose scores are gold + N(0, noise[v]^2).

    Gold = document effect N(0, TAU^2) + item noise N(0, 1), so (gold, score) is bivariate normal and a
    variant's true Spearman rho is (6 / pi) arcsin(r / 2) with r = sqrt(var_g / (var_g + s^2)).
    """
    n = n_docs * per_doc
    doc = np.repeat(np.arange(n_docs), per_doc)
    parts = []
    for r in range(reps):
        gold = rng.normal(0, TAU, n_docs)[doc] + rng.normal(0, 1, n)
        items = [f"r{r}-{k}" for k in range(n)]
        docs = [f"r{r}-d{d}" for d in doc]
        parts.append(pd.DataFrame({"item_id": items, "judge": "human", "rubric": "gold", "score": gold,
                                   "document_id": docs}))
        for v, sd in enumerate(noise):
            parts.append(pd.DataFrame({"item_id": items, "judge": f"rep{r}", "rubric": f"v{v}",
                                       "score": gold + rng.normal(0, sd, n), "document_id": docs}))
    table = pd.concat(parts, ignore_index=True)
    return table.assign(criterion="overall", status="ok")


def true_rho(sd: float) -> float:
    var_g = TAU**2 + 1
    return 6 / math.pi * math.asin(math.sqrt(var_g / (var_g + sd**2)) / 2)


def simulate(reps: int, noise: tuple[float, ...], seed: int, cluster_resampling: str = "clusters") -> dict[str, float]:
    """Rates over ``reps`` replications of one scenario (each replication is one judge of one table)."""
    table = simulated_table(np.random.default_rng(seed), reps, noise)
    res = compare_rubrics(table, "human", cluster="document_id", n_resamples=200, seed=seed,
                          cluster_resampling=cluster_resampling)
    variants, diffs = res[res["part"] == "variant"], res[res["part"] == "difference"]
    chosen = variants[variants["selected"]]
    truth = np.array([true_rho(noise[int(v[1:])]) for v in chosen["variant"]])
    best = f"v{int(np.argmin(noise))}"
    return {
        "selected_best": float((chosen["variant"] == best).mean()),
        "coverage_of_selected": float(((chosen["ci_low"] <= truth) & (truth <= chosen["ci_high"])).mean()),
        "held_out_bias": float((chosen["estimate"] - truth).mean()),
        "in_sample_bias": float((chosen["selection_estimate"] - truth).mean()),
        "familywise_rejection": float(diffs.groupby("judge")["reject"].any().mean()),
        "best_rejected": float(diffs.loc[diffs["variant"] == best, "reject"].mean()) if best != "v0" else math.nan,
    }


@pytest.fixture
def no_gc_in_holm(monkeypatch: pytest.MonkeyPatch) -> None:
    """statsmodels' Holm step calls gc.collect() on every call (a tenth of a second in a large process);
    the simulation makes hundreds of calls, so only that call is disabled here."""
    monkeypatch.setattr(gc, "collect", lambda *args: 0)


NULL_REPS, PLANTED_REPS = 200, 100


@pytest.mark.slow
def test_no_true_difference_holm_rejects_at_most_at_five_percent(no_gc_in_holm):
    rates = simulate(NULL_REPS, (1.0, 1.0, 1.0, 1.0), seed=11)
    slack = 2 * math.sqrt(0.05 * 0.95 / NULL_REPS)
    assert rates["familywise_rejection"] <= 0.05 + slack, rates
    # trying 4 equal variants inflates the in-sample best; the held-out estimate is not inflated
    assert rates["in_sample_bias"] > 0.02 and abs(rates["held_out_bias"]) < 0.02, rates
    assert rates["coverage_of_selected"] >= 0.90, rates


@pytest.mark.slow
def test_a_planted_best_variant_is_found_and_its_interval_covers_it(no_gc_in_holm):
    rates = simulate(PLANTED_REPS, (1.0, 0.6, 1.0, 1.0), seed=12)
    assert rates["selected_best"] >= 0.95, rates
    assert rates["coverage_of_selected"] >= 0.90, rates
    assert rates["best_rejected"] > 0.3, rates  # and the held-out test against the base has power


# ---------------------------------------------------------------------------------- exact cross-checks
def small_table(seed: int = 0, n_docs: int = 12, per_doc: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    table = simulated_table(rng, 1, (1.0, 0.5, 1.5), n_docs=n_docs, per_doc=per_doc)
    return table.assign(score=table["score"].round(1))


def wide_scores(table: pd.DataFrame) -> pd.DataFrame:
    """item x "judge/rubric" scores (index item_id, document_id)."""
    keyed = table.assign(key=table["judge"] + "/" + table["rubric"])
    return keyed.pivot_table(index=["item_id", "document_id"], columns="key", values="score")


def test_estimates_match_scipy_on_an_explicit_split():
    table = small_table()
    held_docs = [f"r0-d{d}" for d in range(0, 12, 2)]
    res = compare_rubrics(table, "human", cluster="document_id", holdout_clusters=held_docs, n_resamples=300)
    wide = wide_scores(table)
    held = wide[wide.index.get_level_values("document_id").isin(held_docs)]
    rest = wide[~wide.index.get_level_values("document_id").isin(held_docs)]
    variants = res[res["part"] == "variant"].set_index("variant")
    for v in ("v0", "v1", "v2"):
        expected = sps.spearmanr(held[f"rep0/{v}"], held["human/gold"]).statistic
        assert variants.loc[v, "estimate"] == pytest.approx(expected, abs=1e-12)
        chosen_on = sps.spearmanr(rest[f"rep0/{v}"], rest["human/gold"]).statistic
        assert variants.loc[v, "selection_estimate"] == pytest.approx(chosen_on, abs=1e-12)
        assert variants.loc[v, "ci_low"] <= variants.loc[v, "estimate"] <= variants.loc[v, "ci_high"]
    assert variants["n"].unique().tolist() == [len(held)] and variants["n_selection"].unique().tolist() == [len(rest)]
    best = variants["selection_estimate"].idxmax()
    assert variants["selected"].sum() == 1 and variants.loc[best, "selected"]
    diffs = res[res["part"] == "difference"].set_index("variant")
    for v in ("v1", "v2"):
        assert diffs.loc[v, "estimate"] == pytest.approx(variants.loc[v, "estimate"] - variants.loc["v0", "estimate"])
    reject, adjusted, _, _ = multipletests(diffs["p_value"], alpha=0.05, method="holm")
    np.testing.assert_allclose(diffs["p_adjusted"], adjusted)
    assert diffs["reject"].tolist() == reject.tolist()
    assert "clustered by document_id (6 clusters; resampling whole clusters)" in diffs["method"].iloc[0]


def test_mae_lower_is_better_and_kappa_matches_sklearn():
    table = small_table(seed=3)
    table = table.assign(score=table["score"].clip(-2, 2).round())
    held_docs = [f"r0-d{d}" for d in range(6)]
    mae = compare_rubrics(table, "human", metric="mae", cluster="document_id", holdout_clusters=held_docs,
                          n_resamples=200)
    variants = mae[mae["part"] == "variant"].set_index("variant")
    assert variants.loc[variants["selection_estimate"].idxmin(), "selected"]  # the smallest error wins
    kappa = compare_rubrics(table, "human", metric="kappa", cluster="document_id", holdout_clusters=held_docs,
                            n_resamples=200)
    wide = wide_scores(table)
    held = wide[wide.index.get_level_values("document_id").isin(held_docs)]
    got = kappa[kappa["part"] == "variant"].set_index("variant")
    for v in ("v0", "v1", "v2"):
        expected = cohen_kappa_score(held[f"rep0/{v}"], held["human/gold"])
        assert got.loc[v, "estimate"] == pytest.approx(expected, abs=1e-12)
        expected_mae = np.abs(held[f"rep0/{v}"] - held["human/gold"]).mean()
        assert variants.loc[v, "estimate"] == pytest.approx(expected_mae)
    assert (got["metric"] == "cohen_kappa").all() and (variants["metric"] == "mae").all()


def test_unscored_rows_are_counted_and_units_kept_paired():
    table = small_table()
    bad = table.index[(table["rubric"] == "v2")][:5]
    table.loc[bad, "status"] = "parse_error"
    table.loc[bad, "score"] = np.nan
    res = compare_rubrics(table, "human", cluster="document_id", n_resamples=100)
    variants = res[res["part"] == "variant"].set_index("variant")
    assert variants["n_missing_dropped"].unique().tolist() == [5]
    assert variants["n_unscored_excluded"].unique().tolist() == [5]
    assert variants.loc["v2", "unscored_share"] == pytest.approx(5 / 36) and variants.loc["v0", "unscored_share"] == 0
    assert (variants["n"] + variants["n_selection"]).unique().tolist() == [36 - 5]


def test_several_judges_each_get_their_own_selection_and_family():
    one, two = small_table(seed=1), small_table(seed=2)
    two = two[two["judge"] != "human"].assign(judge="other", score=lambda f: -f["score"])
    res = compare_rubrics(pd.concat([one, two], ignore_index=True), "human", base="v1", cluster="document_id",
                          n_resamples=100)
    assert set(res["judge"]) == {"rep0", "other"}
    assert res.groupby("judge")["selected"].apply(lambda s: int(s[res.loc[s.index, "part"] == "variant"].sum())) \
        .tolist() == [1, 1]
    assert (res.loc[res["part"] == "difference", "correction"] == "holm over 2 tests, alpha=0.05").all()
    assert set(res.loc[res["part"] == "difference", "variant"]) == {"v0", "v2"}  # every variant vs the base v1


def test_gold_as_a_mapping_and_the_default_cluster_is_the_item():
    table = small_table()
    gold = dict(zip(table.loc[table["judge"] == "human", "item_id"], table.loc[table["judge"] == "human", "score"],
                    strict=True))
    judged = table[table["judge"] != "human"]
    by_map = compare_rubrics(judged, gold, n_resamples=100, seed=4)
    by_name = compare_rubrics(table, "human", n_resamples=100, seed=4)
    pd.testing.assert_frame_equal(by_map.drop(columns="method"), by_name.drop(columns="method"))
    assert "clustered by item_id" in by_name["method"].iloc[0]


@pytest.mark.parametrize(("change", "kwargs", "message"), [
    (None, {"metric": "auc"}, "unknown metric 'auc'"),
    (None, {"holdout": 1.0}, "holdout must be a share"),
    (None, {"holdout": 0.05, "cluster": "document_id"}, "each split needs at least 2"),
    (None, {"base": "v9"}, "base 'v9' is not a rubric of judge 'rep0'"),
    (None, {"judge": "nobody"}, "judge 'nobody' is not in the table"),
    (None, {"judge": "human"}, "judge 'human' is the gold rater"),
    ("solo", {"judge": "solo"}, "judge 'solo' has rows under one rubric only"),
    (None, {"cluster": "shelf"}, "cluster column 'shelf' is not in the judgments table"),
    ("dup", {}, "has two scored rows for item"),
    ("gold_missing", {}, "no scored rows of the gold rater 'human'"),
    ("two_clusters", {"cluster": "document_id"}, "belongs to several document_id clusters"),
    ("labels", {}, "not numeric"),
])
def test_bad_input_fails_with_one_sentence(change, kwargs, message):
    table = small_table()
    if change == "dup":
        table = pd.concat([table, table[table["rubric"] == "v1"].head(1)], ignore_index=True)
    elif change == "solo":
        table = pd.concat([table, table[table["rubric"] == "v1"].assign(judge="solo")], ignore_index=True)
    elif change == "gold_missing":
        table = table[table["judge"] != "human"]
    elif change == "two_clusters":
        table.loc[table.index[table["rubric"] == "v1"][0], "document_id"] = "elsewhere"
    elif change == "labels":
        table = table.assign(score=table["score"].map(lambda x: "good" if x > 0 else "bad"))
    with pytest.raises(ConfigError) as exc:
        compare_rubrics(table, "human", **kwargs)
    assert isinstance(exc.value, JudgelabError) and message in str(exc.value) and "\n" not in str(exc.value)


def test_mapping_gold_needs_one_criterion():
    table = small_table()
    table = pd.concat([table, table.assign(criterion="fluency")], ignore_index=True)
    with pytest.raises(ConfigError, match="needs one criterion"):  # even when pooling them is asked for
        compare_rubrics(table[table["judge"] != "human"], {"r0-0": 1.0}, criterion=["overall", "fluency"],
                        n_resamples=100)
    with pytest.raises(ConfigError, match=r"2 criteria \(fluency, overall\): pass criterion=<one>"):
        compare_rubrics(table, "human", n_resamples=100)  # never pooled unless asked


def test_released_summeval_prompt_styles(data_dir):
    """Real data: gpt-3.5's five released prompt styles on SummEval coherence (the four criteria pooled in
    notebook 09); documents resampled and split whole."""
    from judgelab.studies import variants_study

    table = variants_study.load_prompt_styles(data_dir, criteria=("coherence",)).table
    res = compare_rubrics(table, "human", cluster="document_id", n_resamples=200, seed=0)
    variants = res[res["part"] == "variant"]
    assert set(variants["variant"]) == {variants_study.rubric_name(s) for s in variants_study.PROMPT_STYLES}
    assert variants["n"].iloc[0] + variants["n_selection"].iloc[0] + variants["n_missing_dropped"].iloc[0] == 1200
    assert variants["selected"].sum() == 1 and (variants["estimate"].between(0, 1)).all()
    assert "(50 clusters" in variants["method"].iloc[0]


if __name__ == "__main__":  # the simulation's rates with more replications
    gc.collect = lambda *args: 0  # see no_gc_in_holm
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    for how in ("clusters", "clusters_then_rows"):  # the default, and the two-stage scheme it replaces here
        for name, noise in (("no true difference", (1.0, 1.0, 1.0, 1.0)), ("planted best v1", (1.0, 0.6, 1.0, 1.0))):
            rates = simulate(reps, noise, seed=20, cluster_resampling=how)
            print(f"{how}, {name} ({reps} replications): " + ", ".join(f"{k} {v:.3f}" for k, v in rates.items()),
                  flush=True)
