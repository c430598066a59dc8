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
    np.testing.assert_array_equal(numbers, _judgment_numbers(expected))
    assert not any(t in str(v) for t in TOKENS for v in got.to_numpy().ravel())
    assert any(t in str(v) for t in TOKENS for v in table.to_numpy().ravel())


@pytest.mark.parametrize("limit", [1, 7, 40])
def test_free_text_kept_only_for_listed_judgments(limit: int) -> None:
    """Invariant: with a cap, every column but the free text equals redact(table); the free text equals it on
    the rows of the first ``limit`` judgments (table order) and is missing elsewhere."""
    table = _table(4, 50)
    expected = redact(table)
    got, numbers = _redacted_table(table, max_judgments=limit)
    np.testing.assert_array_equal(numbers, _judgment_numbers(expected))
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


# ------------------------------------------------------------------------------ generated tables vs the previous way
# The reference implementations below are the report's data preparation as it was before issue 28 (a deep copy of
# the table with every cell redacted, the free text masked by the judgment numbers of that copy; the summary's
# judges and conditions as set(column.astype(str)) over every row). They live here, not in the package.

UNICODE = ("jüdge-β", "评审员", "✓ ok", "naïve café")
JUDGE_SECRETS = ("Authorization: Bearer sk-live-abcdefghijklmnop1234",
                 "Authorization: Bearer sk-live-zzzzzzzzzzzzzzzzzz99")  # two names redaction makes one


def _reference_redacted(table: pd.DataFrame, max_judgments: int) -> tuple[pd.DataFrame, np.ndarray]:
    out = table.copy()
    for column in out.columns:
        if column not in _FREE_TEXT:
            out[column] = redact(out[column])
    order: dict[tuple, int] = {}  # judgments numbered in table order, as a dict keyed by their values is
    numbers = np.array([order.setdefault(tuple(r[c] for c in _GROUP), len(order))
                        for r in out[_GROUP].to_dict(orient="records")], dtype=np.int64)
    for column in _FREE_TEXT:
        if column in out.columns:
            out[column] = redact(out[column].where(pd.Series(numbers < max_judgments, index=out.index)))
    return out, numbers


def _reference_summary_line(table: pd.DataFrame, stats: dict | None = None) -> str:
    from judgelab import judgments

    ok = judgments.status_counts(table).get(judgments.OK, 0)
    judges = sorted(set(table["judge"].dropna().astype(str)))
    parts = [f"{table['item_id'].nunique():,} items", f"{len(table):,} judgment rows ({ok:,} ok, "
             f"{len(table) - ok:,} unscored)", f"{len(judges)} judge(s): {', '.join(judges[:6])}"
             + (" …" if len(judges) > 6 else "")]
    conditions = sorted(set(table["condition"].dropna().astype(str)))
    if conditions and conditions != ["original"]:
        parts.append(f"conditions: {', '.join(conditions)}")
    assert not stats  # the tables below carry no run statistics
    return "; ".join(parts)


def _reference_counted_rows(table: pd.DataFrame, scored: bool = True) -> pd.DataFrame:
    from judgelab import judgments

    return judgments.scored(table) if scored else table[~judgments.is_scored(table)]


def _fuzz_table(seed: int, drop: bool = True) -> pd.DataFrame:
    """A generated judgments table: score or pairwise, 1-6 judges (unicode names, two secret-bearing names that
    redact to one, a gold or human rater), 1-4 criteria, 1-3 conditions, repeats with gaps, unscored rows with
    reasons, raw outputs and details with secrets and unicode, and (sometimes, with ``drop``) columns dropped."""
    rng = np.random.default_rng(seed)
    pairwise = bool(rng.random() < 0.4)
    pool = ["j1", "j2", *UNICODE, *JUDGE_SECRETS]
    judges = list(rng.choice(pool, size=int(rng.integers(1, 6)), replace=False))
    if rng.random() < 0.6:
        judges.append(str(rng.choice(["gold", "human"])))
    criteria = ["overall"] if pairwise and rng.random() < 0.5 else \
        list(rng.choice(["overall", "fluency", "relevance", "kohärenz"], size=int(rng.integers(1, 5)), replace=False))
    conditions = list(rng.choice(["original", "swapped", "rubric_v2"], size=int(rng.integers(1, 4)), replace=False))
    rows = []
    for i in range(int(rng.integers(1, 16))):
        item = f"item{i}" if rng.random() > 0.1 else f"item{i} {SECRETS[2]} {UNICODE[i % 4]}"
        for judge in judges:
            for condition in conditions:
                for criterion in criteria:
                    repeat = None if rng.random() < 0.5 else int(rng.integers(0, 2))
                    row = {"item_id": item, "judge": judge, "criterion": criterion, "condition": condition,
                           "rubric": "pairwise" if pairwise else "direct_score", "run_id": "run", "repeat": repeat,
                           "raw_output": str(rng.choice(["plain", UNICODE[0], *SECRETS, "<script>x</script>"])),
                           "detail": {"note": str(rng.choice(["plain", *SECRETS]))} if rng.random() < 0.5 else None,
                           "prompt_hash": f"h{i % 5}" if rng.random() < 0.5 else None,
                           "call_id": f"c{i}-{judge}-{condition}"}
                    if rng.random() < 0.15:
                        row.update(status=str(rng.choice(["parse_error", "api_error", "refusal"])),
                                   unscored_reason=str(rng.choice(["no score found", SECRETS[0], UNICODE[1]])))
                    elif pairwise:
                        row["winner"] = str(rng.choice(["A", "B", "TIE"]))
                    else:
                        row["score"] = float(rng.choice([1, 2, 3, 4, 5, 2.5, 3.67]))
                    rows.append(row)
    table = make_table(rows)
    # keys must be unique: several repeats of None for one judgment collide, keep the first (a real table would)
    table = table.drop_duplicates(["run_id", "item_id", "judge", "criterion", "side", "condition", "repeat"])
    if drop and rng.random() < 0.3:
        table = table.drop(columns=list(rng.choice(["reasoning", "detail", "prompt_hash", "confidence", "turn"],
                                                   size=2, replace=False)))
    return table.reset_index(drop=True)


