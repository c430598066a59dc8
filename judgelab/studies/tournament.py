"""A small round-robin tournament: every pair of systems answers the same questions, a pairwise judge compares
them, and the verdicts become a ranking (notebook 10's live part, on the embedded plumbing judge).

:func:`tournament_items` makes one pairwise item per question and pair of systems (both systems named on the
item, in the original order); :func:`with_systems` puts those names on the judgments table the run returns
(the runner keeps the judge's verdict, not the item's extra fields), so that
``stats.rank_systems(table, system_a="model_a", system_b="model_b")`` can read it. The live tournament shows the
mechanics only: the embedded SmolLM2-135M cannot judge, so its ranking says nothing about the systems.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from judgelab.errors import ConfigError

__all__ = ["tournament_items", "with_systems"]


def tournament_items(questions: Mapping[str, str], answers: Mapping[str, Mapping[str, str]]) -> list[dict[str, Any]]:
    """One pairwise item per question and pair of systems: ``prompt``, ``response_a``/``response_b`` and the two
    systems' names in ``model_a``/``model_b`` (the first by name is A; run with ``swap=True`` for both orders).

    ``questions``: question id -> question text. ``answers``: system -> (question id -> that system's answer);
    every system must answer every question (a missing answer is refused, never skipped).
    """
    if len(answers) < 2:
        raise ConfigError(f"a tournament needs two or more systems, got {len(answers)}")
    if not questions:
        raise ConfigError("a tournament needs at least one question")
    for system, by_question in answers.items():
        missing = [q for q in questions if not isinstance(by_question.get(q), str) or not by_question.get(q)]
        if missing:
            raise ConfigError(f"system {system!r} has no answer to question {missing[0]!r}: every system answers "
                              f"every question")
    items = []
    for qid, text in questions.items():
        for a, b in itertools.combinations(sorted(answers), 2):
            items.append({"item_id": f"{qid}:{a}-vs-{b}", "prompt": text, "response_a": answers[a][qid],
                          "response_b": answers[b][qid], "model_a": a, "model_b": b, "question_id": qid})
    return items


def with_systems(table: pd.DataFrame, items: Sequence[Mapping[str, Any]],
                 columns: Sequence[str] = ("model_a", "model_b", "question_id")) -> pd.DataFrame:
    """The judgments table with the items' ``columns`` added by ``item_id`` (every row keeps its place)."""
    frame = pd.DataFrame([{"item_id": str(i["item_id"]), **{c: i.get(c) for c in columns}} for i in items])
    if frame["item_id"].duplicated().any():
        raise ConfigError("two items share an item_id: the systems cannot be attached unambiguously")
    clash = [c for c in columns if c in table.columns]
    if clash:
        raise ConfigError(f"the table already has column(s) {clash}: drop them first or name other columns")
    unknown = sorted(set(table["item_id"].astype(str)) - set(frame["item_id"]))
    if unknown:
        raise ConfigError(f"item {unknown[0]!r} of the table is not among the items given")
    merged = table.merge(frame, on="item_id", how="left", validate="many_to_one")
    merged.index = table.index
    return merged
