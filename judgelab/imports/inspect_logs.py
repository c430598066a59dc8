"""Inspect AI eval logs -> judgments table (``judgelab.from_inspect``).

Read with ``inspect_ai.log.read_eval_log`` (``.eval`` or ``.json`` logs). Mapping, one row per sample x epoch x
model-graded scorer (x value key, for scorers whose value is a dict):

================  =====================================================================================
``run_id``        ``inspect:<run id>:<scorer>`` (each scorer is a rubric, so a run of its own)
``item_id``       the sample id
``repeat``        the epoch, from 0 (Inspect counts epochs from 1)
``judge``         the grader model: the scorer's ``model`` argument, else the eval's ``grader`` model role,
                  else the evaluated model (what Inspect's model-graded scorers fall back to)
``rubric``        the scorer name (``model_graded_qa``, ``model_graded_fact`` ...)
``criterion``     ``overall``, or the key of a dict-valued score
``verdict``       the grade as Inspect wrote it (``C``, ``I``, ``P`` ...), when it is text
``score``         the value as a number (Inspect's own conversion: C 1, P 0.5, I 0; numbers as they are)
``raw_output``    the grader's explanation
``system``        the evaluated model (an extra column)
``status``        ``ok``; ``parse_error`` when the grader's reply held no grade (a NaN value: Inspect's
                  ``grader_failed``); ``api_error`` when the sample failed before it was scored
================  =====================================================================================

Model-graded scorers are those whose scores carry the grader's conversation (``metadata["grading"]``) or that
were given a grader ``model``; ``scorers="all"`` imports every scorer (a ``match()`` scorer's judge is then
``scorer:<name>``). Scorers left out are named in ``table.attrs["skipped_scorers"]``.
Not mapped: the grader's token usage and cost (Inspect reports them per sample, not per scorer), the grader's
prompt (kept in the log), scores edited after the run (their history), and sandbox events.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from judgelab.imports.common import ImportFileError, as_score, guarded, import_table, provenance
from judgelab.judgments import API_ERROR, OK, PARSE_ERROR

__all__ = ["from_inspect"]

_MODEL_GRADED = frozenset({"model_graded_qa", "model_graded_fact"})


def _read_log(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:  # pragma: no cover - inspect-ai is in the test extra
        raise ImportFileError("reading Inspect AI logs needs inspect-ai: pip install 'judgelab[inspect]'") from None
    if not path.is_file():
        raise ImportFileError(f"no Inspect AI log at {path}" + (" (it is a folder)" if path.is_dir() else ""))
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # noqa: BLE001 - a foreign or broken file: Inspect's reader raises many kinds
        raise ImportFileError(f"{path} is not an Inspect AI eval log that inspect_ai can read "
                              f"({type(exc).__name__}: {' '.join(str(exc).split())[:160]})") from None


def _model_name(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, Mapping) and isinstance(value.get("model"), str):
        return value["model"]
    return None


def _graders(log: Any) -> dict[str, str | None]:
    """Scorer name -> the grader model named in its arguments (None when it named none)."""
    out: dict[str, str | None] = {}
    for scorer in getattr(log.eval, "scorers", None) or []:
        params = getattr(scorer, "options", None) or {}
        out[str(scorer.name)] = _model_name(params.get("model")) if isinstance(params, Mapping) else None
    for score in getattr(getattr(log, "results", None), "scores", None) or []:
        params = getattr(score, "params", None) or {}
        name = str(getattr(score, "scorer", None) or score.name)
        if out.get(name) is None and isinstance(params, Mapping):
            out[name] = _model_name(params.get("model"))
    return out


def _number(value: Any) -> float | None:
    """Inspect's value_to_float: C/correct/yes/true 1, P/partial 0.5, I/incorrect/no/false 0, numbers as they are."""
    if isinstance(value, bool):
        return float(value)
    found = as_score(value)
    if found is not None:
        return found
    if isinstance(value, str):
        text = value.strip().lower()
        table = {"c": 1.0, "correct": 1.0, "yes": 1.0, "true": 1.0, "p": 0.5, "partial": 0.5,
                 "i": 0.0, "incorrect": 0.0, "no": 0.0, "false": 0.0}
        if text in table:
            return table[text]
        try:
            parsed = float(text)
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return None


def _read(log_path: str | os.PathLike[str], *, scorers: Literal["model_graded", "all"] = "model_graded",
          ) -> pd.DataFrame:
    """An Inspect AI eval log as a judgments table (the mapping below)."""
    if scorers not in ("model_graded", "all"):
        raise ImportFileError(f"scorers must be 'model_graded' or 'all', not {scorers!r}")
    path = Path(log_path)
    log = _read_log(path)
    spec = log.eval
    version = (getattr(spec, "packages", None) or {}).get("inspect_ai")
    source = provenance("inspect_ai", version, path, spec.run_id)
    source.update(task=spec.task, eval_id=spec.eval_id, log_status=str(log.status))
    evaluated = str(spec.model)
    roles = getattr(spec, "model_roles", None) or {}
    role_grader = _model_name(getattr(roles.get("grader"), "model", None)) if "grader" in roles else None
    named = _graders(log)
    skipped: set[str] = set()
    rows: list[dict[str, Any]] = []
    samples = log.samples or []
    if not samples:
        raise ImportFileError(f"{path} holds no samples (Inspect writes them unless the eval ran with "
                              "log_samples=False)")
    for sample in samples:
        # one run per scorer: two scorers of one sample are two rubrics, i.e. two runs of the table
        base = {"item_id": str(sample.id), "repeat": int(sample.epoch) - 1,
                "condition": "original", "system": evaluated}
        scores = sample.scores or {}
        if not scores and getattr(sample, "error", None) is not None:
            for name in sorted(n for n in named if scorers == "all" or n in _MODEL_GRADED or named[n]):
                rows.append({**base, "run_id": f"inspect:{spec.run_id}:{name}", "rubric": name, "criterion": "overall",
                             "judge": named[name] or role_grader or evaluated, "status": API_ERROR,
                             "unscored_reason": f"the sample failed before it was scored: {sample.error.message}"[:500],
                             "detail": {"imported_from": source}})
            continue
        for name, score in scores.items():
            graded = "grading" in (score.metadata or {}) or name in _MODEL_GRADED or named.get(name) is not None
            if not graded and scorers != "all":
                skipped.add(name)
                continue
            judge = (named.get(name) or role_grader or evaluated) if graded else f"scorer:{name}"
            values = score.value if isinstance(score.value, Mapping) else {"overall": score.value}
            for criterion, value in values.items():
                number = _number(value)
                row = {**base, "run_id": f"inspect:{spec.run_id}:{name}", "rubric": name, "criterion": str(criterion),
                       "judge": judge,
                       "raw_output": score.explanation,
                       "detail": {"imported_from": source, "answer": score.answer, "inspect_value": repr(value)}}
                if number is None:
                    why = score.reason or "no grade"
                    row.update(status=PARSE_ERROR, unscored_reason=f"Inspect recorded no usable value ({why}): "
                                                                    f"{(score.explanation or '')[:300]}")
                else:
                    row.update(status=OK, score=number, verdict=value if isinstance(value, str) else None)
                rows.append(row)
    table = import_table(rows, path, "Inspect AI")
    table.attrs["skipped_scorers"] = sorted(skipped)
    table.attrs["source"] = source
    return table


from_inspect = guarded("Inspect AI", _read)
from_inspect.__doc__ = f"{_read.__doc__}\n\n{__doc__}"  # help() shows the mapping and what is not mapped
