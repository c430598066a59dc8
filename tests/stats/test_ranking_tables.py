"""Rankings read from a judgments table: rank_systems on pairwise verdicts, rank_by_score, by='judge', and
ranking_agreement between two judges.

Tables are generated from seeded numpy generators (systems with known strengths, items naming the two
systems in the original order, a verdict per order with winners in the ORIGINAL labels as the runner
stores swapped rows); each test's docstring states the invariant it checks.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from judgelab import datasets
from judgelab.judgments import COLUMN_DOCS, make_table
from judgelab.stats import (
    AmbiguousQuestionError,
    StatsInputError,
    rank_by_score,
    rank_systems,
    ranking_agreement,
)

NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]
COMPARED = ["metric", "system", "estimate", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "n"]


def verdicts(seed: int, *, n_items: int = 80, k: int = 4, judges: tuple[str, ...] = ("gpt",), tie_rate: float = 0.1,
             unscored_rate: float = 0.0, noise: float = 0.0) -> pd.DataFrame:
    """A pairwise judgments table: each item pits two systems (columns model_a / model_b, original order), each
    judge gives a verdict in both orders with the winner in the original labels; some rows unscored."""
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.0, -1.0, k)
    rows = []
    for i in range(n_items):
        a, b = rng.choice(k, 2, replace=False)
        for judge_index, judge in enumerate(judges):
            for condition in ("original", "swapped"):
                shift = noise * judge_index * rng.normal()
                p_a = special.expit(strength[a] - strength[b] + shift)
                winner = "TIE" if rng.random() < tie_rate else ("A" if rng.random() < p_a else "B")
                row = {"item_id": f"item{i:03d}", "judge": judge, "criterion": "overall", "rubric": "pairwise",
                       "condition": condition, "model_a": NAMES[a], "model_b": NAMES[b], "prompt": f"p{i % 17}"}
                if rng.random() < unscored_rate:
                    row.update(status="parse_error", unscored_reason="no verdict")
                else:
                    row.update(status="ok", winner=winner)
                rows.append(row)
    return make_table(rows)


def as_battles(table: pd.DataFrame) -> pd.DataFrame:
    """The battles frame the table stands for: one battle per (item, order) row, the winner as stored."""
    return pd.DataFrame({"model_a": table["model_a"].astype(str), "model_b": table["model_b"].astype(str),
                         "winner": table["winner"].astype(object), "item_id": table["item_id"].astype(str)})


def compared(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[COMPARED].reset_index(drop=True)


def test_the_table_stores_swapped_winners_in_original_labels() -> None:
    """Invariant relied on: the judgments table documents ``winner`` in the ORIGINAL candidate labels."""
    assert "ORIGINAL" in " ".join(COLUMN_DOCS["winner"])


@pytest.mark.parametrize("ties", ["half", "davidson", "drop"])
def test_table_ranks_like_its_battles_frame(ties: str) -> None:
    """Invariant: a judgments table ranks exactly as the battles frame with each (item, order) verdict as one
    battle, clustered by item (the table's default cluster), under every tie policy."""
    table = verdicts(3, tie_rate=0.15)
    from_table = rank_systems(table, ties=ties, n_resamples=200, seed=5)
    from_frame = rank_systems(as_battles(table), cluster="item_id", ties=ties, n_resamples=200, seed=5)
    pd.testing.assert_frame_equal(compared(from_table), compared(from_frame))
    assert (from_table["judge"] == "gpt").all()
    # a swapped row's "A" is the system in model_a: reading it as the shown label changes the result
    shown = as_battles(table)
    swapped = (table["condition"] == "swapped").to_numpy()
    shown.loc[swapped, "winner"] = shown.loc[swapped, "winner"].map({"A": "B", "B": "A", "TIE": "TIE"})
    other = rank_systems(shown, cluster="item_id", ties=ties, n_resamples=200, seed=5)
    assert not np.allclose(compared(other)["estimate"].sort_values(), compared(from_frame)["estimate"].sort_values())


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), rate=st.floats(0.05, 0.3))
def test_unscored_policies_are_the_named_edits(seed: int, rate: float) -> None:
    """Invariants on generated tables with unscored rows: unscored='drop' equals ranking the table without
    those rows; unscored='tie' equals the table with those rows scored TIE; both report the count, and the
    row order of the table changes nothing."""
    table = verdicts(seed, n_items=60, unscored_rate=rate, tie_rate=0.2)
    unscored = table["status"] != "ok"
    n_unscored = int(unscored.sum())
    if n_unscored == 0:
        return
    options = {"n_resamples": 60, "seed": 1}
    try:
        dropped = rank_systems(table, unscored="drop", **options)
    except StatsInputError as error:  # a drawn table may leave a system unbeaten: refused, never ranked wrongly
        assert "every" in str(error) or "win" in str(error) or "lose" in str(error)
        return
    pd.testing.assert_frame_equal(compared(dropped), compared(rank_systems(table[~unscored], **options)))
    assert (dropped["n_unscored"] == n_unscored).all() and f"{n_unscored} unscored rows dropped" in dropped["note"][0]
    tied = table.copy()
    tied.loc[unscored, "status"] = "ok"
    tied.loc[unscored, "winner"] = "TIE"
    as_ties = rank_systems(table, unscored="tie", **options)
    pd.testing.assert_frame_equal(compared(as_ties), compared(rank_systems(tied, **options)))
    shuffled = table.sample(frac=1.0, random_state=seed)
    pd.testing.assert_frame_equal(compared(rank_systems(shuffled, unscored="tie", **options)), compared(as_ties))


