"""SummEval (Fabbri et al. 2021) human ratings with the LLM_summeval judge outputs (Shen et al. 2023).

1,200 summaries (12 abstractive systems x 100 CNN/DailyMail documents), each rated 1-5 on
coherence, consistency, fluency and relevance by 3 experts (and 5 crowd workers). The judges
(gpt-3.5-turbo-0301; llama-2-7b/13b/70b-chat-hf) answered one prompt per summary, criterion and
style; their raw text is kept and parsed here by :mod:`judgelab.datasets.summeval_parsing`.

Layout (relative to ``LLM_summeval/``)::

    model_output_annotations/<system>_outputs_annotations.jsonl
    eval_model_generations/<judge>/eval_<system>_generations/<criterion>_<method>.txt   {"id", "resp"}

A few generation files list a summary twice. The authors' score extraction kept the last
occurrence; ``duplicates="last"`` (default) does the same, ``"all"`` keeps every occurrence as
a repeat (``repeat`` 0, 1, ...).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.datasets.result import DatasetResult
from judgelab.datasets.sources import (
    DataFormatError,
    DataNotFoundError,
    available_paths,
    data_location,
    fetch_files,
)
from judgelab.datasets.summeval_parsing import PARSERS
from judgelab.errors import ConfigError
from judgelab.judgments import OK

__all__ = ["CRITERIA", "FOLDER", "SYSTEMS", "summeval", "summeval_combinations"]

FOLDER = "LLM_summeval"
CRITERIA: tuple[str, ...] = ("coherence", "consistency", "fluency", "relevance")
SYSTEMS: tuple[str, ...] = ("M8", "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M17", "M20", "M22", "M23")
_GENERATION = re.compile(r"^eval_model_generations/([^/]+)/eval_(M\d+)_generations/([a-z]+)_([a-z]+)\.txt$")


def summeval_combinations(data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Every (judge, method) that :func:`summeval` can load, with its files and criteria.

    A method is listed when judgelab has a parser for it (``rts``, ``altrts``, ``mcq``, ``altmcq``,
    ``stareval``) and at least one criterion has an output file for all 12 systems; ``criteria`` names those
    criteria (what ``summeval(judge, method)`` loads by default) and ``n_files`` counts the files read.
    Columns: judge, method, n_files, criteria.
    """
    rows = [m.groups() for p in available_paths(FOLDER, data_dir) if (m := _GENERATION.match(p))]
    files = pd.DataFrame(rows, columns=["judge", "system", "criterion", "method"])
    files = files[files["method"].isin(list(PARSERS)) & files["criterion"].isin(CRITERIA)
                  & files["system"].isin(SYSTEMS)]
    per_criterion = files.groupby(["judge", "method", "criterion"])["system"].nunique()
    complete = per_criterion[per_criterion == len(SYSTEMS)].reset_index()
    out = []
    for (judge, method), part in complete.groupby(["judge", "method"], sort=True):
        criteria = tuple(c for c in CRITERIA if c in set(part["criterion"]))
        out.append({"judge": judge, "method": method, "n_files": len(criteria) * len(SYSTEMS), "criteria": criteria})
    return pd.DataFrame(out, columns=["judge", "method", "n_files", "criteria"])


def _resolve_judge(judge: str, combos: pd.DataFrame, data_dir: str | os.PathLike[str] | None) -> str:
    judges = sorted(set(combos["judge"]))
    for candidate in (judge, f"{judge}-hf"):
        if candidate in judges:
            return candidate
    if not judges:
        raise DataNotFoundError(
            f"no LLM_summeval judge outputs in {data_location(FOLDER, data_dir)}: looked for "
            "eval_model_generations/<judge>/eval_<system>_generations/<criterion>_<method>.txt for the 12 systems "
            "(see help(judgelab.datasets.summeval) for the layout)")
    raise DataNotFoundError(f"no LLM_summeval outputs for judge {judge!r}; available: {', '.join(judges)}")


