"""OpenQA-eval (Kamalloo et al., ACL 2023): is a QA system's answer to an NQ-open question acceptable?

NQ301: 301 Natural Questions, 1,490 (question, candidate answer) pairs, judged Yes/No by human
annotators and by three automatic judges. All four TSV files list the pairs in the same order,
so row position is the item identity (checked against the question text on every row).

- ``NQ301_human.tsv``: ``Acceptable?`` (the human verdict: the majority of the annotators) and
  ``annotator1``-``annotator3``. The third annotator only labelled some pairs (mostly the ones
  the first two disagreed on); blank cells of annotator 3 are "not asked", so they get no row.
  A blank cell of annotator 1 or 2 is an unscored row.
- ``NQ301_gpt-4.tsv`` / ``NQ301_text-davinci-003.tsv``: the judge's raw reply; the verdict is
  the leading "Yes"/"No" (the paper's rule). A reply that starts with neither ("The candidate is
  partially correct...", "I cannot determine...") is a ``parse_error`` row, not a "No". The
  text-davinci-003 file lacks the tab between question and answer (on every row of this
  release); the question is split off using the human file's question for that row.
- ``NQ301_BEM.tsv``: BEM's decision (its ``Acceptable?`` column) with the per-gold-answer
  probabilities; ``confidence`` is the highest probability of "equivalent" over gold answers.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judgelab.datasets.result import DatasetResult
from judgelab.datasets.sources import DataFormatError, DataNotFoundError, fetch_files
from judgelab.errors import ConfigError
from judgelab.judgments import OK
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.verdict_text import read_yes_no

__all__ = ["FOLDER", "HUMAN_FILE", "JUDGES", "openqa"]

FOLDER = "OpenQA-eval"
JUDGES: dict[str, str] = {
    "gpt-4": "data/NQ301_gpt-4.tsv",
    "text-davinci-003": "data/NQ301_text-davinci-003.tsv",
    "BEM": "data/NQ301_BEM.tsv",
}
HUMAN_FILE = "data/NQ301_human.tsv"


def openqa(
    judge: str | Sequence[str],
    data_dir: str | os.PathLike[str] | None = None,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    base_url: str | None = None,
) -> DatasetResult:
    """Human and ``judge`` ("gpt-4", "text-davinci-003", "BEM"; or "human" alone) yes/no verdicts.

    ``data_dir`` (else ``$JUDGELAB_DATA_DIR``; else the files are downloaded) holds an ``OpenQA-eval/``
    folder laid out as the release (ehsk/OpenQA-eval)::

        <data_dir>/OpenQA-eval/data/NQ301_human.tsv
        <data_dir>/OpenQA-eval/data/NQ301_BEM.tsv
        <data_dir>/OpenQA-eval/data/NQ301_gpt-4.tsv
        <data_dir>/OpenQA-eval/data/NQ301_text-davinci-003.tsv

    Table: ``judge="human"`` (the file's majority verdict), ``"human:annotator1"``..``3``, and the
    judge's rows, all with ``verdict`` "yes"/"no" and criterion "acceptable". ``judge``: one judge, or
    several (``["gpt-4", "BEM"]``) in ONE table with one copy of the human rows
    (:func:`judgelab.judgments.combine`).
    """
    if not isinstance(judge, str):
        judges = list(dict.fromkeys(judge))
        if not judges or not all(isinstance(j, str) for j in judges):
            raise ConfigError(f"judge must be a judge name or a list of names, not {judge!r}")
        loads = [openqa(j, data_dir, cache_dir=cache_dir, base_url=base_url) for j in judges]
        names = [load.notes["judge"] for load in loads]
        return DatasetResult.combined(f"openqa:NQ301:{'+'.join(names)}", loads, judge=names)
    key = {k.lower(): k for k in JUDGES}.get(judge.lower()) if judge.lower() != "human" else "human"
    if key is None:
        raise DataNotFoundError(f"unknown OpenQA-eval judge {judge!r}; available: human, {', '.join(JUDGES)}")
    wanted = [HUMAN_FILE, JUDGES["BEM"]] + ([JUDGES[key]] if key in ("gpt-4", "text-davinci-003") else [])
    files, source = fetch_files(FOLDER, wanted, data_dir=data_dir, cache_dir=cache_dir, base_url=base_url)
    human = _read_tsv(files[HUMAN_FILE], HUMAN_FILE, n_columns=7)
    bem = _read_tsv(files[JUDGES["BEM"]], JUDGES["BEM"], n_columns=6)
    if len(bem) != len(human):
        raise DataFormatError(f"{JUDGES['BEM']} has {len(bem)} rows but {HUMAN_FILE} has {len(human)}")
    run_id = f"openqa:NQ301:{key}"
    items, rows = [], []
    for index, (h, b) in enumerate(zip(human, bem, strict=True)):
        _check_same_question(h[1], b[1], index, JUDGES["BEM"])
        item_id = f"NQ301#{index}"
        items.append(
            {
                "item_id": item_id,
                "question_id": h[0],
                "question": h[1],
                "answer": h[2],
                "gold_answers": b[2].split(" | ") if b[2] else [],
                "human_verdict": h[3].lower() or None,
            }
        )
        rows.extend(_human_rows(item_id, run_id, h, index))
    if key == "BEM":
        rows.extend(_bem_rows(bem, human, run_id))
    elif key != "human":
        judged = _read_judge_file(files[JUDGES[key]], JUDGES[key], human)
        rows.extend(_llm_rows(judged, human, key, run_id))
    return DatasetResult.from_rows(run_id, rows, items, source, judge=key)


def _read_tsv(path: Path, name: str, n_columns: int) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    if not rows:
        raise DataFormatError(f"{name} is empty")
    body = rows[1:]
    bad = [i for i, r in enumerate(body, start=2) if len(r) != n_columns]
    if bad:
        raise DataFormatError(f"{name} line {bad[0]} has {len(body[bad[0] - 2])} columns, expected {n_columns}")
    return body


def _check_same_question(expected: str, got: str, index: int, name: str) -> None:
    if expected.strip() != got.strip():
        raise DataFormatError(
            f"{name} row {index + 2} is about {got[:50]!r}, but {HUMAN_FILE} has {expected[:50]!r} there"
        )


def _read_judge_file(path: Path, name: str, human: list[list[str]]) -> list[tuple[str, str, str, str]]:
    """(question, answer, recorded Acceptable?, raw reply) per row, mending a missing question/answer tab."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))[1:]
    if len(rows) != len(human):
        raise DataFormatError(f"{name} has {len(rows)} rows but {HUMAN_FILE} has {len(human)}")
    out = []
    for index, (row, h) in enumerate(zip(rows, human, strict=True)):
        if len(row) == 5:
            question, answer = row[1], row[2]
        elif len(row) == 4 and row[1].startswith(h[1]):
            question, answer = h[1], row[1][len(h[1]) :]  # the tab between question and answer is missing
        else:
            raise DataFormatError(
                f"{name} line {index + 2} has {len(row)} columns and its question does not match {HUMAN_FILE}"
            )
        _check_same_question(h[1], question, index, name)
        out.append((question, answer, row[-2], row[-1]))
    return out


def _base(item_id: str, run_id: str) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "item_id": item_id,
        "rubric": "openqa:acceptable",
        "criterion": "acceptable",
        "condition": "original",
        "repeat": 0,
    }


