"""The simulated annotator replays released labels through the session, and the estimate path reads them back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgelab import stats
from judgelab.judgments import combine, make_table
from judgelab.labels import LabelError, LabelSession, estimate_path, replay_labels

N = 50
RNG = np.random.default_rng(8)
HUMAN = RNG.integers(1, 6, N).astype(float)
TABLE = make_table([{"item_id": f"i{k}", "judge": "gpt", "rubric": "r", "criterion": "coherence",
                     "condition": "original", "score": float(np.clip(HUMAN[k] + RNG.integers(-1, 2), 1, 5)),
                     "confidence": float(RNG.uniform(0.3, 1))} for k in range(N)])
QUESTION = [{"name": "coherence", "kind": "score", "scale": 5}]


def test_replay_labels_the_selection_in_order_and_skips_items_without_a_label(tmp_path: Path) -> None:
    selection = stats.select_for_labelling(TABLE, judge="gpt", budget=12, strategy="active", seed=1)
    session = LabelSession(TABLE, QUESTION, "sim", tmp_path / "l.sqlite", order=selection)
    released = {f"i{k}": int(HUMAN[k]) for k in range(N) if k % 7}  # every seventh item has no released label
    done = replay_labels(session, released, n=5)
    table = session.table()
    assert done == 5 and len(table) == 5
    assert list(table.sort_values("label_event")["item_id"]) == [i for i in selection["item_id"] if i in released][:5]
    replay_labels(session, released)
    assert len(session.table()) == sum(i in released for i in selection["item_id"])
    with pytest.raises(LabelError, match="mapping"):
        replay_labels(session, [1, 2])  # type: ignore[arg-type]


def test_estimate_path_is_the_corrected_mean_of_the_first_k_labels(tmp_path: Path) -> None:
    """Invariant: the row for k equals corrected_mean on the judge's rows and the first k labels, weighted by the
    selection's probabilities times k / budget."""
    selection = stats.select_for_labelling(TABLE, judge="gpt", budget=20, strategy="active", seed=3)
    session = LabelSession(TABLE, QUESTION, "sim", tmp_path / "l.sqlite", order=selection)
    replay_labels(session, {f"i{k}": int(HUMAN[k]) for k in range(N)})
    path = estimate_path(session, steps=[10, 20, 30], weights=selection).set_index("n_labels")
    assert list(path.index) == [10, 20]  # 30 is more than were labelled
    first = session.table().sort_values("label_event").iloc[:10]
    gold = make_table(first[["item_id", "judge", "rubric", "criterion", "condition", "score"]])
    scaled = selection.assign(inclusion_probability=selection["inclusion_probability"] / 2)
    expected = stats.corrected_mean(combine([TABLE, gold]), judge="gpt", gold="human:sim", weights=scaled)
    assert path.loc[10, "estimate"] == pytest.approx(expected.loc[expected["metric"] == "mean", "estimate"].iloc[0])
    with pytest.raises(LabelError, match="at least 2"):
        estimate_path(session, steps=[1])
