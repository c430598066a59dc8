"""The position probe's unscored policy reaches every row it returns (consistency, first position, the
calibrated win rates and accuracies), and its "average" policy under unscored="tie" is JudgeBench's metric."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab import probes, stats
from judgelab.datasets import from_frame
from judgelab.errors import ConfigError


def _table(verdicts: dict[str, tuple[str | None, str | None]], gold: dict[str, str]) -> pd.DataFrame:
    rows = [{"item": i, "judge": "j", "order": o, "winner": w, "gold": gold[i]}
            for i, pair in verdicts.items() for o, w in zip(("original", "swapped"), pair, strict=True)]
    return from_frame(pd.DataFrame(rows), item_id="item", judge="judge", winner="winner", condition="order",
                      gold="gold", winner_in="original")


# i1 right twice; i2 reversed; i3 unscored in the swapped order; i4 unscored twice; i5 wrong twice
VERDICTS = {"i1": ("A", "A"), "i2": ("A", "B"), "i3": ("A", None), "i4": (None, None), "i5": ("B", "B")}
GOLD = dict.fromkeys(VERDICTS, "A")


def _summary(unscored: str) -> pd.DataFrame:
    return probes.position.analyze(_table(VERDICTS, GOLD), unscored=unscored, n_resamples=50).summary


def test_exclude_leaves_items_with_an_unscored_order_out_of_every_row() -> None:
    s = _summary("exclude")
    accuracy = s[s["metric"] == "accuracy"].set_index("policy")
    # i1 i2 i5 remain; "drop" also leaves out the inconsistent i2
    assert accuracy["n"].to_dict() == {"tie": 3, "drop": 2, "first": 3, "average": 3}
    consistency = s[s["metric"] == "consistency_rate"].iloc[0]
    assert consistency["n"] == 3
    first = s[s["metric"] == "first_position_rate"].iloc[0]
    assert first["n"] == 6  # two decisive verdicts for each of i1 i2 i5; i3's scored order is left out too
    assert s["note"].str.contains("2 item\\(s\\) with an unscored order excluded").all()


def test_tie_counts_unscored_as_tie_in_every_row() -> None:
    s = _summary("tie")
    accuracy = s[s["metric"] == "accuracy"].set_index("policy")
    assert accuracy.loc["tie", "n"] == 5 and accuracy.loc["average", "n"] == 5
    # average: i1 A, i2 TIE, i3 (A + TIE) -> A, i4 TIE, i5 B: right on i1 and i3
    assert accuracy.loc["average", "estimate"] == pytest.approx(2 / 5)
    assert s[s["metric"] == "consistency_rate"].iloc[0]["n"] == 5
    assert s[s["metric"] == "first_position_rate"].iloc[0]["n"] == 7  # TIE verdicts are not decisive
    assert s["note"].str.contains("counted as TIE").all()


@pytest.mark.parametrize("seed", range(5))
def test_average_policy_with_unscored_as_tie_is_judgebench_net_accuracy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = np.array(["A", "B", "TIE", None], dtype=object)
    verdicts = {f"i{k}": tuple(labels[rng.choice(4, size=2, p=[0.45, 0.35, 0.12, 0.08])]) for k in range(80)}
    gold = {i: "A" if rng.random() < 0.5 else "B" for i in verdicts}
    table = _table(verdicts, gold)
    probe = probes.position.analyze(table, unscored="tie", n_resamples=50).metric("accuracy", policy="average")
    net = stats.pairwise_accuracy(table, policy="net", n_resamples=20).set_index("metric").loc["accuracy_net"]
    assert probe["n"] == net["n"] == 80
    assert probe["estimate"] == pytest.approx(net["estimate"], abs=1e-12)


def test_duplicate_verdicts_and_conflicting_gold_are_errors() -> None:
    table = _table(VERDICTS, GOLD)
    doubled = pd.concat([table, table[table["judge"] == "j"].assign(run_id="second run")], ignore_index=True)
    with pytest.raises(ConfigError, match="share an item and order"):
        probes.position.analyze(doubled, n_resamples=20)
    gold = table[table["judge"] == "gold"].assign(run_id="other gold", winner="B")
    with pytest.raises(ConfigError, match="conflicting gold labels"):
        probes.position.analyze(pd.concat([table, gold], ignore_index=True), n_resamples=20)


def test_several_repeats_need_repeat_and_are_never_silently_dropped() -> None:
    table = _table(VERDICTS, GOLD)
    judged = table[table["judge"] == "j"]
    repeated = pd.concat([table.assign(repeat=0), judged.assign(repeat=1)], ignore_index=True)
    with pytest.raises(ConfigError, match=r"2 repeats \(0, 1\) of each order: pass repeat=<one of them>"):
        probes.position.analyze(repeated, n_resamples=20)
    first = probes.position.analyze(repeated, repeat=0, n_resamples=20)
    alone = probes.position.analyze(table, n_resamples=20)
    pd.testing.assert_frame_equal(first.summary, alone.summary)
    assert first.meta["repeat"] == 0
