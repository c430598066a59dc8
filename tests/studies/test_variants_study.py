"""SummEval's released prompt styles as rubric variants (notebook 09 and `judgelab reproduce`'s variants group)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from judgelab.studies import variants_study  # noqa: E402
from judgelab.studies.reproduce import variants_artifacts  # noqa: E402
from judgelab.viz.plots import PlotInputError, plot_rubric_comparison  # noqa: E402


@pytest.fixture(scope="module")
def styles(data_dir: Path) -> variants_study.PromptStyles:
    return variants_study.load_prompt_styles(data_dir)


def test_only_gpt35_was_run_with_several_styles(data_dir: Path):
    per_judge = variants_study.styles_per_judge(data_dir).set_index("judge")
    assert per_judge.loc[variants_study.STYLE_JUDGE, "n_styles"] == 5
    assert (per_judge.drop(index=variants_study.STYLE_JUDGE)["styles"] == "rts").all()


def test_the_styles_are_variants_of_one_judge_on_the_same_items(styles):
    table = styles.table
    judged = table[table["judge"] == variants_study.STYLE_JUDGE]
    assert styles.styles == tuple(variants_study.PROMPT_STYLES)
    counts = judged.groupby("rubric").size()
    assert set(counts.index) == {variants_study.rubric_name(s) for s in styles.styles}
    assert (counts == 1200 * 4).all()  # every style judged every summary on every criterion
    assert (table.loc[table["judge"] == "human"].groupby("criterion").size() == 1200).all()  # human rows once
    assert styles.sources[0]["repo"] == "DAMO-NLP-SG/LLM_summeval"


def test_prompt_style_table_pooled_and_per_criterion(styles):
    table = variants_study.prompt_style_table(styles.table, n_resamples=200, seed=0)
    assert list(dict.fromkeys(table["criterion"])) == ["pooled", "coherence", "consistency", "fluency", "relevance"]
    variants = table[table["part"] == "variant"]
    assert (variants.groupby("criterion")["selected"].sum() == 1).all()
    assert (variants["base"] == "llm_summeval:rts").all() and set(variants["style"]) == set(styles.styles)
    pooled = variants[variants["criterion"] == "pooled"]
    assert (pooled["n"] + pooled["n_selection"] == 4800).all()  # 1,200 summaries x 4 criteria, split by document
    diffs = table[table["part"] == "difference"]
    assert (diffs["correction"] == "holm over 4 tests, alpha=0.05").all()
    assert table.columns[-1] == "note"


def test_plot_rubric_comparison_draws_one_row_per_variant_and_refuses_ambiguous_frames(styles):
    table = variants_study.prompt_style_table(styles.table, n_resamples=100, seed=0)
    pooled = table[table["criterion"] == "pooled"]
    ax = plot_rubric_comparison(pooled, caption_text="test")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "llm_summeval:rts (base)" and all("p_adj=" in label for label in labels[1:])
    plt.close(ax.figure)
    ax = plot_rubric_comparison(table[table["criterion"] != "pooled"], group="criterion")
    assert len(ax.get_yticklabels()) == 5
    plt.close(ax.figure)
    with pytest.raises(PlotInputError, match="pass group="):
        plot_rubric_comparison(table)
    with pytest.raises(PlotInputError, match="selected"):
        plot_rubric_comparison(pooled.drop(columns="selected"))


@pytest.mark.slow
def test_reproduce_group_writes_the_table_and_two_figures(data_dir: Path):
    from judgelab.studies.reproduce import Settings

    artifacts = variants_artifacts(Settings(str(data_dir), 200, 0))
    names = [a.name for a in artifacts]
    assert names == ["variants_prompt_styles", "variants_prompt_styles_fig", "variants_prompt_styles_by_criterion"]
    assert all(a.notebook == "09_rubric_variants" for a in artifacts)
    assert isinstance(artifacts[0].table, pd.DataFrame) and artifacts[1].figure is not None
    json.dumps([a.sources for a in artifacts])  # sidecar-ready
    for a in artifacts:
        if a.figure is not None:
            plt.close(a.figure)