@pytest.mark.parametrize("seed", range(12))
def test_redacted_table_equals_the_previous_preparation(seed: int) -> None:
    """Invariant: on generated tables (score and pairwise, unscored rows, dropped columns, unicode, secrets in
    judge names, items, raw outputs, details and reasons) and any cap, the fast preparation gives the previous one's
    table (dtypes included) and judgment numbers, leaves the caller's table as it was, and no secret survives."""
    table = _fuzz_table(seed)
    before = table.copy()
    for limit in (1, 3, 10_000):
        expected, expected_numbers = _reference_redacted(table, limit)
        got, numbers = _redacted_table(table, limit)
        pd.testing.assert_frame_equal(got, expected)
        np.testing.assert_array_equal(numbers, expected_numbers)
        assert not any(t in str(v) for t in TOKENS for v in got.to_numpy().ravel())
    pd.testing.assert_frame_equal(table, before)


@pytest.mark.parametrize("seed", range(12))
def test_summary_and_gold_judge_equal_the_row_wise_sets(seed: int) -> None:
    """Invariant: summary_line and gold_judge, reading each column's distinct values, say what the previous
    set(column.astype(str)) over every row said, on generated tables."""
    from judgelab.viz.notebook_views import summary_line
    from judgelab.viz.report_sections import GOLD_JUDGES, gold_judge

    table = _fuzz_table(seed)
    assert summary_line(table) == _reference_summary_line(table)
    present = set(table["judge"].dropna().astype(str))
    assert gold_judge(table) == next((g for g in GOLD_JUDGES if g in present), None)


@pytest.mark.parametrize("seed", [0, 24])  # a score table (3 criteria, 2 conditions); a pairwise one with gold
def test_report_html_equals_the_previous_preparation(seed: int, tmp_path, monkeypatch) -> None:
    """Invariant: the whole report of a generated table (figures, counts, accuracy, the judgments list under a
    small cap) is the same file when the previous preparation (a redacted deep copy, row-wise summary sets, each
    section's row filter of the whole table) stands in for the fast one; neither holds a secret."""
    import judgelab
    from judgelab.viz import report as report_module
    from judgelab.viz import report_sections as sections

    table = _fuzz_table(seed, drop=False)  # judgelab.report refuses a table without the schema's columns
    fast = judgelab.report(table, tmp_path / "fast.html", max_judgments=5).read_text(encoding="utf-8")
    monkeypatch.setattr(report_module, "_redacted_table", _reference_redacted)
    monkeypatch.setattr(report_module, "summary_line", _reference_summary_line)
    for module in (report_module, sections):  # row filters of the whole table, as the sections made them
        monkeypatch.setattr(module, "counted_rows", _reference_counted_rows)
        monkeypatch.setattr(module, "rows_where", lambda frame, keep: frame[keep])
    slow = judgelab.report(table, tmp_path / "slow.html", max_judgments=5).read_text(encoding="utf-8")
    assert fast == slow
    assert not any(t in fast for t in TOKENS)


@pytest.mark.parametrize("dtype", ["category", "object", "string[pyarrow]", "large_string[pyarrow]"])
def test_extra_columns_of_any_text_dtype_are_redacted(dtype: str) -> None:
    """Invariant: an extra column (kept after the schema columns) holding a secret is redacted whatever its
    text dtype (categories, objects, Arrow strings), as redact(table) redacts it; numbers stay as they are."""
    table = _table(5, 12)
    system = [SECRETS[i % 3] if i % 4 == 0 else f"system {i % 2}" for i in range(len(table))]
    if dtype == "large_string[pyarrow]":
        import pyarrow as pa

        table["system"] = pd.Series(system, dtype=pd.ArrowDtype(pa.large_string()))
    else:
        table["system"] = pd.Series(system, dtype=dtype)
    table["tokens"] = np.arange(len(table))
    got, _ = _redacted_table(table, max_judgments=10_000)
    assert not any(t in str(v) for t in TOKENS for v in got["system"])
    assert [str(v) for v in got["system"]] == [str(v) for v in redact(table)["system"]]
    np.testing.assert_array_equal(got["tokens"].to_numpy(), table["tokens"].to_numpy())
