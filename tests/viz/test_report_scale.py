"""The report's data preparation at scale (issue 28) against the per-cell path it replaces.

Seeded generated tables with secrets planted in text cells (a bearer token, a URL with a password, an
api_key= query) across every text column; each test states its invariant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgelab.backends.redaction import redact
from judgelab.judgments import make_table
from judgelab.viz.report import _FREE_TEXT, _GROUP, _judgment_numbers, _redacted_table

SECRETS = ("Authorization: Bearer sk-live-abcdefghijklmnop1234", "see https://bob:hunter2pass@example.org/x",
           "GET /v1?api_key=AKIAQWERTYUIOPASDF12 ok")
TOKENS = ("sk-live-abcdefghijklmnop1234", "hunter2pass", "AKIAQWERTYUIOPASDF12")  # what redaction must mask


def _table(seed: int, n_items: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_items):
        for judge in ("j1", "j2", SECRETS[1] if i % 7 == 0 else "j3"):
            for condition in ("original", "swapped"):
                secret = rng.random() < 0.2
                rows.append({
                    "item_id": f"item{i}" if rng.random() > 0.05 else f"item{i} {SECRETS[2]}", "judge": judge,
                    "criterion": "overall", "condition": condition, "rubric": "r", "run_id": "run",
                    "repeat": None if i % 3 else int(rng.integers(0, 2)),
                    "winner": str(rng.choice(["A", "B", "TIE"])),
                    "raw_output": f"answer {rng.integers(0, 5)} " + (SECRETS[0] if secret else ""),
                    "detail": {"note": SECRETS[int(rng.integers(0, 3))] if secret else "plain"},
                    "unscored_reason": None,
                })
    return make_table(rows)


@pytest.mark.parametrize("seed", range(3))
def test_redacted_table_equals_cellwise_redaction(seed: int) -> None:
    """Invariant: redacting each distinct value once gives the same table as redact(table) cell by cell, when the
    list can show every judgment (max_judgments above their number)."""
    table = _table(seed, 60)
    expected = redact(table)
    got, numbers = _redacted_table(table, max_judgments=10_000)
    pd.testing.assert_frame_equal(got, expected)
    assert not any(t in str(v) for t in TOKENS for v in got.to_numpy().ravel())
    assert any(t in str(v) for t in TOKENS for v in table.to_numpy().ravel())


@pytest.mark.parametrize("limit", [1, 7, 40])
def test_free_text_kept_only_for_listed_judgments(limit: int) -> None:
    """Invariant: with a cap, every column but the free text equals redact(table); the free text equals it on
    the rows of the first ``limit`` judgments (table order) and is missing elsewhere."""
    table = _table(4, 50)
    expected = redact(table)
    got, numbers = _redacted_table(table, max_judgments=limit)
    others = [c for c in table.columns if c not in _FREE_TEXT]
    pd.testing.assert_frame_equal(got[others], expected[others])
    # the first `limit` judgments as the previous code found them: a dict of the group values in row order
    order: dict[tuple, int] = {}
    for record in expected[_GROUP].to_dict(orient="records"):
        order.setdefault(tuple(record[c] for c in _GROUP), len(order))
    listed = np.array([order[tuple(r[c] for c in _GROUP)] < limit
                       for r in expected[_GROUP].to_dict(orient="records")])
    np.testing.assert_array_equal(_judgment_numbers(expected) < limit, listed)
    for column in _FREE_TEXT:
        pd.testing.assert_series_equal(got.loc[listed, column], expected.loc[listed, column])
        assert got.loc[~listed, column].isna().all()


@pytest.mark.parametrize("seed", range(3))
def test_score_labels_format_each_distinct_score_once(seed: int) -> None:
    """Invariant: the bar labels of unbinned scores equal formatting every cell (Series.map(format_number)),
    values, index, name and dtype, for scores with missing values, tiny and large numbers, and an empty column."""
    from judgelab.viz.report_sections import score_labels
    from judgelab.viz.style import format_number

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    scores = pd.Series(rng.choice([1, 2, 2.5, 3, np.nan, 4.25, 5, 1e-9, 123456.5], size=n), name="score",
                       index=rng.permutation(n))
    pd.testing.assert_series_equal(score_labels(scores, None), scores.astype(float).map(format_number))
