"""Every recipe of docs/reproducing_studies.md, run exactly as written, gives the published number.

The recipes are the ```python blocks after a ``<!-- recipe: NAME -->`` line; each is compiled from the
markdown and executed (so the page cannot drift from the code), its lines counted (not blank, not only a
comment, imports included; at most 10, each at most 110 characters), and the names it defines checked:

- on the released data (JUDGELAB_DATA_DIR): LLMBar's statistics.json counts for every folder the recipe's
  split holds (and, marked slow, the same recipe on every other released split), the SummEval Spearman
  printed in figures/summeval_meta.csv (plus Kendall against scipy on the table's own pairs), OpenQA-eval's
  published kappa and agreement;
- on synthetic releases written by tests/studies/released_formats.py in each publisher's format from a
  seeded generator: the recipe's numbers equal the ones computed independently (scipy, scikit-learn, plain
  numpy) from the values the generator drew, for several seeds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from judgelab.datasets import llmbar_published_statistics
from tests.datasets.test_llmbar import RELEASED
from tests.studies import released_formats as formats

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "reproducing_studies.md"
MAX_LINES = 10
MAX_WIDTH = 110
_RECIPE = re.compile(r"<!-- recipe: (?P<name>[\w-]+) -->\s*\n```python\n(?P<code>.*?)\n```", re.S)


def recipes() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    found = {m.group("name"): m.group("code") for m in _RECIPE.finditer(text)}
    assert len(found) == text.count("<!-- recipe:"), "a recipe marker is not followed by a python block"
    return found


def code_lines(code: str) -> list[str]:
    return [line for line in code.splitlines() if line.strip() and not line.strip().startswith("#")]


def run(name: str, **given: Any) -> dict[str, Any]:
    """The recipe executed as written, in a namespace holding only ``given`` (the synthetic ``folder``)."""
    namespace: dict[str, Any] = {"__name__": f"recipe_{name}", **given}
    exec(compile(recipes()[name], f"{DOC.name}:{name}", "exec"), namespace)  # noqa: S102 -- the doc's own code
    return namespace


# ----------------------------------------------------------------------------------------------- the doc

EXPECTED = {"llmbar", "summeval", "openqa", "geval", "three-class", "mt-bench", "judgebench", "chosen-rejected"}


def test_every_recipe_is_short_and_uses_no_parser_of_its_own() -> None:
    """Each block: at most 10 counted lines of at most 110 characters, no ``def`` / ``class`` (a hand-written
    parser or metric), no regular expression, no scipy/sklearn/numpy computing the number."""
    found = recipes()
    assert set(found) == EXPECTED
    for name, code in found.items():
        lines = code_lines(code)
        assert len(lines) <= MAX_LINES, f"{name}: {len(lines)} lines"
        assert all(len(line) <= MAX_WIDTH for line in code.splitlines()), name
        assert not re.search(r"^\s*(def|class)\s|\bimport re\b|\bscipy\b|\bsklearn\b|\bnumpy\b|\bre\.\w+\(", code,
                             re.M), name


def test_the_line_counts_in_the_summary_tables_are_the_recipes() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = {"llmbar": "LLMBar, LLMEval", "summeval": "SummEval, gpt-3.5", "openqa": "OpenQA-eval NQ301",
            "geval": "G-Eval on a dialogue set", "three-class": "three-class pairwise test set",
            "mt-bench": "MT-Bench human judgments", "judgebench": "JudgeBench outputs",
            "chosen-rejected": "chosen/rejected with a vote"}
    for name, start in rows.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| {start}"))
        assert row.rstrip(" |").rsplit("|", 1)[1].strip() == str(len(code_lines(recipes()[name]))), name


# ------------------------------------------------------------------------------------------ released data

def _check_llmbar(accuracy: pd.DataFrame, split: str, data_dir: Path) -> int:
    """Every (judge, strategy) row against its folder's statistics.json; returns the folders checked."""
    rows = accuracy.set_index(["judge", "strategy", "metric"])
    folders = sorted({(j, s) for j, s, _ in rows.index})
    fields = {"correct_False": "accuracy_original", "correct_True": "accuracy_swapped",
              "correct_both": "correct_both", "equal": "position_consistency"}
    for judge, strategy in folders:
        published = llmbar_published_statistics(split, judge, strategy, data_dir=data_dir)
        for field, metric in fields.items():
            row = rows.loc[(judge, strategy, metric)]
            assert (row["n_correct"], row["n"]) == (published[f"{field}_count"], published[f"{field}_n"]), \
                (split, judge, strategy, field)
        mean = rows.loc[(judge, strategy, "accuracy_mean"), "estimate"]
        assert mean * 100 == pytest.approx(published["correct_average_percent"], abs=1e-9)
    return len(folders)


