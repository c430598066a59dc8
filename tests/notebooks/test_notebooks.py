"""Every notebook runs top to bottom (nbclient) against the real data and the embedded judge, within a timeout.

The notebooks' live cells call the embedded SmolLM2 judge, so the execution tests are marked
``local_model``; the check that notebooks are committed without outputs needs nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
EXPECTED = ["00_quickstart", "01_editorial_summary", "02_chess_commentary", "03_unified_judge",
            "04_reference_gold", "05_position_and_length_bias", "06_sycophancy_and_positive_bias",
            "07_bring_your_own_data", "08_how_good_is_my_system", "09_rubric_variants"]
PER_NOTEBOOK_TIMEOUT_S = 300  # a cell; the whole notebook set is budgeted at 10 minutes on 2 cores


def test_every_curated_notebook_is_present() -> None:
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    book = nbformat.read(path, as_version=4)
    nbformat.validate(book)
    for k, cell in enumerate(book.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name} cell {k} has outputs; strip them before committing"
            assert cell.execution_count is None, f"{path.name} cell {k} has an execution count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_uses_the_embedded_judge_only_with_a_warning(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if "LOCAL" in text and "judgelab.run(" in text or "probes." in text:
        assert "NOT a meaningful" in text, f"{path.name} runs the embedded judge without saying it is a plumbing judge"


@pytest.mark.local_model
@pytest.mark.slow
@pytest.mark.timeout(PER_NOTEBOOK_TIMEOUT_S * 3)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes(path: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nbclient import NotebookClient

    monkeypatch.setenv("JUDGELAB_DATA_DIR", str(data_dir))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("JUDGELAB_CACHE", str(tmp_path / "requests.sqlite"))  # cold cache: CI-like timing
    book = nbformat.read(path, as_version=4)
    client = NotebookClient(book, timeout=PER_NOTEBOOK_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError naming the failing cell
    print(f"{path.stem}: {time.perf_counter() - start:.1f} s")
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    shown = sum(1 for c in book.cells if c.cell_type == "code" for o in c.outputs
                if o.output_type in ("display_data", "execute_result", "stream"))
    assert shown >= 3, f"{path.name} showed only {shown} outputs"
