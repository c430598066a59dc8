"""A DeepEval test run (its saved JSON) -> judgments table (``judgelab.from_deepeval``).

DeepEval saves a test run (``deepeval test run``, or ``evaluate()`` with a results folder: ``test_run_*.json``,
or ``.deepeval/.latest_test_run.json``) as its ``TestRun`` model in JSON, with camelCase aliases:
``{"testFile", "testCases": [{"name", "input", "actualOutput", "expectedOutput", "success", "order",
"metricsData": [{"name", "threshold", "success", "score", "reason", "strictMode", "evaluationModel", "error",
"evaluationCost"}]}], "conversationalTestCases": [{"name", "turns", "metricsData", ...}], "identifier",
"testPassed", "testFailed", ...}`` (deepeval/test_run/test_run.py and api.py). Mapping, one row per test case x
metric:

================  =====================================================================================
``run_id``        ``deepeval:<identifier>:<metric>`` (each metric is a rubric, so a run of its own)
``item_id``       the test case's ``name`` (DeepEval names them ``test_case_<n>`` when the user did not)
``rubric``        the metric's ``name`` (``Answer Relevancy``, ``Correctness [GEval]`` ...)
``criterion``     ``overall``
``judge``         the metric's ``evaluationModel`` (``deepeval:unknown-model`` when absent: a non-LLM metric)
``score``         the metric's score (0-1)
``verdict``       ``pass`` / ``fail`` (the metric's ``success`` against its ``threshold``)
``raw_output``    the metric's ``reason``
``cost_usd``      the metric's ``evaluationCost``
``detail``        threshold, strict mode, and the provenance (``identifier`` is the run id)
================  =====================================================================================

A metric that errored (``error`` set, no score) is an unscored row (``api_error``) with DeepEval's message.
Conversational test cases are imported the same way, with ``conversational`` in the detail. Not mapped: the
metric's verbose logs (its intermediate steps), per-turn metrics of a conversation, hyperparameters.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from judgelab.imports.common import (
    Fields,
    ImportFileError,
    as_score,
    guarded,
    import_table,
    provenance,
    read_json,
)
from judgelab.judgments import API_ERROR, OK, PARSE_ERROR

__all__ = ["from_deepeval"]

_TOOL = "DeepEval"


def _read(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A DeepEval test run JSON file as a judgments table (the mapping below)."""
    file, raw = read_json(path, _TOOL)
    run = Fields(raw, "the test run", file, _TOOL)
    cases = run.items("testCases", required=False)
    conversational = run.items("conversationalTestCases", required=False)
    if "testCases" not in run.value and "conversationalTestCases" not in run.value:
        raise ImportFileError(f"{file} has neither testCases nor conversationalTestCases; is this a DeepEval "
                              "test run file?")
    run_id = run.get("identifier", str, required=False) or run.get("testFile", str, required=False)
    source = provenance(_TOOL, run.get("deepevalVersion", str, required=False), file, run_id)
    rows: list[dict[str, Any]] = []
    for kind, group in (("llm", cases), ("conversational", conversational)):
        for k, case in enumerate(group):
            name = case.get("name", str, required=False) or f"test_case_{case.get('order', int, required=False) or k}"
            for metric in case.items("metricsData", required=False):
                threshold = as_score(metric.value.get("threshold"))
                row: dict[str, Any] = {
                    "run_id": f"deepeval:{run_id}:{metric.get('name', str)}", "item_id": name, "condition": "original",
                    "criterion": "overall", "rubric": metric.get("name", str),
                    "judge": metric.get("evaluationModel", str, required=False) or "deepeval:unknown-model",
                    "raw_output": metric.get("reason", str, required=False),
                    "cost_usd": as_score(metric.value.get("evaluationCost")),
                    "detail": {"imported_from": source, "threshold": threshold,
                               "strict_mode": metric.get("strictMode", bool, required=False),
                               **({"conversational": True} if kind == "conversational" else {})}}
                score = as_score(metric.value.get("score"))
                success = metric.get("success", bool, required=False)
                error = metric.get("error", str, required=False)
                if error is not None and score is None:
                    row.update(status=API_ERROR, unscored_reason=f"the metric failed: {error}"[:500])
                elif score is None:
                    row.update(status=PARSE_ERROR, unscored_reason="DeepEval recorded no score for this metric")
                else:
                    verdict = None if success is None else ("pass" if success else "fail")
                    row.update(status=OK, score=score, verdict=verdict)
                rows.append(row)
    table = import_table(rows, file, _TOOL)
    table.attrs["source"] = source
    return table


from_deepeval = guarded(_TOOL, _read)
from_deepeval.__doc__ = f"{_read.__doc__}\n\n{__doc__}"  # help() shows the mapping and what is not mapped
