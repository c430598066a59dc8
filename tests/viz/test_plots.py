"""Each figure function draws what its tidy input says (small hand-made frames; no statistics computed here)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from judgelab.viz import plots  # noqa: E402
from judgelab.viz.style import FAMILY_COLORS, PALETTE, ROLE_COLORS, family_colors, use_style  # noqa: E402


def _meta() -> pd.DataFrame:
    rows = []
    for judge, mae, rho in (("a", 1.2, 0.3), ("b", 0.9, -0.1)):
        rows.append({"judge": judge, "family": "F", "size_b": 7.0, "criterion": "all", "metric": "mae",
                     "estimate": mae, "ci_low": mae - 0.1, "ci_high": mae + 0.1, "p_value": np.nan, "n": 100})
        rows.append({"judge": judge, "family": "F", "size_b": 7.0, "criterion": "all", "metric": "spearman_rho",
                     "estimate": rho, "ci_low": rho - 0.05, "ci_high": rho + 0.05, "p_value": 0.01, "n": 100})
    return pd.DataFrame(rows)


def test_meta_forest_draws_each_estimate_at_its_value() -> None:
    fig = plots.plot_meta_forest(_meta(), caption_text="a caption")
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    mae_ax = fig.axes[0]
    xs = sorted(float(x) for line in mae_ax.lines for x in np.atleast_1d(line.get_xdata()))
    assert np.allclose(sorted(set(np.round(xs, 6)) & {0.9, 1.2}), [0.9, 1.2])
    assert [t.get_text() for t in mae_ax.get_yticklabels()] == ["a", "b"]
    assert any("a caption" in t.get_text() for t in fig.texts)


def test_agreement_heatmap_is_symmetric_with_band_labels() -> None:
    agreement = pd.DataFrame({"judge_a": ["a", "a", "b"], "judge_b": ["b", "c", "c"], "estimate": [0.8, 0.2, 0.55],
                              "label": ["High", "Negligible", "Medium"]})
    ax = plots.plot_agreement_heatmap(agreement)
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("0.80\nHigh") == 2 and texts.count("—") == 3


def test_error_breakdown_stacks_to_one() -> None:
    counts = pd.DataFrame({"judge": ["j", "j", "j"], "outcome": ["agree", "unscored",
                                                                   "false accept (judge yes, human no)"],
                           "share": [0.7, 0.1, 0.2], "count": [7, 1, 2], "n": [10, 10, 10]})
    ax = plots.plot_error_breakdown(counts)
    widths = [p.get_width() for p in ax.patches]
    assert np.isclose(sum(widths), 1.0)


def test_one_panel_plots_draw_into_a_given_axes_and_return_it() -> None:
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2)
    counts = pd.DataFrame({"judge": ["j", "j"], "outcome": ["agree", "unscored"], "share": [0.9, 0.1],
                           "count": [9, 1], "n": [10, 10]})
    assert plots.plot_error_breakdown(counts, ax=right) is right
    dist = pd.DataFrame({"rater": ["judge", "human experts"] * 2, "score": [1, 1, 2, 2], "share": [0.5, 0.4, 0.5, 0.6]})
    assert plots.plot_score_shares(dist, ax=left, title="t") is left
    assert left.figure is fig and len(fig.axes) == 2
    plt.close(fig)


def test_style_is_scoped_and_roles_keep_their_colours() -> None:
    before = matplotlib.rcParams["axes.spines.top"]
    with use_style():
        assert matplotlib.rcParams["axes.spines.top"] is False
    assert matplotlib.rcParams["axes.spines.top"] == before
    colors = family_colors(["human", "GPT", "Llama 2", "Vanilla", "CoT"])
    assert colors["human"] == ROLE_COLORS["human"]
    assert colors["GPT"] == FAMILY_COLORS["GPT"] and colors["Llama 2"] == FAMILY_COLORS["Llama 2"]
    assert colors["Vanilla"] != colors["CoT"] and colors["Vanilla"] in PALETTE
    assert family_colors(["Llama 2"]) == {"Llama 2": FAMILY_COLORS["Llama 2"]}  # the same in every figure
