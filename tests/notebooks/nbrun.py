"""Run a notebook as JupyterLab does (nbclient, the inline matplotlib backend) and measure what a reader sees.

A kernel-side hook counts the matplotlib figures each cell *made* through pyplot (``plt.figure``, which
``plt.subplots`` and seaborn's grids call; open or closed afterwards) -- the figures meant to be seen; a figure a
report draws for its file is built off pyplot and is not counted; the notebook's outputs give the figures each cell *shows* (``image/png``
outputs). A last, hidden cell counts the embedded judge's live rows left in the notebook's namespace
(judgments tables, and probe results' ``.table``) and how many of them are scored. Neither hidden cell is
kept in the returned notebook, so cell numbers are the notebook's own.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

__all__ = ["CellReport", "NotebookReport", "problems_in_output", "run_notebook"]

_MARK = "JUDGELAB-NB-REPORT:"

# Counts Figure constructions per executed cell, keyed by IPython's execution count; prints nothing.
_SETUP = """
def _judgelab_nb_hook():
    import matplotlib.pyplot
    from IPython import get_ipython
    made = {"n": 0}
    per_cell = {}
    original = matplotlib.pyplot.figure
    def counting_figure(*args, **kwargs):
        made["n"] += 1
        return original(*args, **kwargs)
    matplotlib.pyplot.figure = counting_figure
    def after_cell(result):
        per_cell[result.execution_count] = made["n"]
        made["n"] = 0
    get_ipython().events.register("post_run_cell", after_cell)
    return per_cell
_judgelab_nb_figures = _judgelab_nb_hook()
del _judgelab_nb_hook
"""

# The embedded judge's rows still in the namespace: judgments tables (and probe results' tables).
_REPORT = """
def _judgelab_nb_report():
    import json
    import pandas as pd
    seen, live = set(), []
    for name, value in list(globals().items()):
        frame = getattr(value, "table", value)
        if not isinstance(frame, pd.DataFrame) or id(frame) in seen or not {"judge", "status"} <= set(frame.columns):
            continue
        rows = frame[frame["judge"].astype(str).str.contains("smollm2")]
        if len(rows):
            seen.add(id(frame))
            live.append({"name": name, "rows": len(rows), "scored": int((rows["status"] == "ok").sum()),
                         "statuses": rows["status"].astype(str).value_counts().to_dict()})
    print("MARK" + json.dumps({"figures": {str(k): v for k, v in _judgelab_nb_figures.items()}, "live": live}))
_judgelab_nb_report()
""".replace("MARK", _MARK)


@dataclass
class CellReport:
    index: int
    source: str
    made: int  # figures the cell constructed
    shown: int  # image outputs the cell displays
    outputs: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class NotebookReport:
    name: str
    seconds: float
    cells: list[CellReport]
    live: list[dict[str, Any]]
    book: Any

    @property
    def made(self) -> int:
        return sum(c.made for c in self.cells)

    @property
    def shown(self) -> int:
        return sum(c.shown for c in self.cells)

    @property
    def live_rows(self) -> int:
        return sum(t["rows"] for t in self.live)

    @property
    def live_scored(self) -> int:
        return sum(t["scored"] for t in self.live)


def _images(outputs: list[Any]) -> int:
    return sum(1 for o in outputs if o.get("output_type") in ("display_data", "execute_result")
               and "image/png" in o.get("data", {}))


def run_notebook(path: Path, *, timeout: int = 300, extra_cells: list[str] | None = None,
                 env: dict[str, str] | None = None) -> NotebookReport:
    """Execute ``path`` (plus ``extra_cells`` appended) on the inline backend and report per cell."""
    from nbclient import NotebookClient

    book = nbformat.read(path, as_version=4)
    for source in extra_cells or []:
        book.cells.append(nbformat.v4.new_code_cell(source))
    n_own = len(book.cells)
    book.cells.insert(0, nbformat.v4.new_code_cell(_SETUP))
    book.cells.append(nbformat.v4.new_code_cell(_REPORT))
    # the kernel's own environment (not this process's, so notebooks can run in threads side by side);
    # without MPLBACKEND the kernel picks matplotlib-inline, as in JupyterLab
    kernel_env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"} | dict(env or {})
    client = NotebookClient(book, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    client.execute(env=kernel_env)
    seconds = time.perf_counter() - start
    report_cell = book.cells.pop()
    book.cells.pop(0)
    text = "".join(o.get("text", "") for o in report_cell.outputs if o.get("output_type") == "stream")
    payload = json.loads(text.split(_MARK, 1)[1].strip().splitlines()[0])
    figures = {int(k): v for k, v in payload["figures"].items()}
    cells = []
    for index, cell in enumerate(book.cells[:n_own]):
        if cell.cell_type != "code":
            continue
        cells.append(CellReport(index, cell.source, figures.get(cell.execution_count, 0), _images(cell.outputs),
                                list(cell.outputs)))
    return NotebookReport(path.stem, seconds, cells, payload["live"], book)


_ADDRESS_REPR = re.compile(r"<[^<>\n]* (object )?at 0x[0-9a-fA-F]+>")
_AXES_REPR = re.compile(r"<(Axes|AxesSubplot|Figure|matplotlib\.[\w.]+)[^<>\n]*>")


def problems_in_output(cell: CellReport) -> list[str]:
    """What a reader should never see in a cell's output: a traceback, a warning, an object's address, an
    ``<Axes ...>`` or ``<Figure ...>`` line standing in for a figure."""
    found = []
    for output in cell.outputs:
        kind = output.get("output_type")
        if kind == "error":
            found.append(f"a traceback ({output.get('ename')}: {output.get('evalue')})")
            continue
        texts = [output.get("text", "")] if kind == "stream" else [
            str(output.get("data", {}).get("text/plain", "")) for _ in [0]
            if "image/png" not in output.get("data", {}) and "text/html" not in output.get("data", {})]
        for text in texts:
            if kind == "stream" and output.get("name") == "stderr" and text.strip():
                found.append(f"stderr: {text.strip().splitlines()[0][:200]}")
            if re.search(r"\bTraceback \(most recent call last\)|\w+Warning: ", text):
                found.append(f"a warning or traceback: {text.strip()[:200]}")
            for match in _ADDRESS_REPR.finditer(text):
                found.append(f"an object's address: {match.group(0)[:120]}")
            for match in _AXES_REPR.finditer(text):
                found.append(f"a figure's repr instead of the figure: {match.group(0)[:120]}")
    return found
