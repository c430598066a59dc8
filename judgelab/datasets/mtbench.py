"""MT-Bench (Zheng et al., NeurIPS 2023): 80 two-turn questions, GPT-4's reference answers and the judge prompts.

The release (lm-sys/FastChat at a pinned commit, Apache-2.0) is read from the local ``MT-Bench/`` folder
(``data_dir`` or ``JUDGELAB_DATA_DIR``) or downloaded at the pinned commit and checked against
``manifests/MT-Bench.json``. The folder holds::

    MT-Bench/judge_prompts.jsonl                       (fastchat/llm_judge/data/judge_prompts.jsonl)
    MT-Bench/mt_bench/question.jsonl                   (80 questions, two turns each, 8 categories)
    MT-Bench/mt_bench/reference_answer/gpt-4.jsonl     (GPT-4's answers to the math, reasoning, coding questions)

:func:`mt_bench_questions` gives one row per question (its two turns and, where released, the two
reference answers); :func:`mt_bench_items` turns a model's answers into two-turn conversation items for the
``mt_bench_single`` rubric, :func:`mt_bench_pairs` two models' answers into pairs for ``mt_bench_pair``.
:func:`mt_bench_judge_prompts` reads the released prompts (the built-in rubrics carry their text).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab.datasets.sources import DataFormatError, fetch_files
from judgelab.errors import ConfigError

__all__ = ["FOLDER", "NEED_REFERENCE", "mt_bench_items", "mt_bench_judge_prompts", "mt_bench_pairs",
           "mt_bench_questions"]

FOLDER = "MT-Bench"
QUESTIONS = "mt_bench/question.jsonl"
REFERENCES = "mt_bench/reference_answer/gpt-4.jsonl"
PROMPTS = "judge_prompts.jsonl"
# FastChat's NEED_REF_CATS: the categories judged against a reference answer
NEED_REFERENCE: tuple[str, ...] = ("math", "reasoning", "coding")


def _jsonl(path: Path, name: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise DataFormatError(f"{FOLDER}/{name} line {number} is not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise DataFormatError(f"{FOLDER}/{name} line {number} is not a JSON object")
        rows.append(row)
    return rows


def mt_bench_questions(data_dir: str | os.PathLike[str] | None = None, *,
                       categories: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per question: ``item_id`` (the question id), ``category``, ``turns`` (the two user turns),
    ``reference`` (GPT-4's two reference answers for math, reasoning and coding; None elsewhere).
    ``frame.attrs["source"]`` is the :class:`SourceInfo` (repository, commit, license, files)."""
    files, info = fetch_files(FOLDER, [QUESTIONS, REFERENCES], data_dir=data_dir)
    references: dict[str, list[str]] = {}
    for row in _jsonl(files[REFERENCES], REFERENCES):
        try:
            references[str(row["question_id"])] = list(row["choices"][0]["turns"])
        except (KeyError, IndexError, TypeError):
            raise DataFormatError(f"{FOLDER}/{REFERENCES}: question {row.get('question_id')!r} has no "
                                  "choices[0].turns") from None
    out = []
    for row in _jsonl(files[QUESTIONS], QUESTIONS):
        turns = row.get("turns")
        if "question_id" not in row or not isinstance(turns, list) or len(turns) != 2:
            raise DataFormatError(f"{FOLDER}/{QUESTIONS}: question {row.get('question_id')!r} does not have "
                                  "a question_id and two turns")
        qid = str(row["question_id"])
        out.append({"item_id": qid, "category": str(row.get("category")), "turns": [str(t) for t in turns],
                    "reference": references.get(qid)})
    frame = pd.DataFrame(out)
    if categories is not None:
        unknown = sorted(set(categories) - set(frame["category"]))
        if unknown:
            raise ConfigError(f"MT-Bench has no categories {unknown}; it has {sorted(set(frame['category']))}")
        frame = frame[frame["category"].isin(list(categories))].reset_index(drop=True)
    frame.attrs["source"] = info
    return frame


def mt_bench_judge_prompts(data_dir: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """The released judge prompts by name (``single-v1``, ``pair-math-v1-multi-turn`` ...), as released."""
    files, _ = fetch_files(FOLDER, [PROMPTS], data_dir=data_dir)
    return {str(row["name"]): row for row in _jsonl(files[PROMPTS], PROMPTS)}


def _conversation(turns: Sequence[str], answers: Sequence[str]) -> list[dict[str, str]]:
    out = []
    for question, answer in zip(turns, answers, strict=True):
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


def _answers_of(answers: Mapping[Any, Sequence[str]], qid: str, model: str) -> list[str] | None:
    found = answers.get(qid, answers.get(int(qid), None) if qid.isdigit() else None)
    if found is None:
        return None
    found = [str(a) for a in found]
    if len(found) != 2:
        raise ConfigError(f"{model}'s answer to MT-Bench question {qid} has {len(found)} turns, not 2")
    return found


def mt_bench_items(questions: pd.DataFrame, answers: Mapping[Any, Sequence[str]], *,
                   model: str = "model") -> pd.DataFrame:
    """Items for ``mt_bench_single``: each question ``answers`` holds (question id -> the model's two answers)
    as a two-turn ``conversation`` (user, assistant, user, assistant) with its ``category``, ``reference`` and
    ``model``. Questions without an answer are left out and counted in ``frame.attrs["unanswered"]``."""
    rows, unanswered = [], []
    for q in questions.itertuples(index=False):
        got = _answers_of(answers, str(q.item_id), model)
        if got is None:
            unanswered.append(str(q.item_id))
            continue
        rows.append({"item_id": str(q.item_id), "category": q.category, "model": model,
                     "conversation": _conversation(q.turns, got), "reference": q.reference})
    if not rows:
        raise ConfigError(f"none of the {len(questions)} MT-Bench questions has an answer of {model} (answers are "
                          "keyed by question id, e.g. {'81': [turn1, turn2]})")
    frame = pd.DataFrame(rows)
    frame.attrs["unanswered"] = unanswered
    return frame


def mt_bench_pairs(questions: pd.DataFrame, answers_a: Mapping[Any, Sequence[str]],
                   answers_b: Mapping[Any, Sequence[str]], *, model_a: str = "model_a",
                   model_b: str = "model_b") -> pd.DataFrame:
    """Items for ``mt_bench_pair``: the two models' two-turn conversations (``conversation_a``,
    ``conversation_b``) on each question both answered; the others are counted in ``frame.attrs["unanswered"]``."""
    rows, unanswered = [], []
    for q in questions.itertuples(index=False):
        got_a = _answers_of(answers_a, str(q.item_id), model_a)
        got_b = _answers_of(answers_b, str(q.item_id), model_b)
        if got_a is None or got_b is None:
            unanswered.append(str(q.item_id))
            continue
        rows.append({"item_id": str(q.item_id), "category": q.category, "model_a": model_a, "model_b": model_b,
                     "conversation_a": _conversation(q.turns, got_a), "conversation_b": _conversation(q.turns, got_b),
                     "reference": q.reference})
    if not rows:
        raise ConfigError(f"no MT-Bench question has answers of both {model_a} and {model_b}")
    frame = pd.DataFrame(rows)
    frame.attrs["unanswered"] = unanswered
    return frame