def test_refusals_name_the_fix() -> None:
    """Invariant: each undetermined or broken table is refused in one sentence naming the argument to pass."""
    two = verdicts(1, judges=("gpt", "claude"))
    with pytest.raises(AmbiguousQuestionError, match="judge=.*by='judge'"):
        rank_systems(two)
    with pytest.raises(StatsInputError, match="judge 'nobody' is not in the table"):
        rank_systems(two, judge="nobody")
    with pytest.raises(StatsInputError, match=r"unscored \(parse_error \d+\): pass unscored='tie' or "):
        rank_systems(verdicts(1, unscored_rate=0.1))
    with pytest.raises(StatsInputError, match="no column 'system_one'"):
        rank_systems(verdicts(1), system_a="system_one", system_b="model_b")
    with pytest.raises(StatsInputError, match="both name column 'model_a'"):
        rank_systems(verdicts(1), system_a="model_a", system_b="model_a")
    same = verdicts(1)
    same.loc[same["item_id"] == "item000", "model_b"] = same.loc[same["item_id"] == "item000", "model_a"]
    with pytest.raises(StatsInputError, match="one system on both sides"):
        rank_systems(same)
    criteria = pd.concat([verdicts(1), verdicts(2).assign(criterion="safety")], ignore_index=True)
    with pytest.raises(AmbiguousQuestionError, match="2 criteria .*by='criterion'"):
        rank_systems(criteria)
    assert set(rank_systems(criteria, by="criterion", n_resamples=20)["criterion"]) == {"overall", "safety"}
    perturbed = verdicts(1)
    perturbed.loc[0, "condition"] = "shuffled_whitespace"
    with pytest.raises(AmbiguousQuestionError, match="shuffled_whitespace"):
        rank_systems(perturbed)
    drifting = verdicts(1)
    drifting.loc[1, "model_a"] = "zulu"  # the item's swapped row names another system than its original row
    with pytest.raises(StatsInputError, match="different systems in column 'model_a'"):
        rank_systems(drifting)
    with pytest.raises(StatsInputError, match="judge= and unscored= read a judgments table"):
        rank_systems(as_battles(verdicts(1)), judge="gpt")


def test_by_judge_is_each_judge_side_by_side() -> None:
    """Invariant: by='judge' gives, per judge, exactly that judge's own ranking (same seed, same resamples), the
    judge column leading; for rank_by_score too."""
    table = verdicts(7, judges=("claude", "gpt"), noise=1.0)
    side_by_side = rank_systems(table, by="judge", n_resamples=100, seed=3)
    assert list(side_by_side.columns[:2]) == ["judge", "metric"]
    for judge in ("claude", "gpt"):
        alone = rank_systems(table, judge=judge, n_resamples=100, seed=3)
        block = side_by_side[side_by_side["judge"] == judge]
        pd.testing.assert_frame_equal(block.reset_index(drop=True), alone.reset_index(drop=True))
    scores = score_table(7)
    by_judge = rank_by_score(scores, by="judge", cluster="document_id", n_resamples=100, seed=3)
    for judge in ("expert", "model"):
        alone = rank_by_score(scores, judge=judge, cluster="document_id", n_resamples=100, seed=3)
        block = by_judge[by_judge["judge"] == judge]
        pd.testing.assert_frame_equal(block.reset_index(drop=True), alone.reset_index(drop=True))


