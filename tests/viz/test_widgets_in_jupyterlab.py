"""The widgets as a user sees them: a notebook opened in a real JupyterLab (on 127.0.0.1, no token) in headless
Chromium, every cell run, the rendered outputs checked in the page and screenshotted.

Released data: OpenQA (reference-gold items with several accepted answers, yes/no verdicts), SummEval (1-5 scores,
references kept as a JSON list, 50-character item ids), LLMBar (pairwise winners); the rubric explorer; and figures
drawn after them (judgelab's and a plain ``plt.plot``), each shown once as an image."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.viz.widgets import natural_key
from tests.support.browser import CHROMIUM, LAUNCH_ARGS, browser, not_blank
from tests.support.jupyterlab import jupyterlab

CELLS = [
    "import os\nfrom judgelab.datasets import llmbar, openqa, summeval\n"
    "from judgelab.viz.widgets import DisagreementBrowser, RubricExplorer\nDATA = os.environ['JUDGELAB_DATA_DIR']",
    "qa = openqa('gpt-4', data_dir=DATA)\nDisagreementBrowser(qa.table, qa.items).widget",
    "se = summeval('gpt-3.5-turbo-0301', data_dir=DATA)\nDisagreementBrowser(se.table, se.items).widget",
    "bar = llmbar('LLMBar/Natural', 'GPT-4', 'Vanilla_NoRules', data_dir=DATA)\n"
    "DisagreementBrowser(bar.table, bar.items).widget",
    "RubricExplorer().widget",
]
# figures as a reader makes them after the widgets: a judgelab Axes plot, a returned Figure, a plain plt.plot
FIGURE_CELLS = [
    "import matplotlib.pyplot as plt\nimport pandas as pd\nfrom judgelab.viz import plots\n"
    "rows = pd.DataFrame({'judge': ['a', 'b'], 'criterion': ['c', 'c'], 'metric': ['mean_difference'] * 2,\n"
    "                     'estimate': [0.1, -0.2], 'ci_low': [0.0, -0.4], 'ci_high': [0.2, 0.0]})\n"
    "plots.plot_positive_bias_forest(rows);",
    "plots.plot_estimates(rows, reference=0)",
    "plt.plot([0, 1], [1, 0]);",
]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_widgets_render_in_jupyterlab_in_headless_chromium(data_dir: Path, tmp_path: Path) -> None:
    sync_api = browser("the widget-state tests in test_widgets.py still ran")
    pytest.importorskip("jupyterlab", reason="jupyterlab (the notebooks extra) is not installed")
    # the kernel's own backend, matplotlib-inline, as a reader's JupyterLab has it: MPLBACKEND unset
    with jupyterlab(tmp_path, "widgets.ipynb", CELLS + FIGURE_CELLS, env={"JUDGELAB_DATA_DIR": str(data_dir)},
                    unset=["MPLBACKEND"]) as port:
        with sync_api.sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS,
                viewport={"width": 1400, "height": 1600})
            try:
                requests: list[str] = []
                page = context.new_page()
                page.on("request", lambda r: requests.append(r.url))
                page.goto(f"http://127.0.0.1:{port}/lab/tree/widgets.ipynb")
                kernel_idle = ("(() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                               " const k = w && w.sessionContext && w.sessionContext.session"
                               " && w.sessionContext.session.kernel; return !!k && k.status === 'idle'; })()")
                page.wait_for_function(kernel_idle, timeout=180_000)
                page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
                page.wait_for_function(  # every code cell has run: read from the notebook's model
                    "(() => { const m = window.jupyterapp.shell.currentWidget.content.model.cells; let n = 0;"
                    " for (let i = 0; i < m.length; i++) { if (m.get(i).executionCount) n++; }"
                    f" return n === {len(CELLS + FIGURE_CELLS)}; }})()", timeout=300_000)
                page.wait_for_function(kernel_idle, timeout=120_000)
                outputs = [page.locator(".jp-Notebook .jp-Cell").nth(i).locator(".jp-OutputArea")
                           for i in range(len(CELLS))]
                for out in outputs[1:]:  # the widgets drew themselves (not "Loading widget..." or an error)
                    out.scroll_into_view_if_needed()
                    out.locator(".widget-vbox, .jupyter-widgets").first.wait_for(timeout=60_000)
                    assert "Error" not in out.inner_text()[:2000] and not_blank(out.screenshot())

                # OpenQA: every accepted answer one per line under gold_answers; no |Δ| slider for yes/no verdicts
                openqa_view = outputs[1].inner_text()
                assert "gold_answers (gold / reference)" in openqa_view and "\n• " in openqa_view
                assert not outputs[1].locator(".widget-slider").first.is_visible()
                # SummEval: 1-5 scores show the |Δ| slider; references as lines, not a JSON list; item ids in
                # natural order and not cut by the list's width
                summeval_view = outputs[2].inner_text()
                assert outputs[2].locator(".widget-slider").first.is_visible()
                assert "references (gold / reference)" in summeval_view and '["' not in summeval_view
                select = outputs[2].locator("select[multiple], .widget-select select").first
                ids = select.locator("option").all_inner_texts()
                assert len(ids) > 100 and ids[:50] == sorted(ids[:50], key=natural_key)
                assert select.evaluate("e => e.scrollWidth <= e.clientWidth")
                # LLMBar: pairwise winners, no |Δ| slider; both outputs side by side
                assert not outputs[3].locator(".widget-slider").first.is_visible()
                assert "output_1" in outputs[3].inner_text() and "output_2" in outputs[3].inner_text()
                # RubricExplorer: the whole prompt, in a box that scrolls instead of being cut
                explorer = outputs[4].inner_text()
                assert "## Criteria" in explorer and "more characters)" not in explorer
                boxes = [b.evaluate("e => [e.scrollHeight, e.clientHeight, getComputedStyle(e).overflowY]")
                         for b in outputs[4].locator("pre").all()]
                assert any(full > shown and overflow == "auto" for full, shown, overflow in boxes), boxes
                # every figure shows, once, as an image (no "<Axes ...>" line), the reader's own plot included
                for k in range(len(CELLS), len(CELLS) + len(FIGURE_CELLS)):
                    area = page.locator(".jp-Notebook .jp-Cell").nth(k).locator(".jp-OutputArea")
                    area.scroll_into_view_if_needed()
                    assert area.locator("img").count() == 1, (k, area.inner_text()[:300])
                    assert "<Axes" not in area.inner_text() and not_blank(area.locator("img").screenshot())
                assert all(u.startswith(f"http://127.0.0.1:{port}/") or u.startswith(("data:", "blob:"))
                           for u in requests), sorted({u.split("?")[0] for u in requests})[:20]
            finally:
                context.close()
