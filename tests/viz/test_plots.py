"""Each figure function draws what its tidy input says (small hand-made frames; no statistics computed here)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import re  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from judgelab.studies import figures  # noqa: E402
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


# ------------------------------------------------------------------------------------------ input contracts

# every plot: (function, the columns its docstring promises it needs, extra keyword arguments)
CONTRACTS = [
    (plots.plot_meta_forest, ("judge", "metric", "estimate", "ci_low", "ci_high"), {}),
    (plots.plot_score_distributions, ("judge", "criterion", "rater", "score", "share"), {}),
    (plots.plot_positive_bias_forest, ("judge", "criterion", "metric", "estimate", "ci_low", "ci_high"), {}),
    (plots.plot_agreement_heatmap, ("judge_a", "judge_b", "estimate", "label"), {}),
    (plots.plot_pairwise_accuracy_grid, ("metric", "estimate", "ci_low", "ci_high", "split", "judge", "strategy"),
     {"y": "split", "row": "judge", "hue": "strategy"}),
    (plots.plot_length_effect, ("metric", "estimate", "ci_low", "ci_high", "judge", "strategy"),
     {"by": ("judge", "strategy")}),
    (plots.plot_agreement_forest, ("metric", "estimate", "ci_low", "ci_high", "pair"), {}),
    (plots.plot_error_breakdown, ("judge", "outcome", "share"), {}),
    (plots.plot_score_shares, ("score", "share", "rater"), {}),
    (figures.plot_mae_vs_rho, ("family", "mae", "rho", "judge"), {}),
    (figures.plot_metric_vs_size, ("family", "size_b", "mae", "rho", "judge"), {}),
]


@pytest.mark.parametrize(("plot", "columns", "kwargs"), CONTRACTS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_missing_column_is_one_error_naming_every_missing_column(plot, columns, kwargs) -> None:
    with pytest.raises(plots.PlotInputError) as caught:
        plot(pd.DataFrame({"unrelated": [1]}), **kwargs)
    message = str(caught.value)
    named = re.search(r"needs columns \[(.*?)\]", message)
    assert named and plot.__name__ in message
    assert sorted(c.strip(" '") for c in named.group(1).split(",")) == sorted(set(columns))
    for column in columns:  # the docstring states the contract
        assert f"``{column}``" in plot.__doc__ or f'"{column}"' in plot.__doc__, (plot.__name__, column)


def test_agreement_forest_without_a_pair_column_names_it_not_a_key_error() -> None:
    frame = pd.DataFrame({"metric": ["cohen_kappa"], "estimate": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    with pytest.raises(plots.PlotInputError, match=r"needs columns \['pair'\]"):
        plots.plot_agreement_forest(frame)
    fig = plots.plot_agreement_forest(frame.assign(comparison="gpt-4 vs gold"), pair="comparison")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["gpt-4 vs gold"]
    with pytest.raises(plots.PlotInputError, match="no 'percent_agreement' or 'cohen_kappa' rows"):
        plots.plot_agreement_forest(frame.assign(metric="mae", pair="x"))


def _pairwise_result() -> pd.DataFrame:
    rows = []
    for judge, base in (("a", 0.8), ("b", 0.6)):
        for metric in ("accuracy_mean", "position_consistency"):
            rows.append({"run_id": "r", "judge": judge, "metric": metric, "estimate": base, "ci_low": base - 0.1,
                         "ci_high": base + 0.1})
    return pd.DataFrame(rows)


def test_pairwise_grid_draws_any_pairwise_accuracy_frame_with_a_generic_title() -> None:
    fig = plots.plot_pairwise_accuracy_grid(_pairwise_result())
    assert fig.get_suptitle() == "Pairwise accuracy and position consistency" and len(fig.axes) == 2
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["a", "b"]
    llmbar = pd.concat([_pairwise_result().assign(split=s, strategy=st) for s in ("Natural", "Neighbor")
                        for st in ("Vanilla", "CoT")], ignore_index=True)
    with pytest.raises(plots.PlotInputError, match="several rows share"):
        plots.plot_pairwise_accuracy_grid(llmbar, y="judge")
    grid = plots.plot_pairwise_accuracy_grid(llmbar, row="judge", y="split", hue="strategy", title="LLMBar")
    assert grid.get_suptitle() == "LLMBar" and len(grid.axes) == 4  # 2 judges x 2 metrics
    with pytest.warns(FutureWarning, match="row='judge', y='split', hue='strategy'"):
        implicit = plots.plot_pairwise_accuracy_grid(llmbar)  # 0.1's implicit LLMBar layout, for one release
    assert len(implicit.axes) == 4


def test_length_effect_labels_rows_by_the_given_columns() -> None:
    frame = pd.DataFrame({"judge": ["a", "a"], "strategy": ["x", "y"], "metric": ["length_coefficient"] * 2,
                          "estimate": [0.1, 0.3], "ci_low": [0.0, 0.2], "ci_high": [0.2, 0.4]})
    ax = plots.plot_length_effect(frame, by=("judge", "strategy"))
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a · x", "a · y"]
    with pytest.raises(plots.PlotInputError, match="several rows share the label 'a'"):
        plots.plot_length_effect(frame, by=("judge",))


def test_error_breakdown_draws_an_unknown_outcome_instead_of_failing() -> None:
    counts = pd.DataFrame({"judge": ["j", "j", "j"], "outcome": ["agree", "abstained", "unscored"],
                           "share": [0.6, 0.3, 0.1]})
    ax = plots.plot_error_breakdown(counts, unit="answers")
    assert ax.get_xlabel() == "share of answers"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["agree", "unscored", "abstained"]
