"""Loaders say what they expect and what they looked for; what they list, they load; several judges load as one table."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from judgelab import judgments, stats
from judgelab.datasets import (
    DataNotFoundError,
    llmbar,
    llmbar_kappa,
    openqa,
    summeval,
    summeval_combinations,
)
from judgelab.errors import ConfigError, JudgelabError


@pytest.mark.parametrize(("loader", "layout"), [
    (llmbar, ["<data_dir>/LLMBar/Dataset/<split>/dataset.json",
              "<data_dir>/LLMBar/Dataset/<split>/evaluators/<judge>/<strategy>/result.json"]),
    (summeval, ["<data_dir>/LLM_summeval/model_output_annotations/<system>_outputs_annotations.jsonl",
                "<data_dir>/LLM_summeval/eval_model_generations/<judge>/eval_<system>_generations/"
                "<criterion>_<method>.txt"]),
    (openqa, [f"<data_dir>/OpenQA-eval/data/NQ301_{name}.tsv" for name in ("human", "BEM", "gpt-4",
                                                                          "text-davinci-003")]),
])
def test_help_shows_the_data_dir_layout(loader: object, layout: list[str]) -> None:
    doc = loader.__doc__ or ""
    for line in layout:
        assert line in doc, f"{loader.__name__}'s help() does not show {line}"


def test_wrong_paths_name_what_was_looked_for(tmp_path: Path, data_dir: Path) -> None:
    """An empty source folder, a data_dir one level too deep, a folder that is not there: each error says which path
    it looked for (never an empty 'available:' list)."""
    for folder in ("LLMBar", "LLM_summeval", "OpenQA-eval"):
        (tmp_path / folder).mkdir()
    with pytest.raises(DataNotFoundError, match=r"no LLMBar split in .*LLMBar: looked for Dataset/<split>/dataset"):
        llmbar("Natural", "GPT-4", "Vanilla", data_dir=tmp_path)
    with pytest.raises(DataNotFoundError, match=r"no LLM_summeval judge outputs in .*looked for eval_model_generations"):
        summeval("gpt-3.5-turbo-0301", data_dir=tmp_path)
    with pytest.raises(DataNotFoundError, match=r"data/NQ301_human\.tsv is missing from the local data folder"):
        openqa("gpt-4", data_dir=tmp_path)
    with pytest.raises(DataNotFoundError, match=r"has no LLMBar/ subfolder \(it holds Dataset.*pass its parent"):
        llmbar("Natural", "GPT-4", "Vanilla", data_dir=data_dir / "LLMBar")
    with pytest.raises(DataNotFoundError, match=r"does not exist; it should hold the source folders side by side"):
        openqa("gpt-4", data_dir=tmp_path / "nowhere")
    (tmp_path / "LLMBar" / "Dataset" / "LLMBar" / "Natural").mkdir(parents=True)
    (tmp_path / "LLMBar" / "Dataset" / "LLMBar" / "Natural" / "dataset.json").write_text("[]")
    with pytest.raises(DataNotFoundError, match=r"looked for Dataset/LLMBar/Natural/evaluators/GPT-4/Vanilla/result"
                                                r"\.json .*no Dataset/LLMBar/Natural/evaluators/ folder"):
        llmbar("LLMBar/Natural", "GPT-4", "Vanilla", data_dir=tmp_path)


def test_option_mistakes_are_config_errors(data_dir: Path) -> None:
    for call, fragment in [
        (lambda: summeval("gpt-3.5-turbo-0301", "h2h", data_dir=data_dir), "unknown LLM_summeval method"),
        (lambda: summeval("gpt-3.5-turbo-0301", criteria=("clarity",), data_dir=data_dir), "unknown SummEval criteria"),
        (lambda: summeval("gpt-3.5-turbo-0301", duplicates="first", data_dir=data_dir), "duplicates must be"),
        (lambda: llmbar("Natural", "GPT-4", "Vanilla", data_dir=data_dir, rating_winner="mean"), "rating_winner"),
        (lambda: llmbar("Natural", [], "Vanilla", data_dir=data_dir), "list of names"),
    ]:
        with pytest.raises(ConfigError, match=fragment):
            call()


def _link_summeval(tmp_path: Path, data_dir: Path) -> Path:
    """A local LLM_summeval copy (symlinks into the real one) with a complete judge, a judge that released one
    criterion for every system (and another for three), and a judge whose only method has no parser."""
    real = data_dir / "LLM_summeval"
    root = tmp_path / "LLM_summeval"
    (root / "eval_model_generations").mkdir(parents=True)
    os.symlink(real / "model_output_annotations", root / "model_output_annotations")
    os.symlink(real / "eval_model_generations" / "llama-2-7b-chat-hf", root / "eval_model_generations" / "complete")
    source = real / "eval_model_generations" / "llama-2-13b-chat-hf"
    for folder in sorted(source.iterdir()):
        for judge, files in (("partial", ["coherence_rts.txt"] + (["fluency_rts.txt"] if "M8_" in folder.name
                                                                     or "M9_" in folder.name else [])),
                             ("unparsed", ["coherence_h2h.txt"])):
            target = root / "eval_model_generations" / judge / folder.name
            target.mkdir(parents=True, exist_ok=True)
            for name in files:
                os.symlink(folder / name.replace("h2h", "rts"), target / name)
    return tmp_path


def test_every_listed_summeval_combination_loads(tmp_path: Path, data_dir: Path) -> None:
    """summeval_combinations lists only what summeval() loads with its defaults: a method without a parser is not
    listed, and a judge with one complete criterion is listed with that criterion (and loads it)."""
    base = _link_summeval(tmp_path, data_dir)
    combos = summeval_combinations(base)
    assert [tuple(r) for r in combos[["judge", "method", "n_files"]].itertuples(index=False)] == [
        ("complete", "rts", 48), ("partial", "rts", 12)]
    assert combos.set_index("judge").loc["partial", "criteria"] == ("coherence",)
    for judge, method, criteria in zip(combos["judge"], combos["method"], combos["criteria"], strict=True):
        result = summeval(judge, method, data_dir=base, human=False)
        assert set(result.table["criterion"]) == set(criteria) and len(result.table) == 1200 * len(criteria)
    with pytest.raises(DataNotFoundError, match=r"no complete 'rts' outputs of partial for criteria \['fluency'\]"):
        summeval("partial", criteria=("fluency",), data_dir=base, human=False)


def test_two_llmbar_judges_load_as_one_table_and_compare(data_dir: Path) -> None:
    """judge=[...] is the combine of the separate loads (gold once), and the paired both-orders comparison runs on
    it; each judge's accuracy equals its pairwise_accuracy from its own load."""
    both = llmbar("Natural", ["GPT-4", "ChatGPT"], "Vanilla", data_dir=data_dir)
    one, other = (llmbar("Natural", j, "Vanilla", data_dir=data_dir) for j in ("GPT-4", "ChatGPT"))
    assert both.table.equals(judgments.combine([one.table, other.table]))
    assert both.table.groupby("judge").size().to_dict() == {"ChatGPT": 200, "GPT-4": 200, "gold": 100}
    assert both.items.equals(one.items) and both.notes["judge"] == ["GPT-4", "ChatGPT"]
    result = stats.compare_pairwise_judges(both.table, "GPT-4", "ChatGPT", policy="tie", n_resamples=500)
    result = result.set_index("part")
    for part, load in (("a", one), ("b", other)):
        alone = stats.pairwise_accuracy(load.table, policy="tie").set_index("metric")
        assert result.loc[part, "estimate"] == pytest.approx(alone.loc["accuracy_mean", "estimate"], abs=1e-12)
    with pytest.raises(ConfigError, match="describe one judge"):
        llmbar_kappa(both)


def test_summeval_and_openqa_judges_share_one_copy_of_the_human_rows(data_dir: Path) -> None:
    both = summeval(["llama-2-7b-chat", "llama-2-13b-chat"], data_dir=data_dir, criteria=("coherence",))
    counts = both.table.groupby("judge").size().to_dict()
    assert counts["human"] == 1200 and counts["llama-2-7b-chat-hf"] == counts["llama-2-13b-chat-hf"] == 1200
    assert both.notes["judge"] == ["llama-2-7b-chat-hf", "llama-2-13b-chat-hf"]
    qa = openqa(["gpt-4", "BEM"], data_dir=data_dir)
    assert qa.table.groupby("judge").size()["human"] == 1490 and set(qa.table["judge"]) >= {"gpt-4", "BEM"}


def test_every_loader_error_is_a_judgelab_error(tmp_path: Path) -> None:
    for call in (lambda: llmbar("Natural", "GPT-4", "Vanilla", data_dir=tmp_path),
                 lambda: summeval("x", data_dir=tmp_path), lambda: openqa("gpt-4", data_dir=tmp_path),
                 lambda: openqa("claude", data_dir=tmp_path)):
        with pytest.raises(JudgelabError):
            call()
