"""The transcription of the seed paper's Table 1: every value as printed, checked against the seed text."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from judgelab.studies import paper_table1

SEED_NAME = "004_98e8420543dc4412.txt"


def test_table_has_the_24_judges_with_their_families_and_sizes() -> None:
    table = paper_table1()
    assert len(table) == 24 and table["model"].is_unique
    assert table["family"].value_counts().to_dict() == {"Qwen 3": 5, "GPT": 7, "deepseek": 4, "Gemma 3": 3,
                                                       "Llama 3": 3, "Phi 4": 2}
    assert table.loc[table["family"] == "GPT", "size_b"].isna().all()  # sizes never published
    assert table.loc[table["family"] != "GPT", "size_b"].notna().all()
    assert table["mae"].between(1.0, 2.0).all() and table["spearman_rho"].between(-1, 1).all()
    row = table.set_index("model").loc["Gemma 3 4B"]
    assert (row["mae"], row["spearman_rho"], row["p_value"], row["size_b"]) == (1.38, -0.179, 0.005, 4.0)
    assert (table["n"] == 250).all()


def test_every_value_matches_the_seed_text(data_dir: Path) -> None:
    seed = data_dir.parent / "seeds" / SEED_NAME
    if not seed.exists():
        pytest.skip(f"seed text not available at {seed}")
    text = seed.read_text(encoding="utf-8")
    block = text[text.index("Model\tMAE"):text.index("**Table 1.**")].strip().splitlines()[1:]
    lines = [line.split("\t") for line in block if line.strip()]
    table = paper_table1()
    assert len(lines) == len(table)
    for (name, mae, rho, p), row in zip(lines, table.itertuples(), strict=True):
        assert name == (row.printed_as or row.model)
        assert np.isclose(float(mae), row.mae) and np.isclose(float(rho), row.spearman_rho)
        assert np.isclose(float(p), row.p_value)
