"""The seed paper's study figures draw what the paper's Table 1 and the SummEval redo say."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from judgelab.studies import figures, paper_table1  # noqa: E402


def test_mae_vs_rho_and_size_plot_the_paper_table() -> None:
    paper = paper_table1().rename(columns={"spearman_rho": "rho", "p_value": "rho_p", "model": "judge"})
    ax = figures.plot_mae_vs_rho(paper)
    labels = {t.get_text() for t in ax.texts}
    assert "GPT o4 mini" in labels and len(labels) == 24
    size = figures.plot_metric_vs_size(paper)
    assert "not shown (size unpublished): GPT 4o" in size.get_suptitle()  # sizes never published: named, not placed


def test_side_by_side_uses_one_colour_per_family_across_panels() -> None:
    paper = paper_table1()
    ours = pd.DataFrame({"judge": ["x"], "family": ["GPT"], "size_b": [np.nan], "mae": [1.0], "mae_ci_low": [0.9],
                         "mae_ci_high": [1.1], "rho": [0.2], "rho_ci_low": [0.1], "rho_ci_high": [0.3],
                         "rho_p": [0.001], "n": [50]})
    fig = figures.plot_paper_side_by_side(paper, ours)
    assert len(fig.axes) == 2 and "n = 250" in fig.axes[0].get_title() and "n = 50" in fig.axes[1].get_title()
