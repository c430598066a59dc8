"""Result tables read like a paper's (``judgelab.show``) without touching the values, and ``plot_estimates`` draws
any tidy result frame: generated frames, and real statistics on released SummEval and LLMBar data."""

from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import judgelab
from judgelab.viz.intervals import PlotInputError, interval_caption, plot_estimates
from judgelab.viz.style import format_number, format_p_value, shorten
from judgelab.viz.tables import Table, TableInputError, show

_finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda x: x == 0 or abs(x) >= 1e-3)


@settings(max_examples=300, deadline=None)
@given(x=_finite)
def test_format_number_keeps_three_significant_digits(x: float) -> None:
    """Invariant: below 1,000 the shown number has exactly 3 significant digits and reads back within half a unit
    of its last digit; from 1,000 up it is the whole number with separators."""
    text = format_number(x)
    value = float(text.replace(",", ""))
    if abs(x) >= 999.5:
        assert re.fullmatch(r"-?\d{1,3}(,\d{3})*", text) and abs(value - x) <= 0.5
    elif x == 0:
        assert text == "0.00"
    else:
        digits = text.lstrip("-").replace(".", "").lstrip("0")
        assert len(digits) == 3, text
        last = 10 ** (math.floor(math.log10(abs(value))) - 2)
        assert abs(value - x) <= last / 2 + 1e-12


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("abc de,f;"), min_size=0, max_size=200), width=st.integers(5, 120))
def test_shorten_never_cuts_a_word(text: str, width: int) -> None:
    """Invariant: a short text is unchanged; a long one is a prefix of whole words (or of the first word when it alone
    is too long, or follows only a leading space) followed by an ellipsis, at most width + 1 characters."""
    out = shorten(text, width)
    if len(text) <= width:
        assert out == text
        return
    assert out.endswith("…") and len(out) <= width + 1
    kept = out[:-1]
    assert text.startswith(kept)
    rest = text[len(kept):]
    if text[: width + 1].rfind(" ") > 0:  # a word boundary within reach (else the first word alone is too long)
        assert rest == "" or not rest[0].isalnum() or not kept or not kept[-1].isalnum()


def test_show_formats_the_view_and_keeps_the_frame() -> None:
    frame = pd.DataFrame({"metric": ["spearman_rho", "mae"], "estimate": [0.443636, 1.23456],
                          "ci_low": [0.377246, 1.1], "ci_high": [0.50717, 1.4], "p_value": [5.0e-59, 0.0321],
                          "n": [1200, 1200], "method": ["Spearman rho; CI: percentile bootstrap 95%, 10,000 resamples, "
                                                        "clustered by document_id (100 clusters; resampling clusters, "
                                                        "then rows within)", "mean |judge - human|"]})
    original = frame.copy()
    table = judgelab.show(frame)
    assert isinstance(table, Table) and table.frame is frame
    pd.testing.assert_frame_equal(frame, original)
    view = table._repr_html_()
    cells = re.findall(r"<td[^>]*>(.*?)</td>", view)
    assert cells[:6] == ["spearman_rho", "0.444", "[0.377, 0.507]", "&lt;0.001", "1,200", cells[5]]
    assert cells[5].endswith("…") and "title='Spearman rho; CI: percentile bootstrap" in view
    assert cells[6:12] == ["mae", "1.23", "[1.10, 1.40]", "0.032", "1,200", "mean |judge - human|"]
    text = repr(table)
    assert "<0.001" in text and "[0.377, 0.507]" in text and "5e-59" not in text
    with pytest.raises(TableInputError, match="does not have"):
        show(frame, ["estimate", "nope"])
    with pytest.raises(TableInputError, match="not list"):
        show([1, 2])  # type: ignore[arg-type]


def test_show_reads_a_wide_tables_p_columns_as_p_values() -> None:
    """A wide table names its p-values ``<metric>_p`` (summeval_study.meta_wide's ``rho_p``): shown as p-values
    in the text and the HTML view, like ``p_value``; other numbers keep three significant digits."""
    frame = pd.DataFrame({"judge": ["x", "y"], "rho": [0.372, -0.114], "rho_p": [5.25e-157, 0.0312],
                          "p_value_holm": [0.5, 2e-5]})
    text = repr(show(frame))
    assert "<0.001" in text and "0.031" in text and "e-157" not in text and "0.500" in text
    cells = re.findall(r"<td[^>]*>(.*?)</td>", show(frame)._repr_html_())
    assert cells == ["x", "0.372", "&lt;0.001", "0.500", "y", "-0.114", "0.031", "&lt;0.001"]