def summeval(
    judge: str | Sequence[str],
    method: str = "rts",
    data_dir: str | os.PathLike[str] | None = None,
    *,
    criteria: Sequence[str] | None = None,
    duplicates: Literal["last", "all"] = "last",
    human: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
) -> DatasetResult:
    """Judge scores (parsed from raw text) and human ratings for the 1,200 SummEval summaries.

    ``data_dir`` (else ``$JUDGELAB_DATA_DIR``; else the files are downloaded) holds an ``LLM_summeval/``
    folder laid out as the release (DAMO-NLP-SG/LLM_summeval)::

        <data_dir>/LLM_summeval/model_output_annotations/<system>_outputs_annotations.jsonl
        <data_dir>/LLM_summeval/eval_model_generations/<judge>/eval_<system>_generations/<criterion>_<method>.txt

    for the 12 systems M8 ... M23; :func:`summeval_combinations` lists the (judge, method) pairs there.

    Table rows per summary and criterion: ``judge="human"`` (mean of the 3 expert ratings),
    ``"human:expert_1"`` ... ``"human:expert_3"``, and the judge's row (score 1-5, or a
    ``parse_error`` row whose reason says what was wrong). Extra columns ``system`` and
    ``document_id`` support summary-level and system-level meta-evaluation. ``human=False``
    leaves out the human rows (identical for every judge) when only the judge is needed.
    ``judge``: one judge, or several (``["gpt-3.5-turbo-0301", "llama-2-70b-chat-hf"]``) loaded with the
    same method into ONE table with one copy of the human rows (:func:`judgelab.judgments.combine`).
    ``criteria``: the criteria to load (default: every criterion released for this judge and method).
    """
    if method not in PARSERS:
        raise ConfigError(f"unknown LLM_summeval method {method!r}; known: {', '.join(PARSERS)}")
    if duplicates not in ("last", "all"):
        raise ConfigError(f"duplicates must be 'last' or 'all', not {duplicates!r}")
    if criteria is not None:
        criteria = (criteria,) if isinstance(criteria, str) else tuple(criteria)
        unknown = [c for c in criteria if c not in CRITERIA]
        if unknown:
            raise ConfigError(f"unknown SummEval criteria {unknown}; known: {', '.join(CRITERIA)}")
    if not isinstance(judge, str):
        judges = list(dict.fromkeys(judge))
        if not judges or not all(isinstance(j, str) for j in judges):
            raise ConfigError(f"judge must be a judge name or a list of names, not {judge!r}")
        loads = [summeval(j, method, data_dir, criteria=criteria, duplicates=duplicates, human=human,
                          cache_dir=cache_dir, base_url=base_url) for j in judges]
        names = [load.notes["judge"] for load in loads]
        return DatasetResult.combined(f"summeval:{'+'.join(names)}:{method}", loads, judge=names, method=method,
                                      criteria=loads[0].notes["criteria"], duplicates=duplicates, human=human)
    combos = summeval_combinations(data_dir)
    judge = _resolve_judge(judge, combos, data_dir)
    mine = combos[combos.judge == judge]
    methods = sorted(mine["method"])
    if method not in methods:
        raise DataNotFoundError(
            f"LLM_summeval has no {method!r} outputs for {judge}; available: {', '.join(methods)}"
        )
    released = mine.loc[mine.method == method, "criteria"].iloc[0]
    if criteria is None:
        criteria = released
    missing = [c for c in criteria if c not in released]
    if missing:
        raise DataNotFoundError(f"LLM_summeval has no complete {method!r} outputs of {judge} for criteria {missing} "
                                f"(all 12 systems); released: {', '.join(released)}")

    annotation_paths = [f"model_output_annotations/{s}_outputs_annotations.jsonl" for s in SYSTEMS]
    generation_paths = [
        f"eval_model_generations/{judge}/eval_{s}_generations/{c}_{method}.txt"
        for s in SYSTEMS
        for c in criteria
    ]
    files, source = fetch_files(
        FOLDER, annotation_paths + generation_paths, data_dir=data_dir, cache_dir=cache_dir, base_url=base_url
    )
    run_id = f"summeval:{judge}:{method}"
    items: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for system, path in zip(SYSTEMS, annotation_paths, strict=True):
        for record in _read_jsonl(files[path], path):
            items.append(_item(record, system, path))
            if human:
                rows.extend(_human_rows(record, system, run_id, criteria, path))
    known = {item["item_id"] for item in items}
    for system in SYSTEMS:
        for criterion in criteria:
            path = f"eval_model_generations/{judge}/eval_{system}_generations/{criterion}_{method}.txt"
            rows.extend(
                _judge_rows(files[path], path, judge, system, criterion, method, run_id, known, duplicates)
            )
    return DatasetResult.from_rows(run_id, rows, items, source, judge=judge, method=method, criteria=list(criteria),
                                   duplicates=duplicates, human=human)


