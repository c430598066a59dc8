"""plot_confusion_matrix draws what stats.confusion_matrix says: shares and counts per cell, gold rows down."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from judgelab.stats import confusion_matrix  # noqa: E402
from judgelab.viz import plots  # noqa: E402


def test_cells_show_row_share_and_count_in_gold_order() -> None:
    """Each annotation is the cell's row share and count; a gold class with no rows shows counts only."""
    gold = ["A", "A", "A", "B", "B"]
    judge = ["A", "A", "B", "B", "TIE"]
    cm = confusion_matrix(judge, gold, labels=["A", "B", "TIE"])
    fig, ax = plt.subplots()
    out = plots.plot_confusion_matrix(cm, ax=ax, caption_text="5 items")
    assert out is ax and isinstance(out, Axes)
    texts = [t.get_text() for t in ax.texts]
    assert texts[:3] == ["0.67\n(2)", "0.33\n(1)", "0.00\n(0)"]
    assert texts[3:6] == ["0.00\n(0)", "0.50\n(1)", "0.50\n(1)"]
    assert texts[6:9] == ["0", "0", "0"]  # gold never says TIE: no shares to show
    assert [t.get_text() for t in ax.get_yticklabels()] == ["A", "B", "TIE"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A", "B", "TIE"]
    mesh = ax.collections[0].get_array()
    assert np.allclose(np.asarray(mesh).ravel()[:6], [2 / 3, 1 / 3, 0, 0, 0.5, 0.5])
    plt.close(fig)


def test_missing_columns_raise_one_plot_error() -> None:
    cm = confusion_matrix(["A"], ["A"])
    with pytest.raises(plots.PlotInputError, match="row_share"):
        plots.plot_confusion_matrix(cm.drop(columns="row_share"))
    with pytest.raises(plots.PlotInputError, match="'row_share' or 'count'"):
        plots.plot_confusion_matrix(cm, value="share")
