"""Every figure shows, once: judgelab's style never changes the session's backend or interactive mode, so a plot
drawn after judgelab's figures (its own or a reader's plain ``plt.plot``) still shows in a notebook.

The kernel test runs a small notebook on the inline backend (nbclient, as JupyterLab runs it) and counts, per cell,
the figures made (a kernel-side hook) against the images shown. No model is called."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judgelab.viz.style import SESSION_RC_KEYS, use_style
from tests.notebooks.nbrun import problems_in_output, run_notebook

REPO = Path(__file__).resolve().parents[2]

_SAFE_RC = {"font.size": st.floats(6, 20), "lines.linewidth": st.floats(0.5, 4), "axes.grid": st.booleans(),
            "legend.frameon": st.booleans(), "figure.dpi": st.integers(50, 200)}


@settings(max_examples=30, deadline=None)
@given(overrides=st.fixed_dictionaries({}, optional=_SAFE_RC), interactive_inside=st.booleans())
def test_use_style_restores_every_rc_but_the_sessions_own(overrides: dict, interactive_inside: bool) -> None:
    """Invariant: after the block every rc parameter equals its value before, except the session's own
    (backend, interactive), which keep what the block set (as the inline backend does when it comes on)."""
    before_interactive = matplotlib.is_interactive()
    before = {k: v for k, v in dict(matplotlib.rcParams.copy()).items() if k not in SESSION_RC_KEYS}
    try:
        with use_style(**overrides):
            for key, value in overrides.items():
                assert matplotlib.rcParams[key] == value
            matplotlib.interactive(interactive_inside)
        assert matplotlib.is_interactive() is interactive_inside
        after = {k: v for k, v in dict(matplotlib.rcParams.copy()).items() if k not in SESSION_RC_KEYS}
        assert after == before
    finally:
        matplotlib.interactive(before_interactive)


CELLS = [
    "import pandas as pd\nimport matplotlib.pyplot as plt\nfrom judgelab.viz import plots\n"
    "rows = pd.DataFrame({'judge': ['a', 'b', 'a', 'b'], 'criterion': ['c1', 'c1', 'c2', 'c2'],\n"
    "                     'metric': ['mean_difference'] * 4, 'estimate': [0.1, -0.2, 0.3, 0.0],\n"
    "                     'ci_low': [0.0, -0.4, 0.1, -0.1], 'ci_high': [0.2, 0.0, 0.5, 0.1]})",
    "plots.plot_positive_bias_forest(rows);",  # an Axes plot, first figure of the session (the inline backend comes on)
    "plots.plot_estimates(rows, group='criterion', reference=0)",  # a Figure returned as the cell's value
    "plt.plot([0, 1], [1, 0]);",  # a reader's own plot after judgelab's
    "plots.plot_positive_bias_forest(rows);\nplots.plot_estimates(rows)",  # two figures in one cell
    "fig, ax = plt.subplots()\nax.plot([1, 2], [2, 1])\nax.set_title('mine');",
]
SHOWN = [0, 1, 1, 1, 2, 1]


@pytest.mark.timeout(300)
def test_every_figure_shows_once_in_a_kernel(tmp_path: Path) -> None:
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    path = tmp_path / "figures.ipynb"
    nbformat.write(book, path)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    report = run_notebook(path, timeout=240, env=env)
    assert [c.shown for c in report.cells] == SHOWN
    assert [c.made for c in report.cells] == SHOWN
    assert all(not problems_in_output(c) for c in report.cells), [problems_in_output(c) for c in report.cells]


def test_problems_in_output_finds_what_a_reader_should_not_see() -> None:
    from tests.notebooks.nbrun import CellReport

    def cell(*outputs: dict) -> CellReport:
        return CellReport(0, "x", 0, 0, list(outputs))

    assert problems_in_output(cell({"output_type": "execute_result",
                                    "data": {"text/plain": "<Axes: title={'center': 't'}>"}}))
    assert problems_in_output(cell({"output_type": "execute_result",
                                    "data": {"text/plain": "<foo.Bar object at 0x7f3a2c>"}}))
    assert problems_in_output(cell({"output_type": "stream", "name": "stderr", "text": "UserWarning: x\n"}))
    assert problems_in_output(cell({"output_type": "error", "ename": "ValueError", "evalue": "bad"}))
    assert not problems_in_output(cell({"output_type": "stream", "name": "stdout", "text": "rho 0.44 [0.38, 0.51]\n"},
                                       {"output_type": "execute_result",
                                        "data": {"text/html": "<table/>", "text/plain": "a table"}}))