def score_table(seed: int, n_docs: int = 30, k: int = 5, judges: tuple[str, ...] = ("expert", "model"),
                copy: bool = False) -> pd.DataFrame:
    """Per document, every system's summary scored 1-5 by each judge (a model judge noisier; ``copy``: the
    second judge gives the first judge's scores)."""
    rng = np.random.default_rng(seed)
    quality = np.linspace(1.0, -1.0, k)
    rows = []
    for d in range(n_docs):
        difficulty = rng.normal()
        for s in range(k):
            base = quality[s] + difficulty
            first = float(np.clip(np.round(3 + base + rng.normal(0, 0.7)), 1, 5))
            for j, judge in enumerate(judges):
                value = first if (j == 0 or copy) else float(np.clip(np.round(3 + base + rng.normal(0, 1.5)), 1, 5))
                rows.append({"item_id": f"d{d}-{NAMES[s]}", "judge": judge, "criterion": "coherence",
                             "condition": "original", "rubric": "likert", "score": value, "system": NAMES[s],
                             "document_id": f"d{d}"})
    return make_table(rows)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_rank_by_score_is_the_mean_per_system(seed: int) -> None:
    """Invariants on generated score tables: each system's estimate is its pandas groupby mean, ``rank`` is 1 +
    the number of systems with a larger mean, the interval holds the resampled means' quantiles (so ci_low <=
    ci_high), and shuffling the rows changes nothing (documents resampled by label)."""
    table = score_table(seed)
    result = rank_by_score(table, judge="model", cluster="document_id", n_resamples=100, seed=2)
    expected = table[table["judge"] == "model"].groupby("system")["score"].mean().astype(float)
    got = result.set_index("system")["estimate"]
    np.testing.assert_allclose(got.sort_index().to_numpy(), expected.sort_index().to_numpy(), rtol=0, atol=1e-12)
    means = got.to_numpy()
    assert list(result["rank"]) == [1 + int((means > m).sum()) for m in means]
    assert (result["ci_low"] <= result["ci_high"]).all()
    assert (result["rank_low"] <= result["rank_high"]).all()
    shuffled = rank_by_score(table.sample(frac=1.0, random_state=seed), judge="model", cluster="document_id",
                             n_resamples=100, seed=2)
    pd.testing.assert_frame_equal(shuffled, result)


def test_rank_by_score_refusals() -> None:
    """Invariant: several judges, unscored rows, and a non-numeric score are refused naming the fix."""
    table = score_table(0)
    with pytest.raises(AmbiguousQuestionError, match="judge="):
        rank_by_score(table)
    broken = table.copy()
    broken.loc[0, ["status", "unscored_reason"]] = ["api_error", "timeout"]
    broken.loc[0, "score"] = np.nan
    with pytest.raises(StatsInputError, match="unscored='drop'"):
        rank_by_score(broken, judge="expert")
    kept = rank_by_score(broken, judge="expert", unscored="drop", n_resamples=20)
    assert (kept["n_unscored"] == 1).all() and kept["n"].sum() == (table["judge"] == "expert").sum() - 1
    with pytest.raises(StatsInputError, match="'tie'"):
        rank_by_score(broken, judge="expert", unscored="tie")  # type: ignore[arg-type]


