"""What differs between the pandas releases judgelab supports (2.2 and 3.x, pyproject's "pandas>=2.2,<4").

pandas 3 infers the dtype of ``Series.map``'s result from the values: an all-missing ``string`` column mapped
cell by cell came back as ``null[pyarrow]``, which then refuses any string (``fillna`` raised
"Converting strings to null is not implemented" in the HTML report of every rubric with no pairwise winner).
The secret redaction that every report, table and log passes through maps text cells, so it is checked here.
"""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.backends.redaction import MASK, redact

SECRET = "sk-planted-pandas-0123456789"
cells = st.one_of(st.none(), st.sampled_from(["A", "B", "TIE", "", "a sentence", f"key {SECRET} here"]))


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(0, 6))
    columns = {}
    for k in range(draw(st.integers(1, 4))):
        values = draw(st.lists(cells, min_size=n, max_size=n))
        kind = draw(st.sampled_from(["string", "object", "Float64"]))
        if kind == "Float64":
            columns[f"c{k}"] = pd.array([None if v is None else float(len(v)) for v in values], dtype="Float64")
        else:
            columns[f"c{k}"] = pd.Series(values, dtype=kind)
    return pd.DataFrame(columns)


@settings(max_examples=150, deadline=None)
@given(frames())
def test_redact_keeps_every_column_dtype_and_masks_every_text_cell(frame):
    """Generated frames (string / object / Float64 columns, any cell missing, all-missing columns included):
    the redacted copy has the same columns and dtypes, the same missing cells, the secret in no cell, and every
    other cell unchanged; then an all-missing string column still takes a string (the report's fillna)."""
    out = redact(frame, [SECRET])
    assert list(out.columns) == list(frame.columns)
    assert list(out.dtypes) == list(frame.dtypes)
    pd.testing.assert_frame_equal(out.isna(), frame.isna())
    for col in frame.columns:
        for before, after in zip(frame[col], out[col], strict=True):
            if isinstance(before, str):
                assert after == before.replace(SECRET, MASK)
            elif not pd.isna(before):
                assert after == before
        if frame[col].dtype == "string":
            filled = out[col].fillna("TIE")
            assert filled.dtype == frame[col].dtype and filled.notna().all()