def test_show_keeps_a_labelled_index_as_columns() -> None:
    frame = pd.DataFrame({"estimate": [0.5]}, index=pd.Index(["classical"], name="estimator"))
    assert ">estimator</th>" in show(frame)._repr_html_()
    filtered = pd.DataFrame({"metric": ["a", "b", "c"], "estimate": [1.0, 2.0, 3.0]}).iloc[[0, 2]]
    assert re.findall(r"<th style[^>]*>(.*?)</th>", show(filtered)._repr_html_()) == ["metric", "estimate"]
    pivot = pd.DataFrame({"a": [1.0]}, index=pd.MultiIndex.from_tuples([("x", 1)], names=["case", "n"]))
    assert re.findall(r"<th style[^>]*>(.*?)</th>", show(pivot)._repr_html_()) == ["case", "n", "a"]


@settings(max_examples=25, deadline=None)
@given(n_rows=st.integers(1, 8), metrics=st.lists(st.sampled_from(["mae", "spearman_rho", "kappa_x"]), min_size=1,
                                                  max_size=3, unique=True), nan_rows=st.integers(0, 2),
       seed=st.integers(0, 2**16))
def test_plot_estimates_draws_one_point_per_estimate(n_rows: int, metrics: list[str], nan_rows: int, seed: int) -> None:
    """Invariant: one panel per metric; each panel holds exactly one point per row of that metric with a finite
    estimate; the caption counts the rows without an estimate."""
    rng = np.random.default_rng(seed)
    rows = []
    for metric in metrics:
        for k in range(n_rows):
            est = float(rng.normal())
            rows.append({"judge": f"j{k}", "metric": metric, "estimate": est, "ci_low": est - 0.1,
                         "ci_high": est + 0.1, "method": "percentile bootstrap", "ci_level": 0.95})
    frame = pd.DataFrame(rows)
    frame.loc[frame.index[:nan_rows], "estimate"] = np.nan
    if frame["estimate"].isna().all():
        with pytest.raises(PlotInputError, match="every estimate is NaN"):
            plot_estimates(frame)
        return
    drawn = frame[frame["estimate"].notna()]
    fig = plot_estimates(frame, reference=0)
    try:
        panels = [ax for ax in fig.axes if ax.get_xlabel()]
        order = list(dict.fromkeys(drawn["metric"]))  # panels in the order metrics first appear
        assert len(panels) == len(order)
        for ax, metric in zip(panels, order, strict=True):
            points = sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() == "o")
            assert points == (drawn["metric"] == metric).sum()
        caption = " ".join(t.get_text() for t in fig.texts)
        assert "95% confidence intervals (percentile bootstrap)" in caption
        assert (f"{nan_rows} row" in caption) == (nan_rows > 0)
    finally:
        plt.close(fig)


def test_plot_estimates_on_real_statistics(data_dir: Path) -> None:
    """Spearman rho per criterion on released SummEval judgments, grouped, with the bootstrap method in the caption;
    a correlation-only frame gives plot_meta_forest one panel, not an empty MAE one."""
    from judgelab import stats
    from judgelab.studies import summeval_study
    from judgelab.viz.plots import plot_meta_forest

    study = summeval_study.load_study(data_dir)
    parts = []
    for criterion in ("coherence", "fluency"):
        rows = study.table[study.table["criterion"] == criterion]
        parts.append(stats.spearman("gpt-3.5-turbo-0301", "human", data=rows, cluster="document_id",
                                    n_resamples=200, seed=0).assign(criterion=criterion, judge="gpt-3.5-turbo-0301"))
    rho = pd.concat(parts, ignore_index=True)
    fig = plot_estimates(rho, group="criterion", reference=0, title="rho")
    try:
        caption = " ".join(t.get_text() for t in fig.texts)
        assert "percentile bootstrap 95%, 200 resamples, clustered by document_id" in caption.replace("\n", " ")
        assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["coherence", "fluency"]
    finally:
        plt.close(fig)
    forest = plot_meta_forest(rho)
    try:
        assert [ax.get_xlabel() for ax in forest.axes] == ["Spearman's ρ"]
    finally:
        plt.close(forest)


def test_interval_caption_reads_the_method_and_level() -> None:
    frame = pd.DataFrame({"metric": ["m"], "estimate": [0.5], "ci_low": [0.4], "ci_high": [0.6], "ci_level": [0.9],
                          "method": ["x; CI: exact Clopper-Pearson"]})
    assert interval_caption(frame) == "Points: estimates; bars: 90% confidence intervals (exact Clopper-Pearson)."
    assert format_p_value(0.0321) == "0.032"