def test_ranking_agreement_tau_matches_scipy_and_resamples_jointly() -> None:
    """Invariants: tau on the point estimates equals scipy.stats.kendalltau (tau-b) of the judges' mean scores and
    of their Bradley-Terry coefficients from rank_systems; a judge compared with an exact copy of itself has
    tau 1 in EVERY joint resample (interval [1, 1]) and never a different top-k set, which holds only because
    both judges are refitted on the same resamples."""
    table = score_table(4, n_docs=40)
    result = ranking_agreement(table, ["expert", "model"], score="score", cluster="document_id", top_k=2,
                               n_resamples=200).set_index("metric")
    means = [table[table["judge"] == j].groupby("system")["score"].mean() for j in ("expert", "model")]
    assert result.loc["kendall_tau", "estimate"] == pytest.approx(scipy.stats.kendalltau(*means).statistic, abs=1e-12)
    assert 0 <= result.loc["top_k_differs_resampled", "estimate"] <= 1

    pairwise = verdicts(11, judges=("claude", "gpt"), noise=1.5, n_items=120, k=5)
    agreement = ranking_agreement(pairwise, ["claude", "gpt"], top_k=2, n_resamples=100).set_index("metric")
    coefs = [rank_systems(pairwise, judge=j, n_resamples=2).query("metric == 'bt_coefficient'")
             .set_index("system")["estimate"].sort_index() for j in ("claude", "gpt")]
    assert agreement.loc["kendall_tau", "estimate"] == pytest.approx(scipy.stats.kendalltau(*coefs).statistic,
                                                                      abs=1e-12)

    copy = score_table(4, n_docs=40, copy=True)
    same = ranking_agreement(copy, ["expert", "model"], score="score", cluster="document_id", top_k=2,
                             n_resamples=200).set_index("metric")
    assert same.loc["kendall_tau", ["estimate", "ci_low", "ci_high"]].tolist() == [1.0, 1.0, 1.0]
    assert same.loc["top_k_differs", "estimate"] == 0 and same.loc["top_k_differs_resampled", "estimate"] == 0
    changes = same[same.index == "top_k_changes"]["estimate"]
    assert changes.nunique() == 1  # the copy's top-k moves in exactly the resamples the original's does


def test_ranking_agreement_refusals() -> None:
    """Invariant: fewer than two distinct judges, or a top_k covering every system, is refused."""
    table = score_table(0)
    with pytest.raises(StatsInputError, match="two different judges"):
        ranking_agreement(table, ["expert", "expert"], score="score")
    with pytest.raises(StatsInputError, match="top_k=5 covers all 5"):
        ranking_agreement(table, ["expert", "model"], score="score", top_k=5)


def test_summeval_systems_ranked_by_expert_mean(data_dir: object) -> None:
    """On released SummEval data: the 12 systems ranked by the experts' mean coherence (documents resampled as
    clusters) have, per system, exactly pandas' groupby mean over its 100 summaries, ranks that order those
    means, and rank intervals that contain at least one rank each."""
    table = datasets.summeval("gpt-3.5-turbo-0301", "rts", data_dir=data_dir).table
    table = table[table["criterion"] == "coherence"]
    result = rank_by_score(table, judge="human", cluster="document_id", n_resamples=200)
    assert len(result) == 12 and (result["n"] == 100).all()
    expected = table[table["judge"] == "human"].groupby("system")["score"].mean().astype(float)
    np.testing.assert_allclose(result.set_index("system")["estimate"].sort_index(), expected.sort_index(),
                               rtol=0, atol=1e-12)
    assert result["estimate"].is_monotonic_decreasing and list(result["rank"]) == list(range(1, 13))
    assert (result["rank_low"] <= result["rank_high"]).all()


_JUNK = st.one_of(st.integers(-3, 3), st.just(float("nan")), st.text(max_size=6), st.none(), st.just(["model_a"]),
                  st.just(pd.DataFrame({"x": [1.0]})), st.sampled_from(["judge", "criterion", "model_a", "item_id"]))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["rank_systems", "rank_by_score", "ranking_agreement"]), st.data())
def test_junk_in_any_argument_is_a_judgelab_error(name: str, data: st.DataObject) -> None:
    """Invariant: a valid judgments table with a generated junk value (number, NaN, text, None, list, frame, a column
    name) in any one argument either ranks or raises a JudgelabError -- never another exception."""
    from judgelab.errors import JudgelabError

    if name == "rank_systems":
        func, kwargs = rank_systems, {"battles": verdicts(2, n_items=40, judges=("claude", "gpt")), "judge": "gpt"}
    elif name == "rank_by_score":
        func, kwargs = rank_by_score, {"table": score_table(1, n_docs=8), "judge": "model"}
    else:
        func, kwargs = ranking_agreement, {"table": score_table(1, n_docs=8), "judges": ["expert", "model"],
                                           "score": "score"}
    names = list(inspect.signature(func).parameters)
    target = data.draw(st.sampled_from(names), label="argument")
    kwargs = {**kwargs, "n_resamples": 5, target: data.draw(_JUNK, label="value")}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            func(**kwargs)
    except JudgelabError:
        pass


