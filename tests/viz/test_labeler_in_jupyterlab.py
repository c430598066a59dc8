"""The Labeler as a person uses it: a notebook in a real JupyterLab (127.0.0.1, no token) in headless Chromium,
labelled by keyboard, the kernel restarted, the labelling resumed where it stopped; two annotators on one store."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgelab.labels import LabelStore
from tests.support.browser import CHROMIUM, LAUNCH_ARGS, browser, not_blank
from tests.support.jupyterlab import jupyterlab

CELLS = [
    "import pandas as pd\nfrom judgelab.viz import Labeler\n"
    "items = pd.DataFrame({'item_id': [f'item{k}' for k in range(12)],\n"
    "                      'response': [f'answer number {k}' for k in range(12)]})\n"
    "QUESTIONS = [{'name': 'quality', 'kind': 'score', 'scale': 5}]",
    "ann = Labeler(items, QUESTIONS, 'ann', 'labels.sqlite')\nann.widget",
    "bob = Labeler(items, QUESTIONS, 'bob', 'labels.sqlite')\nbob.widget",
]
KERNEL_IDLE = ("(() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
               " const k = w && w.sessionContext && w.sessionContext.session"
               " && w.sessionContext.session.kernel; return !!k && k.status === 'idle'; })()")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_label_by_keyboard_restart_the_kernel_and_resume(tmp_path: Path) -> None:
    sync_api = browser("the headless Labeler tests in test_labeler.py still ran")
    pytest.importorskip("jupyterlab", reason="jupyterlab (the notebooks extra) is not installed")
    with jupyterlab(tmp_path, "label.ipynb", CELLS) as port:
        with sync_api.sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                str(tmp_path / "profile"), executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS,
                viewport={"width": 1200, "height": 1400})
            try:
                page = context.new_page()
                requests: list[str] = []
                page.on("request", lambda r: requests.append(r.url))
                page.goto(f"http://127.0.0.1:{port}/lab/tree/label.ipynb")

                def run_all() -> None:
                    page.wait_for_function(KERNEL_IDLE, timeout=180_000)
                    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
                    page.wait_for_function(KERNEL_IDLE, timeout=120_000)

                def output(cell: int):  # noqa: ANN202 - a Playwright locator
                    return page.locator(".jp-Notebook .jp-Cell").nth(cell).locator(".jp-OutputArea")

                def press(cell: int, key: str, expect: str) -> None:
                    output(cell).locator("input[placeholder='type shortcut keys here']").press(key)
                    output(cell).get_by_text(expect).first.wait_for(timeout=30_000)

                run_all()
                output(1).get_by_text("0 of 12 labelled by ann").wait_for(timeout=60_000)
                for k in range(10):  # ten items by keyboard: each digit stores the item and shows the next
                    press(1, str(k % 5 + 1), f"{k + 1} of 12 labelled by ann")
                assert "item10" in output(1).inner_text() and not_blank(output(1).screenshot())
                press(1, "u", "undone: back on item9")
                press(1, "s", "item10")  # skip item9 ...
                press(2, "2", "1 of 12 labelled by bob")  # ... while bob labels his first item on the same store

                page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
                run_all()
                view = output(1)
                view.get_by_text("9 of 12 labelled by ann").wait_for(timeout=60_000)
                assert view.locator("h4").first.inner_text() == "item10"  # resumed after the skipped item9
                press(1, "4", "10 of 12 labelled by ann")
                output(2).get_by_text("1 of 12 labelled by bob").wait_for(timeout=30_000)
                assert all(u.startswith(f"http://127.0.0.1:{port}/") or u.startswith(("data:", "blob:"))
                           for u in requests)
            finally:
                context.close()
    store = LabelStore(tmp_path / "labels.sqlite", read_only=True)
    answers = store.answers().set_index(["annotator", "item_id"])["value_num"]
    expected = {("ann", f"item{k}"): float(k % 5 + 1) for k in range(9)} | {("ann", "item10"): 4.0,
                                                                           ("bob", "item0"): 2.0}
    assert answers.to_dict() == expected
    assert list(store.events("ann")["kind"]).count("retract") == 1
