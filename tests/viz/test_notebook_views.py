"""What a notebook shows for a result (``_repr_html_``) and how numbers read in every HTML table."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from judgelab.engine.runner import RunResult, RunStats
from judgelab.judgments import make_table
from judgelab.viz.style import NUMBER_CELL, format_interval, format_number, format_p_value, frame_html


def test_numbers_read_as_numbers() -> None:
    assert [format_number(v) for v in (3, np.int64(12345), 0.5, 2.0, 1e-7, math.nan, None, pd.NA, 123456.7)] == [
        "3", "12,345", "0.500", "2.00", "1.00e-07", "–", "–", "–", "123,457"]  # 3 significant digits
    assert [format_number(v) for v in (0.05123, 12.345, 999.6, 9.996, 0.0)] == ["0.0512", "12.3", "1,000", "10.0", "0.00"]
    assert [format_p_value(p) for p in (1.2e-7, 0.000999, 0.001, 0.0312, 1.0, math.nan)] == [
        "<0.001", "<0.001", "0.001", "0.031", "1.000", "–"]
    assert format_interval(0.1, 0.9) == "[0.100, 0.900]" and format_interval(math.nan, math.nan) == "–"


def test_frame_html_keeps_each_number_in_one_unwrapped_cell() -> None:
    frame = pd.DataFrame({"metric": ["flip <rate>"], "estimate": [0.25], "ci_low": [0.1], "ci_high": [0.45],
                          "p_value": [3e-9], "n": [120], "method": ["exact"]})
    out = frame_html(frame)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", out)
    assert cells == ["flip &lt;rate&gt;", "0.250", "[0.100, 0.450]", "&lt;0.001", "120", "exact"]
    assert out.count(f"style='{NUMBER_CELL}'") == 4 and "white-space:nowrap" in NUMBER_CELL
    assert ">CI</th>" in out and "ci_high" not in out
    assert "first 2 of 5 rows" in frame_html(pd.DataFrame({"x": range(5)}), max_rows=2)


def test_probe_result_notebook_view_on_released_llmbar_verdicts(data_dir: Path) -> None:
    from judgelab.datasets import llmbar
    from judgelab.probes import position

    data = llmbar("Natural", "ChatGPT", "Vanilla_NoRules", data_dir=data_dir)
    result = position.analyze(data.table, n_resamples=200)
    view = result._repr_html_()
    assert view.startswith("<div><b>position probe</b>: 100 items; 300 judgment rows (300 ok, 0 unscored)")
    first = result.metric("first_position_rate")
    assert f"<td style='{NUMBER_CELL}'>{format_p_value(first['p_value']).replace('<', '&lt;')}</td>" in view
    assert format_interval(first["ci_low"], first["ci_high"]) in view
    assert view.count("<tr>") == len(result.summary) + 1 + 10 + 1  # summary rows + its header, 10 head rows + header
    dataset_view = data._repr_html_()
    assert "princeton-nlp/LLMBar@" in dataset_view and "first 10 of 300 rows" in dataset_view


def test_run_result_notebook_view_has_the_summary_line_and_head() -> None:
    base = {"run_id": "r", "rubric": "direct_score", "judge": "m", "condition": "original", "repeat": 0}
    table = make_table([{**base, "item_id": f"i{k}", "criterion": "overall", "status": "ok", "score": 3.0}
                        for k in range(12)]
                       + [{**base, "item_id": "i12", "criterion": "overall", "status": "parse_error",
                           "unscored_reason": "no <score>"}])
    stats = RunStats(items=13, judgments=13, ok=12, unscored=1, api_calls=13, cost_usd=math.nan, wall_s=2.25)
    view = RunResult(table, stats)._repr_html_()
    assert "13 items; 13 judgment rows (12 ok, 1 unscored)" in view
    assert "13 API calls, 0 cache hits, 0 retries; cost unknown; 2.2 s" in view  # NaN cost is unknown, not $0
    assert "first 10 of 13 rows" in view and "no &lt;score&gt;" not in view  # the head: the first 10 rows