def _human_rows(item_id: str, run_id: str, h: list[str], index: int) -> list[dict[str, Any]]:
    base = _base(item_id, run_id)
    rows = []
    label = h[3].strip().lower()
    rows.append(
        _verdict_row(
            base,
            "human",
            label,
            f"{HUMAN_FILE} line {index + 2}: empty 'Acceptable?' cell",
            {"aggregate": "majority of annotators ('Acceptable?' column)"},
        )
    )
    for k, cell in enumerate(h[4:7], start=1):
        value = cell.strip().lower()
        if k == 3 and not value:
            continue  # annotator 3 was only asked about some pairs: a blank is "not asked", not a missing label
        rows.append(
            _verdict_row(base, f"human:annotator{k}", value, f"annotator{k} left this pair blank", None)
        )
    return rows


def _verdict_row(
    base: dict[str, Any], judge: str, value: str, blank_reason: str, detail: Any
) -> dict[str, Any]:
    if value in ("yes", "no"):
        return {**base, "judge": judge, "status": OK, "verdict": value, "detail": detail}
    reason = blank_reason if not value else f"unknown label {value!r}"
    return {**base, "judge": judge, "status": "parse_error", "unscored_reason": reason, "detail": detail}


def _llm_rows(
    judged: list[tuple[str, str, str, str]], human: list[list[str]], judge: str, run_id: str
) -> list[dict[str, Any]]:
    rows = []
    for index, ((_, answer, recorded, reply), h) in enumerate(zip(judged, human, strict=True)):
        base = {**_base(f"NQ301#{index}", run_id), "judge": judge, "raw_output": reply}
        detail = {"recorded_verdict": recorded or None}
        if answer.strip() != h[2].strip():
            detail["answer_as_judged"] = answer  # this release's judge file shows a different answer text
        try:
            verdict = read_yes_no(reply).value  # the paper's rule: the verdict opens the reply
        except ParseFailure as failure:
            rows.append({**base, "status": "parse_error", "detail": detail, "unscored_reason": failure.reason})
        else:
            rows.append({**base, "status": OK, "verdict": verdict, "detail": detail})
    return rows


def _bem_rows(bem: list[list[str]], human: list[list[str]], run_id: str) -> list[dict[str, Any]]:
    rows = []
    for index, b in enumerate(bem):
        base = {**_base(f"NQ301#{index}", run_id), "judge": "BEM", "raw_output": b[5]}
        try:
            probs = json.loads(b[5])
            p_equivalent = max(float(p[1]) for p in probs)
        except (ValueError, TypeError, IndexError) as exc:
            rows.append(
                {**base, "status": "parse_error", "unscored_reason": f"unreadable BEM probabilities: {exc}"}
            )
            continue
        value = b[4].strip().lower()
        if value not in ("yes", "no"):
            rows.append({**base, "status": "parse_error", "unscored_reason": f"BEM verdict cell is {b[4]!r}"})
            continue
        detail = {"p_equivalent_per_gold": [float(p[1]) for p in probs]}
        if b[3].strip().strip('"') != human[index][2].strip().strip('"'):
            detail["answer_as_judged"] = b[3]
        rows.append({**base, "status": OK, "verdict": value, "confidence": p_equivalent, "detail": detail})
    return rows
