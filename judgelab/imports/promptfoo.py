"""promptfoo JSON results (``promptfoo eval -o results.json``) -> judgments table (``judgelab.from_promptfoo``).

The file is ``{"evalId", "results": {"version", "timestamp", "results": [EvaluateResult ...], "stats"},
"config", "metadata": {"promptfooVersion"}}``; each EvaluateResult (one test case x prompt x provider) has a
``gradingResult`` whose ``componentResults`` hold one GradingResult per assertion: ``pass``, ``score``,
``reason`` and the ``assertion`` (``type``, ``value``, ``provider``, ``metric``, ``threshold``). Mapping, one row
per model-graded assertion result (``llm-rubric``, ``g-eval``, ``select-best``):

================  =====================================================================================
``run_id``        ``promptfoo:<evalId>:<assertion type>`` (each type is a rubric, so a run of its own)
``item_id``       the test (its ``testCase.description``, else ``test<testIdx>``); when the file holds several
                  prompts or providers, ``/<prompt label>/<provider>`` is added (one row per judged output)
``rubric``        the assertion type
``criterion``     the assertion's ``metric`` name, else ``<type>#<k>`` (its place among the test's assertions)
``judge``         the assertion's grading ``provider``, else the config's ``defaultTest.options.provider``,
                  else ``promptfoo:default-grader`` (promptfoo's default grading model, unnamed in the file)
``score``         the assertion's score (llm-rubric 0-1, g-eval 0-1; select-best 1 for the chosen output, 0 else)
``verdict``       ``pass`` / ``fail`` (select-best: ``best`` / ``not_best``)
``raw_output``    the reason the grader gave
``repeat``        ``repeatIndex`` when promptfoo ran with ``--repeat``
``system``        the provider (and prompt label) that produced the judged output (extra columns ``test``,
                  ``prompt``, ``provider``)
================  =====================================================================================

A component with no score and an ``error`` reason, or a result whose provider call failed (``error``), becomes an
unscored row with its reason. Not mapped: other assertion types (string checks, similarity, factuality ...;
named in ``table.attrs["skipped_assertions"]``), the aggregate pass/score of a test (promptfoo's own
combination), token usage of the grader, and red-team metadata.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pandas as pd

from judgelab.imports.common import Fields, as_score, guarded, import_table, provenance, read_json
from judgelab.judgments import API_ERROR, OK, PARSE_ERROR

__all__ = ["MODEL_GRADED", "from_promptfoo"]

MODEL_GRADED: tuple[str, ...] = ("llm-rubric", "g-eval", "select-best")
_TOOL = "promptfoo"


def _provider_name(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping):
        for key in ("id", "label"):
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
    return None


def _default_grader(data: Fields) -> str:
    config = data.child("config", required=False)
    default = config.child("defaultTest", required=False) if config else None
    options = default.child("options", required=False) if default else None
    found = _provider_name(options.value.get("provider")) if options else None
    return found or "promptfoo:default-grader"


def _read(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A promptfoo JSON results file as a judgments table (the mapping below)."""
    file, raw = read_json(path, _TOOL)
    data = Fields(raw, "the file", file, _TOOL)
    results = data.child("results")
    assert results is not None
    entries = results.items("results")
    meta = data.child("metadata", required=False)
    version = meta.get("promptfooVersion", str, required=False) if meta else None
    run_id = data.get("evalId", str, required=False) or results.get("timestamp", str, required=False)
    source = provenance(_TOOL, version or f"results format {results.get('version', int, required=False)}", file, run_id)
    grader = _default_grader(data)
    combos = {(e.get("promptIdx", int, required=False), _provider_name(e.value.get("provider"))) for e in entries}
    several = len(combos) > 1
    rows: list[dict[str, Any]] = []
    skipped: set[str] = set()
    for entry in entries:
        test_idx = entry.get("testIdx", int)
        case = entry.child("testCase", required=False)
        name = (case.get("description", str, required=False) if case else None) or f"test{test_idx}"
        prompt = entry.child("prompt", required=False)
        prompt_label = (prompt.get("label", str, required=False) if prompt else None) or \
            f"prompt{entry.get('promptIdx', int, required=False)}"
        provider = _provider_name(entry.value.get("provider")) or "unknown-provider"
        item_id = f"{name}/{prompt_label}/{provider}" if several else name
        base = {"item_id": item_id, "condition": "original",
                "repeat": entry.get("repeatIndex", int, required=False), "system": f"{provider} {prompt_label}",
                "test": name, "prompt": prompt_label, "provider": provider}
        grading = entry.child("gradingResult", required=False)
        components = grading.items("componentResults", required=False) if grading else []
        call_error = entry.get("error", str, required=False)
        for k, component in enumerate(components):
            assertion = component.child("assertion", required=False)
            kind = assertion.get("type", str, required=False) if assertion else None
            if kind not in MODEL_GRADED:
                skipped.add(str(kind))
                continue
            assert assertion is not None
            metric = assertion.get("metric", str, required=False)
            row = {**base, "run_id": f"promptfoo:{run_id}:{kind}", "rubric": kind, "criterion": metric or f"{kind}#{k}",
                   "judge": _provider_name(assertion.value.get("provider")) or grader,
                   "raw_output": component.get("reason", str, required=False),
                   "detail": {"imported_from": source, "assertion_value": assertion.value.get("value"),
                              "threshold": assertion.value.get("threshold")}}
            score = as_score(component.value.get("score"))
            passed = component.get("pass", bool, required=False)
            if call_error is not None and score is None:
                row.update(status=API_ERROR, unscored_reason=f"the output was not produced: {call_error}"[:500])
            elif score is None or passed is None:
                row.update(status=PARSE_ERROR, unscored_reason=f"promptfoo recorded no score and pass: "
                                                               f"{component.value.get('reason')!r:.300}")
            else:
                labels = ("best", "not_best") if kind == "select-best" else ("pass", "fail")
                row.update(status=OK, score=score, verdict=labels[0] if passed else labels[1])
            rows.append(row)
    table = import_table(rows, file, _TOOL)
    table.attrs["skipped_assertions"] = sorted(skipped)
    table.attrs["source"] = source
    return table


from_promptfoo = guarded(_TOOL, _read)
from_promptfoo.__doc__ = f"{_read.__doc__}\n\n{__doc__}"  # help() shows the mapping and what is not mapped