def test_llmbar_recipe_gives_every_statistics_json_of_its_split(data_dir: Path) -> None:
    got = run("llmbar")
    assert _check_llmbar(got["accuracy"], "Processed/LLMEval^2", data_dir) == 4
    table = got["table"]
    assert int((table["status"] == "missing").sum()) == 38  # the unreadable verdicts, counted as ties


SPLITS = sorted({split for split, _, _ in RELEASED} - {"Processed/LLMEval^2"})


@pytest.mark.slow
@pytest.mark.parametrize("split", SPLITS)
def test_llmbar_recipe_on_every_other_split(data_dir: Path, split: str) -> None:
    """The same block with only the split's path changed reproduces every released folder of the split."""
    code = recipes()["llmbar"]
    assert code.count('"/LLMBar/Dataset/Processed/LLMEval^2"') == 1
    namespace: dict[str, Any] = {}
    exec(compile(code.replace("Processed/LLMEval^2", split), f"llmbar:{split}", "exec"), namespace)  # noqa: S102
    assert _check_llmbar(namespace["accuracy"], split, data_dir) == sum(s == split for s, _, _ in RELEASED)


def _figures_rho() -> dict[str, float]:
    meta = pd.read_csv(REPO / "figures" / "summeval_meta.csv")
    rows = meta[(meta["judge"] == "gpt-3.5-turbo-0301") & (meta["metric"] == "spearman_rho")
                & (meta["criterion"] != "all")]
    return dict(zip(rows["criterion"], rows["estimate"], strict=True))


def test_summeval_recipe_gives_the_published_spearman(data_dir: Path) -> None:
    got = run("summeval")
    rho = got["rho"].set_index("criterion")
    published = _figures_rho()
    assert set(published) == set(rho.index) == {"coherence", "consistency", "fluency", "relevance"}
    for criterion, value in published.items():
        assert float(f"{rho.loc[criterion, 'estimate']:.6g}") == value, criterion  # the digits the CSV prints
        assert rho.loc[criterion, "n"] == 1200
    table = got["table"]
    assert (table["status"] == "ok").all() and len(table) == 2 * 4800
    # Kendall on the same table, against scipy on the table's own pairs
    from judgelab import stats  # noqa: PLC0415 -- after the recipe, as a reader would go on
    tau = stats.kendall("gpt-3.5", "human", data=table, by="criterion").set_index("criterion")
    wide = table.pivot_table(index=["item_id", "criterion"], columns="judge", values="score").reset_index()
    for criterion, part in wide.groupby("criterion"):
        expected = sps.kendalltau(part["gpt-3.5"], part["human"])[0]
        assert tau.loc[criterion, "estimate"] == pytest.approx(expected, abs=1e-12)


def test_openqa_recipe_gives_the_published_agreement_and_kappas(data_dir: Path) -> None:
    got = run("openqa")
    annotators, agreement, kappa = (got[k].iloc[0] for k in ("annotators", "agreement", "kappa"))
    assert round(annotators["estimate"], 3) == 0.735
    assert round(agreement["estimate"] * 100, 1) == 84.8 and agreement["n"] == 1490
    assert math.floor(kappa["estimate"] * 1000) / 1000 == 0.695  # the paper truncates to three digits
    assert kappa["estimate"] == pytest.approx(0.695983, abs=5e-7)
    assert annotators["estimate"] == pytest.approx(0.734719, abs=5e-7) and annotators["n"] == 1483
    counted = got["table"]["unscored_reason"].fillna("").str.startswith("counted as 'No'")
    assert int(counted.sum()) == 10


# ------------------------------------------------------------------------------------- synthetic releases

SEEDS = [0, 1, 2]