def test_votes_imported_with_candidates_rank_like_the_raw_votes() -> None:
    """Invariant: Arena / MT-Bench style votes (model_a, model_b in the order shown, winner model_a / model_b / tie)
    imported with from_frame(candidates=...) -- items re-oriented to the sorted pair, winners flipped to match --
    rank per judge exactly as each judge's raw votes read as a battles frame, clustered by the same item."""
    from judgelab.datasets import from_frame

    rng = np.random.default_rng(12)
    strength = {"m1": 0.8, "m2": 0.3, "m3": -0.2, "m4": -0.9}
    rows = []
    for question in range(60):
        for voter in ("author_0", "author_1"):
            a, b = rng.choice(list(strength), 2, replace=False)
            p_a = special.expit(strength[a] - strength[b])
            u = rng.random()
            rows.append({"question_id": question, "model_a": a, "model_b": b, "judge": voter,
                         "winner": "tie" if u > 0.85 else ("model_a" if rng.random() < p_a else "model_b")})
    votes = pd.DataFrame(rows)
    table = from_frame(votes, item_id="question_id", judge="judge", winner="winner", candidates=("model_a", "model_b"))
    ranked = rank_systems(table, system_a="candidate_a", system_b="candidate_b", by="judge", n_resamples=100)
    for voter in ("author_0", "author_1"):
        mine = votes[votes["judge"] == voter].copy()
        low = np.minimum(mine["model_a"], mine["model_b"])
        high = np.maximum(mine["model_a"], mine["model_b"])
        mine["item"] = mine["question_id"].astype(str) + ":" + low + ":" + high
        direct = rank_systems(mine, cluster="item", n_resamples=100)
        pd.testing.assert_frame_equal(compared(ranked[ranked["judge"] == voter]), compared(direct))


def _score_coverage(n_sets: int, n_resamples: int, seed0: int) -> tuple[float, float]:
    """Coverage of the true system means by the mean CIs, and of the true ranks by the rank intervals, on seeded
    score sets: 40 documents (clusters) x 5 systems, score = 3 + quality + document difficulty + noise."""
    quality = np.linspace(0.3, -0.3, 5)
    systems = [f"s{i}" for i in range(5)]
    mean_hits, rank_hits = [], []
    for t in range(n_sets):
        rng = np.random.default_rng(seed0 + t)
        scores = 3 + quality[None, :] + rng.normal(0, 0.5, 40)[:, None] + rng.normal(0, 1, (40, 5))
        frame = pd.DataFrame({"system": np.tile(systems, 40), "score": scores.ravel(), "doc": np.repeat(range(40), 5)})
        got = rank_by_score(frame, cluster="doc", n_resamples=n_resamples, seed=t).set_index("system").loc[systems]
        mean_hits += list((got["ci_low"] <= 3 + quality) & (3 + quality <= got["ci_high"]))
        rank_hits += list((got["rank_low"] <= np.arange(1, 6)) & (np.arange(1, 6) <= got["rank_high"]))
    return float(np.mean(mean_hits)), float(np.mean(rank_hits))


def test_rank_by_score_intervals_cover_the_truth() -> None:
    """Invariant: over 200 seeded score sets with known system means (documents as clusters), the 95% mean CIs hold
    the true mean in 91-98% of system-sets and the rank intervals hold the true rank in at least 93%."""
    mean_coverage, rank_coverage = _score_coverage(200, 200, 0)
    assert 0.91 <= mean_coverage <= 0.98
    assert rank_coverage >= 0.93


@pytest.mark.slow
def test_rank_by_score_coverage_over_1000_sets() -> None:
    """Invariant: as above over 1,000 sets and 400 resamples each: mean CIs within 3 points of 95%."""
    mean_coverage, rank_coverage = _score_coverage(1000, 400, 1000)
    assert 0.92 <= mean_coverage <= 0.98
    assert rank_coverage >= 0.95
