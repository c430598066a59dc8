"""LLMBar: every published statistics.json reproduced from result.json + dataset.json labels.

The accuracy, both-orders and "equal" (position consistency) fields must match exactly via
``judgelab.datasets.llmbar`` + ``judgelab.stats.pairwise_accuracy(policy="tie")``; the kappa
fields must match under LLMBar's encoding quirk, and the correct Cohen's kappa is checked
against scikit-learn.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from judgelab.datasets import (
    DataNotFoundError,
    llmbar,
    llmbar_combinations,
    llmbar_kappa,
    llmbar_kappa_as_published,
    llmbar_kappa_comparison,
    llmbar_published_statistics,
    llmbar_splits,
)
from judgelab.stats import pairwise_accuracy

REPO = Path(__file__).resolve().parents[2]


def _collection_data_dir() -> Path | None:
    """The data folder at collection time (parametrisation), located as tests/conftest.py does."""
    env = os.environ.get("JUDGELAB_DATA_DIR")
    for candidate in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if (candidate / "LLMBar").is_dir():
            return candidate
    return None


def _combos(released: bool) -> list[tuple[str, str, str]]:
    root = _collection_data_dir()
    if root is None:
        return []
    df = llmbar_combinations(root)
    df = df[df["has_result"] == released]
    return list(zip(df["split"], df["judge"], df["strategy"], strict=True))


RELEASED = _combos(True)
STATISTICS_ONLY = _combos(False)


def test_every_folder_is_found(data_dir: Path) -> None:
    on_disk = sorted(p.parent for p in (data_dir / "LLMBar").rglob("statistics.json"))
    assert len(on_disk) == len(RELEASED) + len(STATISTICS_ONLY) == 197
    assert len(RELEASED) == 137
    assert {
        "LLMBar/Natural",
        "LLMBar/Adversarial/Neighbor",
        "LLMBar/Adversarial/GPTInst",
        "LLMBar/Adversarial/GPTOut",
        "LLMBar/Adversarial/Manual",
        "Processed/FairEval",
        "Processed/LLMEval^2",
        "Processed/MT-Bench",
        "CaseStudy/Negation",
        "CaseStudy/Normal",
        "CaseStudy/Base_9",
        "CaseStudy/Base_10",
        "CaseStudy/Constraint",
    } == set(llmbar_splits(data_dir))


@pytest.mark.parametrize(("split", "judge", "strategy"), RELEASED, ids=["/".join(c) for c in RELEASED])
def test_published_statistics_are_reproduced(data_dir: Path, split: str, judge: str, strategy: str) -> None:
    result = llmbar(split, judge, strategy, data_dir=data_dir, rating_winner="as_published")
    published = llmbar_published_statistics(split, judge, strategy, data_dir=data_dir)
    acc = pairwise_accuracy(result.table, policy="tie", n_resamples=50).set_index("metric")
    n = len(result.items)
    fields = {
        "correct_False": "accuracy_original",
        "correct_True": "accuracy_swapped",
        "correct_both": "correct_both",
        "equal": "position_consistency",
    }
    for field, metric in fields.items():
        assert acc.loc[metric, "n_correct"] == published[f"{field}_count"], field
        assert acc.loc[metric, "n"] == published[f"{field}_n"] == n, field
        assert acc.loc[metric, "estimate"] * 100 == pytest.approx(published[f"{field}_percent"], abs=1e-9), (
            field
        )
    assert acc.loc["accuracy_mean", "estimate"] * 100 == pytest.approx(
        published["correct_average_percent"], abs=1e-9
    )

    quirk = llmbar_kappa_as_published(result)
    for field, value in quirk.items():
        assert math.isclose(value, published[field], abs_tol=1e-12), field


@pytest.mark.parametrize(("split", "judge", "strategy"), STATISTICS_ONLY[:3] + STATISTICS_ONLY[-2:])
def test_statistics_only_folders_are_a_clear_error(
    data_dir: Path, split: str, judge: str, strategy: str
) -> None:
    """These folders publish statistics.json without result.json: nothing to reproduce them from."""
    with pytest.raises(DataNotFoundError, match="only statistics.json"):
        llmbar(split, judge, strategy, data_dir=data_dir)
    assert "correct_both_count" in llmbar_published_statistics(split, judge, strategy, data_dir=data_dir)


def test_correct_kappa_matches_sklearn_and_differs_from_the_published_quirk(data_dir: Path) -> None:
    result = llmbar("Natural", "ChatGPT", "Vanilla_NoRules", data_dir=data_dir)
    kappa = llmbar_kappa(result)
    t = result.table.set_index(["item_id", "judge", "condition"])["winner"]
    ids = result.items["item_id"]
    gold = [t[(i, "gold", "original")] for i in ids]
    orig = [t[(i, "ChatGPT", "original")] for i in ids]
    swap = [t[(i, "ChatGPT", "swapped")] for i in ids]
    assert kappa["kappa_original"] == pytest.approx(cohen_kappa_score(orig, gold), abs=1e-12)
    assert kappa["kappa_swapped"] == pytest.approx(cohen_kappa_score(swap, gold), abs=1e-12)
    assert kappa["kappa_between_orders"] == pytest.approx(cohen_kappa_score(orig, swap), abs=1e-12)
    published = json.loads(
        (
            data_dir / "LLMBar/Dataset/LLMBar/Natural/evaluators/ChatGPT/Vanilla_NoRules/statistics.json"
        ).read_text()
    )
    # 79% accuracy in each order is far more agreement than the published kappa_False 0.194 suggests
    assert kappa["kappa_original"] > 0.5 > published["kappa_False"]
    # the quirk is exactly sklearn's kappa of the 1/0-encoded winners against the 1/2 labels
    encoded = [1 if w == "A" else 0 for w in orig]
    labels = [1 if g == "A" else 2 for g in gold]
    assert llmbar_kappa_as_published(result)["kappa_False"] == pytest.approx(
        cohen_kappa_score(encoded, labels)
    )
    side_by_side = llmbar_kappa_comparison(result).set_index("published_field")
    assert side_by_side.loc["kappa_False", "published_encoding"] == pytest.approx(published["kappa_False"])
    assert side_by_side.loc["kappa_False", "cohen_kappa"] == pytest.approx(kappa["kappa_original"])


def test_table_layout_both_orders_gold_and_unscored(data_dir: Path) -> None:
    result = llmbar("Adversarial/GPTInst", "ChatGPT", "CoT", data_dir=data_dir)
    t = result.table
    assert len(result.items) == 92 and len(t) == 92 * 3
    assert set(t["judge"]) == {"ChatGPT", "gold"} and set(t["condition"]) == {"original", "swapped"}
    assert result.table["run_id"].iloc[0] == "llmbar:LLMBar/Adversarial/GPTInst:ChatGPT:CoT"
    unscored = t[t["status"] != "ok"]
    assert (
        len(unscored) >= 1 and unscored["winner"].isna().all() and unscored["unscored_reason"].notna().all()
    )
    gold = t[t["judge"] == "gold"].set_index("item_id")["winner"]
    items = result.items.set_index("item_id")
    # as dicts: on pandas 2.2 a string-dtype index never equals an object-dtype one holding the same ids
    assert gold.to_dict() == items["label"].map({1: "A", 2: "B"}).to_dict()
    assert result.source.repo == "princeton-nlp/LLMBar" and result.source.license == "MIT"


def test_rating_strategy_ties_and_unreadable_scores(data_dir: Path) -> None:
    honest = llmbar("Natural", "GPT-4", "Rating", data_dir=data_dir).table
    published = llmbar("Natural", "GPT-4", "Rating", data_dir=data_dir, rating_winner="as_published").table
    judge = honest[honest["judge"] == "GPT-4"]
    assert (judge["winner"] == "TIE").any()  # equal 1-10 scores are a tie, not a win for either side
    assert not (published["winner"] == "TIE").any()
    # an independent rating does not depend on the order, so both conditions agree
    wide = judge.pivot(index="item_id", columns="condition", values="winner")
    assert (wide["original"].fillna("-") == wide["swapped"].fillna("-")).all()


def test_swap_strategy_keeps_the_first_round_and_split_aliases(data_dir: Path) -> None:
    result = llmbar("GPTInst", "GPT-4", "Swap", data_dir=data_dir)
    details = [json.loads(d) for d in result.table.loc[result.table["judge"] == "GPT-4", "detail"]]
    synthesized = [d for d in details if d.get("synthesized_second_round")]
    assert synthesized and all(set(d["first_round_winners"].values()) == {"1", "2"} for d in synthesized)
    with pytest.raises(DataNotFoundError, match="unknown LLMBar split"):
        llmbar("Nope", "GPT-4", "Swap", data_dir=data_dir)
    with pytest.raises(DataNotFoundError, match="no LLMBar evaluator folder"):
        llmbar("Natural", "Claude", "Swap", data_dir=data_dir)
    with pytest.raises(ValueError, match="rating_winner"):
        llmbar("Natural", "GPT-4", "Rating", data_dir=data_dir, rating_winner="coin")  # type: ignore[arg-type]


def test_kappa_point_handles_constant_raters() -> None:
    from judgelab.datasets.llmbar_published import cohen_kappa_point

    assert np.isnan(cohen_kappa_point(np.array(["A", "A"]), np.array(["A", "A"])))
    assert cohen_kappa_point(np.array(["A", "B", "A"]), np.array(["A", "B", "A"])) == 1.0
