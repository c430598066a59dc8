"""What an annotator is asked about an item: a score on a scale, a label from a set, a pairwise winner, a note.

:func:`read_questions` turns what a user passes to :class:`judgelab.viz.Labeler` -- a rubric (its criteria and
scale anchors), one :class:`Question`, a sequence of them, or small mappings such as
``{"name": "pass", "kind": "label", "labels": ["yes", "no"]}`` -- into a tuple of :class:`Question`.
:meth:`Question.check` is the one place an answer is checked before it is stored: a score off the scale, a
label outside the set or a winner other than A / B / TIE is refused in one sentence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from judgelab.errors import JudgelabError

__all__ = ["KINDS", "WINNERS", "LabelError", "Question", "QuestionKind", "read_questions"]

QuestionKind = Literal["score", "label", "pairwise", "note"]
KINDS: tuple[str, ...] = ("score", "label", "pairwise", "note")
WINNERS: tuple[str, ...] = ("A", "B", "TIE")


class LabelError(JudgelabError, ValueError):
    """An answer, a question or an item the labelling tools cannot take as given; says what to change."""


@dataclass(frozen=True)
class Question:
    """One question. ``scale`` (low, high) and ``anchors`` (level -> text) for scores; ``labels`` for labels.

    A pairwise question's answer is the winner in the ORIGINAL candidate labels ("A", "B", "TIE"), whatever
    order the candidates were shown in.
    """

    name: str
    kind: QuestionKind = "score"
    scale: tuple[int, int] | None = None
    anchors: Mapping[int, str] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    text: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise LabelError(f"a question needs a non-empty name, not {self.name!r}")
        if self.kind not in KINDS:
            raise LabelError(f"question {self.name!r} has kind {self.kind!r}; choose one of {', '.join(KINDS)}")
        if self.kind == "score":
            if (self.scale is None or len(self.scale) != 2 or not all(isinstance(v, int) for v in self.scale)
                    or self.scale[0] >= self.scale[1]):
                raise LabelError(f"score question {self.name!r} needs scale=(low, high) with integer low < high, "
                                 f"not {self.scale!r}")
            if self.scale[1] - self.scale[0] > 9:
                raise LabelError(f"score question {self.name!r} has scale {self.scale}: the keyboard's digits reach "
                                 "ten levels at most; use a scale of ten levels or fewer")
        if self.kind == "label" and (len(self.labels) < 2 or len(set(self.labels)) != len(self.labels)):
            raise LabelError(f"label question {self.name!r} needs at least two distinct labels, not "
                             f"{list(self.labels)!r}")

    def check(self, value: Any) -> float | str:
        """The answer as stored (a float score, or a text), or a :class:`LabelError` naming the allowed values."""
        if self.kind == "score":
            assert self.scale is not None
            low, high = self.scale
            number = _number(value)
            if number is None or not low <= number <= high or number != int(number):
                raise LabelError(f"{value!r} is not a score on the scale of {self.name!r}: answer an integer from "
                                 f"{low} to {high}")
            return float(number)
        if self.kind == "label":
            if not isinstance(value, str) or value not in self.labels:
                raise LabelError(f"{value!r} is not a label of {self.name!r}: answer one of "
                                 f"{', '.join(self.labels)}")
            return value
        if self.kind == "pairwise":
            text = value.upper() if isinstance(value, str) else value
            if text not in WINNERS:
                raise LabelError(f"{value!r} is not a winner for {self.name!r}: answer 'A', 'B' or 'TIE' (the "
                                 "candidates' original labels)")
            return text
        if not isinstance(value, str):
            raise LabelError(f"a note for {self.name!r} is text, not {type(value).__name__}")
        return value

    def choices(self) -> list[tuple[str, float | str]]:
        """(key, answer) pairs the keyboard offers: digits for scores and labels, a/b/t for pairs."""
        if self.kind == "score":
            assert self.scale is not None
            return [(str(level % 10), float(level)) for level in range(self.scale[0], self.scale[1] + 1)]
        if self.kind == "label":
            return [(str(k + 1), label) for k, label in enumerate(self.labels[:9])]
        if self.kind == "pairwise":
            return [("a", "A"), ("b", "B"), ("t", "TIE")]
        return []


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _from_rubric(rubric: Any) -> tuple[Question, ...]:
    spec = rubric.spec
    if spec.mode == "pairwise":
        return tuple(Question(c.name, "pairwise", text=c.definition) for c in spec.criteria)
    if spec.scale is None:
        raise LabelError(f"rubric {spec.name!r} has no score scale to ask about; pass questions as Question(...) or "
                         "mappings instead")
    out = []
    for c in spec.criteria:
        anchors = {int(k): " ".join(c.anchor_lines(k)) for k in c.anchors} or dict(spec.scale.anchors)
        out.append(Question(c.name, "score", scale=spec.scale.bounds, anchors=anchors, text=c.definition))
    return tuple(out)


def _from_mapping(entry: Mapping[str, Any]) -> Question:
    known = {"name", "kind", "scale", "anchors", "labels", "text"}
    unknown = sorted(set(map(str, entry)) - known)
    if unknown:
        raise LabelError(f"question {entry.get('name', '?')!r} has unknown key(s) {unknown}; known: "
                         f"{', '.join(sorted(known))}")
    scale = entry.get("scale")
    if isinstance(scale, int) and not isinstance(scale, bool):
        scale = (1, scale)
    try:
        anchors = {int(k): str(v) for k, v in dict(entry.get("anchors") or {}).items()}
    except (TypeError, ValueError) as exc:
        raise LabelError(f"the anchors of question {entry.get('name', '?')!r} must map integer levels to texts") \
            from exc
    labels = entry.get("labels") or ()
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise LabelError(f"the labels of question {entry.get('name', '?')!r} must be a list of texts")
    return Question(entry.get("name", ""), entry.get("kind", "score"),
                    tuple(scale) if isinstance(scale, Sequence) else scale, anchors,
                    tuple(str(v) for v in labels), str(entry.get("text", "")))


def read_questions(questions: Any) -> tuple[Question, ...]:
    """A rubric, a :class:`Question`, a mapping, or a sequence of questions/mappings, as a tuple of questions."""
    if hasattr(questions, "spec") and hasattr(questions.spec, "criteria"):
        out = _from_rubric(questions)
    elif isinstance(questions, Question):
        out = (questions,)
    elif isinstance(questions, Mapping):
        out = (_from_mapping(questions),)
    elif isinstance(questions, Sequence) and not isinstance(questions, str) and len(questions):
        out = tuple(q if isinstance(q, Question) else _from_mapping(q) if isinstance(q, Mapping) else _bad(q)
                    for q in questions)
    else:
        out = _bad(questions)
    names = [q.name for q in out]
    if len(set(names)) != len(names):
        raise LabelError(f"question names repeat ({names}); give each question its own name")
    return out


def _bad(value: Any) -> Any:
    raise LabelError(f"questions must be a rubric, a Question, a mapping or a list of them, not "
                     f"{type(value).__name__}")
