"""End to end on real released judge data (../shared/data through the ``data_dir`` fixture and judgelab.datasets).

OpenQA-eval publishes: annotator 1 vs 2 Cohen's kappa .735; GPT-4 vs human 84.8% agreement, kappa .695.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from judgelab import stats as js
from judgelab.datasets import openqa, summeval


@pytest.fixture(scope="module")
def openqa_gpt4(data_dir: Path):  # type: ignore[no-untyped-def]
    return openqa("gpt-4", data_dir=data_dir).table


def test_openqa_annotator_kappa_reproduces_published_735(openqa_gpt4) -> None:  # type: ignore[no-untyped-def]
    out = js.cohen_kappa("human:annotator1", "human:annotator2", data=openqa_gpt4, value="verdict",
                         n_resamples=300).iloc[0]
    assert round(out["estimate"], 3) == 0.735
    assert out["ci_low"] < 0.735 < out["ci_high"] and out["p_value"] < 1e-10


def test_openqa_gpt4_agreement_and_kappa_reproduce_published_numbers(openqa_gpt4) -> None:  # type: ignore[no-untyped-def]
    agreement = js.percent_agreement("gpt-4", "human", data=openqa_gpt4, value="verdict", n_resamples=300).iloc[0]
    kappa = js.cohen_kappa("gpt-4", "human", data=openqa_gpt4, value="verdict", n_resamples=300).iloc[0]
    # the 10 GPT-4 replies without a leading yes/no are unscored here and excluded (and reported)
    assert agreement["n_unscored_excluded"] == kappa["n_unscored_excluded"] == 10
    assert agreement["estimate"] == pytest.approx(0.848, abs=0.001)
    assert kappa["estimate"] == pytest.approx(0.695, abs=0.002)


@pytest.fixture(scope="module")
def summeval_gpt35(data_dir: Path):  # type: ignore[no-untyped-def]
    return summeval("gpt-3.5-turbo-0301", data_dir=data_dir).table


def test_summeval_meta_evaluation_levels(summeval_gpt35) -> None:  # type: ignore[no-untyped-def]
    coherence = summeval_gpt35[summeval_gpt35["criterion"] == "coherence"]
    out = js.meta_evaluation("gpt-3.5-turbo-0301", "human", data=coherence, group="document_id", system="system",
                             item="document_id", n_resamples=300).set_index("level")
    wide = js.pair_judges(coherence, ["gpt-3.5-turbo-0301", "human"]).dropna(subset=["gpt-3.5-turbo-0301", "human"])
    pooled = stats.spearmanr(wide["gpt-3.5-turbo-0301"], wide["human"]).statistic
    assert out.loc["pooled", "estimate"] == pytest.approx(pooled)
    assert out.loc["group", "n_groups_used"] + out.loc["group", "n_groups_skipped"] == 100
    assert out.loc["system", "n"] == 12 and out.loc["system_pairs", "n"] == 66
    assert np.isfinite(out["estimate"]).all() and (out["ci_low"] <= out["estimate"]).all()
    assert "clustered by document_id (100 clusters" in out.loc["pooled", "method"]


def test_summeval_bias_per_criterion(summeval_gpt35) -> None:  # type: ignore[no-untyped-def]
    out = js.positive_bias("gpt-3.5-turbo-0301", "human", data=summeval_gpt35, criterion="criterion",
                           cluster="document_id", n_resamples=200)
    means = out[out["metric"] == "mean_difference"].set_index("criterion")
    assert set(means.index) == {"coherence", "consistency", "fluency", "relevance"}
    wide = js.pair_judges(summeval_gpt35, ["gpt-3.5-turbo-0301", "human"], criterion="fluency")
    diff = (wide["gpt-3.5-turbo-0301"] - wide["human"]).dropna()
    assert means.loc["fluency", "estimate"] == pytest.approx(diff.mean()) and means.loc["fluency", "n"] == len(diff)