def _release(tmp_path: Path, write: Callable[[Path, int], Any], seed: int) -> tuple[Path, Any]:
    folder = tmp_path / f"release-{seed}"
    folder.mkdir()
    return folder, write(folder, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_geval_recipe_equals_scipy_on_the_generated_samples(tmp_path: Path, seed: int) -> None:
    """Invariant: mean of the 20 answers (unreadable = 0) per response, then turn-level Spearman and Kendall
    per criterion, equals scipy on the values the generator wrote into the answers."""
    folder, expected = _release(tmp_path, formats.write_geval, seed)
    got = run("geval", folder=str(folder))
    rho, tau = got["rho"].set_index("criterion"), got["tau"].set_index("criterion")
    for criterion, numbers in expected.items():
        assert rho.loc[criterion, "estimate"] == pytest.approx(numbers["spearman"], abs=1e-12), criterion
        assert tau.loc[criterion, "estimate"] == pytest.approx(numbers["kendall"], abs=1e-12), criterion
        assert rho.loc[criterion, "n"] == numbers["n"]
    judge_rows = got["table"][got["table"]["judge"] == "gpt-4"]
    assert len(judge_rows) == formats.N_SAMPLES * sum(n["n"] for n in expected.values())


@pytest.mark.parametrize("seed", SEEDS)
def test_three_class_recipe_equals_scikit_learn(tmp_path: Path, seed: int) -> None:
    """Invariant: accuracy and macro precision/recall/F1 of the judge (unreadable = tie) against the annotators'
    plurality (a three-way split = tie) equal scikit-learn's on the labels the generator drew."""
    folder, expected = _release(tmp_path, formats.write_three_class, seed)
    got = run("three-class", folder=str(folder))
    report = got["report"].set_index("metric")
    for metric, key in (("accuracy", "accuracy"), ("precision_macro", "precision"), ("recall_macro", "recall"),
                        ("f1_macro", "f1")):
        assert report.loc[metric, "estimate"] == pytest.approx(expected[key], abs=1e-12), metric
        assert report.loc[metric, "n"] == expected["n"]
    assert int(got["confusion"]["count"].sum()) == expected["n"]


@pytest.mark.parametrize("seed", SEEDS)
def test_mt_bench_recipe_equals_the_counted_votes(tmp_path: Path, seed: int) -> None:
    """Invariant: per turn, with and without ties, agreeing / total pairs of (GPT-4 vote, expert vote) equal a
    plain count over the generator's votes (pairs ordered by name, ties of both kinds agreeing, authors out)."""
    folder, expected = _release(tmp_path, formats.write_mt_bench, seed)
    got = run("mt-bench", folder=str(folder))
    rows = got["agreement"]
    for (turn, mode), (agree, total) in expected.items():
        policy = "ties included" if mode == "with tie" else "ties excluded"
        row = rows[(rows["criterion"] == str(turn)) & (rows["policy"] == policy)].iloc[0]
        assert (row["n"], row["estimate"]) == (total, pytest.approx(agree / total, abs=1e-12)), (turn, mode)


@pytest.mark.parametrize("seed", SEEDS)
def test_judgebench_recipe_equals_its_vote_sum(tmp_path: Path, seed: int) -> None:
    """Invariant: accuracy_net equals JudgeBench's rule (+1 / -1 / 0 per order, correct when the sum is
    positive, every pair in the denominator) counted on the generator's decisions; the first order alone too."""
    folder, expected = _release(tmp_path, formats.write_judgebench, seed)
    got = run("judgebench", folder=str(folder))
    accuracy = got["accuracy"].set_index("metric")
    assert accuracy.loc["accuracy_net", "estimate"] == pytest.approx(expected["accuracy_net"], abs=1e-12)
    assert accuracy.loc["accuracy_net", "n"] == expected["n"]


@pytest.mark.parametrize("seed", SEEDS)
def test_chosen_rejected_recipe_equals_numpy(tmp_path: Path, seed: int) -> None:
    """Invariant: with votes coded +1/-1/0 per order, accuracy per order and position consistency (policy
    'tie') equal numpy's count on the generator's votes."""
    folder, expected = _release(tmp_path, formats.write_chosen_rejected, seed)
    got = run("chosen-rejected", folder=str(folder))
    accuracy = got["accuracy"].set_index("metric")
    for metric in ("accuracy_original", "accuracy_swapped", "position_consistency"):
        assert accuracy.loc[metric, "estimate"] == pytest.approx(expected[metric], abs=1e-12), metric
        assert accuracy.loc[metric, "n"] == expected["n"]
    assert np.isfinite(accuracy.loc["accuracy_mean", "estimate"])
