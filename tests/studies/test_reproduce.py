"""`judgelab reproduce` writes every figure (PNG, PDF, sidecar) and table (CSV), non-empty, with provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from judgelab.studies.reproduce import GROUPS, reproduce

REPO = Path(__file__).resolve().parents[2]
FIGURES = ("summeval_meta_forest", "summeval_meta_by_criterion", "summeval_mae_vs_rho", "summeval_metric_vs_size",
           "paper_vs_summeval", "paper_metric_vs_size", "summeval_score_distributions_fig", "summeval_positive_bias_fig",
           "summeval_model_agreement_fig", "quickstart_coherence", "llmbar_accuracy_fig", "llmbar_length_fig",
           "openqa_agreement_fig", "openqa_errors_fig", "variants_prompt_styles_fig",
           "variants_prompt_styles_by_criterion", "corrected_coverage_fig", "corrected_one_draw_summeval",
           "corrected_one_draw_openqa", "corrected_one_draw_llmbar", "corrected_label_budget_summeval",
           "corrected_label_budget_openqa", "corrected_cascade_fig", "ranking_leaderboard_experts",
           "ranking_leaderboard_experts_battles", "ranking_by_judge", "ranking_win_rates_relevance_fig",
           "latent_reliability_fig")


@pytest.fixture(scope="module")
def outputs(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("figures")
    return out, reproduce(out, data_dir, n_resamples=200, seed=0)


@pytest.mark.slow
def test_every_output_exists_and_is_non_empty(outputs: tuple[Path, list[Path]]) -> None:
    out, paths = outputs
    assert paths and all(p.exists() and p.stat().st_size > 0 for p in paths)
    pngs = sorted(out.glob("*.png"))
    assert {p.stem for p in pngs} == set(FIGURES)
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
        assert png.with_suffix(".json").exists()
    index = (out / "README.md").read_text()
    assert all(f"`{png.stem}.png`" in index for png in pngs)


@pytest.mark.slow
def test_sidecars_name_the_data_commit_the_command_and_existing_tables(outputs: tuple[Path, list[Path]]) -> None:
    out, _ = outputs
    notebooks = {p.stem for p in (REPO / "notebooks").glob("*.ipynb")}
    for png in out.glob("*.png"):
        side = json.loads(png.with_suffix(".json").read_text())
        assert side["files"] == [png.name, png.with_suffix(".pdf").name]
        assert side["command"].startswith("judgelab reproduce --out")
        assert side["parameters"]["seed"] == 0 and side["parameters"]["n_resamples"] == 200
        assert side["data_sources"] and all(s["repo"] and s["commit"] for s in side["data_sources"])
        assert side["notebooks"] and all(Path(nb).stem in notebooks for nb in side["notebooks"])
        for table in side["tables"]:
            assert (out / table).exists(), f"{png.name} names a missing table {table}"


@pytest.mark.slow
def test_tables_hold_tidy_estimates_with_intervals(outputs: tuple[Path, list[Path]]) -> None:
    out, _ = outputs
    meta = pd.read_csv(out / "summeval_meta.csv")
    assert set(meta["judge"]) == {"gpt-3.5-turbo-0301", "llama-2-7b-chat-hf", "llama-2-13b-chat-hf", "llama-2-70b-chat-hf"}
    assert (meta["ci_low"] <= meta["estimate"]).all() and (meta["estimate"] <= meta["ci_high"]).all()
    assert set(meta["criterion"]) == {"all", "coherence", "consistency", "fluency", "relevance"}
    accuracy = pd.read_csv(out / "llmbar_accuracy.csv")
    assert {"Natural", "Neighbor", "GPTInst", "GPTOut", "Manual"} == set(accuracy["split"])
    agreement = pd.read_csv(out / "openqa_agreement.csv")
    assert len(agreement) == 8


@pytest.mark.slow
def test_rerun_is_identical(outputs: tuple[Path, list[Path]], data_dir: Path, tmp_path: Path) -> None:
    out, _ = outputs
    again = reproduce(tmp_path, data_dir, n_resamples=200, seed=0, groups=("openqa",))
    for path in again:
        if path.suffix == ".csv":
            assert path.read_bytes() == (out / path.name).read_bytes(), f"{path.name} differs between runs"
        elif path.suffix == ".json":  # identical except the --out folder named in the command
            first, second = json.loads((out / path.name).read_text()), json.loads(path.read_text())
            assert first.pop("command").replace(str(out), "X") == second.pop("command").replace(str(tmp_path), "X")
            assert first == second


def test_one_group_regenerated_keeps_the_other_groups_rows_in_the_index(
        outputs: tuple[Path, list[Path]], data_dir: Path, tmp_path: Path) -> None:
    out, _ = outputs
    full_index = (out / "README.md").read_text(encoding="utf-8")
    stale = [line + " stale" if line.startswith("| `openqa_") else line for line in full_index.splitlines()]
    (tmp_path / "README.md").write_text("\n".join(stale) + "\n", encoding="utf-8")
    reproduce(tmp_path, data_dir, n_resamples=200, seed=0, groups=("openqa",))
    index = (tmp_path / "README.md").read_text(encoding="utf-8")
    # every row of the full index is there, in the same order; openqa's rows rewritten, not duplicated
    table = [line for line in index.splitlines() if line.startswith("| `")]
    assert table == [line for line in full_index.splitlines() if line.startswith("| `")]
    assert "stale" not in index and index.count("`openqa_agreement.csv`") == 1
    alone = tmp_path / "alone"
    reproduce(alone, data_dir, n_resamples=200, seed=0, groups=("openqa",))  # no index yet: this group only
    rows = [line for line in (alone / "README.md").read_text(encoding="utf-8").splitlines() if line.startswith("| `")]
    assert rows and all("openqa" in row.split(" | ")[0] for row in rows)


def test_unknown_group_and_too_few_resamples_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown reproduce group"):
        reproduce(tmp_path, groups=("nope",))
    with pytest.raises(ValueError, match="at least 100"):
        reproduce(tmp_path, n_resamples=10)
    assert set(GROUPS) == {"summeval", "llmbar", "openqa", "variants", "corrected", "ranking", "latent"}


def test_cli_reproduce_prints_one_json_line(data_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from judgelab.cli import app

    result = CliRunner().invoke(app, ["reproduce", "--out", str(tmp_path), "--data-dir", str(data_dir),
                                      "--group", "openqa", "--n-resamples", "100"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary == {"out": str(tmp_path), "figures": 2, "tables": 2, "files": 9}
    bad = CliRunner().invoke(app, ["reproduce", "--out", str(tmp_path), "--group", "nope"])
    assert bad.exit_code == 2 and "unknown reproduce group" in bad.stderr