def _read_jsonl(path: Path, name: str) -> list[dict[str, Any]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataFormatError(f"{name} line {number} is not valid JSON: {exc}") from exc
    return out


def _item(record: dict[str, Any], system: str, path: str) -> dict[str, Any]:
    item = {
        "item_id": f"{record['id']}:{system}",
        "document_id": record["id"],
        "system": system,
        "summary": record.get("decoded"),
        "source_text": record.get("text"),
        "references": json.dumps(record.get("references", []), ensure_ascii=False),
        "filepath": record.get("filepath"),
    }
    for group in ("expert", "turker"):
        ratings = record.get(f"{group}_annotations") or []
        label = "crowd" if group == "turker" else group
        for criterion in CRITERIA:
            values = [r[criterion] for r in ratings if r.get(criterion) is not None]
            item[f"{label}_{criterion}"] = sum(values) / len(values) if values else np.nan
    return item


def _human_rows(
    record: dict[str, Any], system: str, run_id: str, criteria: tuple[str, ...], path: str
) -> list[dict[str, Any]]:
    experts = record.get("expert_annotations") or []
    if len(experts) != 3:
        raise DataFormatError(f"{path}: summary {record.get('id')} has {len(experts)} expert ratings, expected 3")
    base = {
        "run_id": run_id,
        "item_id": f"{record['id']}:{system}",
        "rubric": "summeval",
        "condition": "original",
        "repeat": 0,
        "system": system,
        "document_id": record["id"],
    }
    rows = []
    for criterion in criteria:
        values = [float(e[criterion]) for e in experts]
        rows.append(
            {
                **base,
                "criterion": criterion,
                "judge": "human",
                "status": OK,
                "score": sum(values) / len(values),
                "detail": {"aggregate": "mean of 3 expert ratings", "ratings": values},
            }
        )
        for k, value in enumerate(values, start=1):
            rows.append(
                {**base, "criterion": criterion, "judge": f"human:expert_{k}", "status": OK, "score": value}
            )
    return rows


def _judge_rows(
    path: Path,
    name: str,
    judge: str,
    system: str,
    criterion: str,
    method: str,
    run_id: str,
    known: set[str],
    duplicates: str,
) -> list[dict[str, Any]]:
    records = _read_jsonl(path, name)
    by_item: dict[str, list[str]] = {}
    for record in records:
        by_item.setdefault(f"{record['id']}:{system}", []).append(str(record.get("resp", "")))
    stray = sorted(set(by_item) - known)
    if stray:
        raise DataFormatError(f"{name} has outputs for summaries not in the annotations (first: {stray[0]})")
    parse = PARSERS[method]
    rows = []
    base = {
        "run_id": run_id,
        "rubric": f"llm_summeval:{method}",
        "criterion": criterion,
        "judge": judge,
        "condition": "original",
        "system": system,
    }
    for item_id in sorted(i for i in known if i.endswith(f":{system}")):
        responses = by_item.get(item_id)
        row = {**base, "item_id": item_id, "document_id": item_id.rsplit(":", 1)[0]}
        if not responses:
            rows.append(
                {
                    **row,
                    "repeat": 0,
                    "status": "parse_error",
                    "unscored_reason": f"no output for this summary in {name}",
                }
            )
            continue
        kept = list(enumerate(responses)) if duplicates == "all" else [(0, responses[-1])]
        for repeat, text in kept:
            parsed = parse(text)
            detail = {"matched": parsed.matched, "occurrences_in_file": len(responses)}
            if parsed.score is None:
                rows.append(
                    {
                        **row,
                        "repeat": repeat,
                        "raw_output": text,
                        "status": "parse_error",
                        "unscored_reason": parsed.reason,
                        "detail": detail,
                    }
                )
            else:
                rows.append(
                    {
                        **row,
                        "repeat": repeat,
                        "raw_output": text,
                        "status": OK,
                        "score": parsed.score,
                        "detail": detail,
                    }
                )
    return rows
