"""MT-Bench's judges (Zheng et al. 2023) with their released prompts: single-answer grading and pairwise comparison
of turn 1 and of turn 2 of a two-turn conversation, with and without a reference answer.

The prompts are the release's (``builtin/mt_bench_*.j2``, Apache-2.0, from FastChat's ``judge_prompts.jsonl``
at the pinned commit); FastChat's rule picks the variant: a question of a category in
:data:`judgelab.datasets.mtbench.NEED_REFERENCE` (math, reasoning, coding) is judged against its reference
answers (``reference=True`` / ``False`` forces one or the other). Each judgment targets one turn, so each
row carries it in the table's ``turn`` column; ``turns=(1,)`` or ``(2,)`` asks for one of them only.

Verdicts: ``[[rating]]`` on 1-10 (a decimal such as ``[[8.5]]`` is read, as FastChat reads it) and
``[[A]]`` / ``[[B]]`` / ``[[C]]`` (C is a tie), read by :mod:`judgelab.rubrics.verdict_text`; a pairwise
verdict seen in swapped order is stored in the original labels.

The released layout delimits answers with lines such as ``[The End of Assistant's Answer]`` and
``### User:``; a conversation's text that contains one of those delimiters has it escaped with a backslash
(``\\[The End of ...``), so no answer can end its block or forge a turn. Any other text is sent as released.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from judgelab.conversations.messages import ConversationError, check_messages, message_text_parts
from judgelab.rubrics import verdict_text
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, swap_label
from judgelab.rubrics.spec import RubricSpec, RubricSpecError
from judgelab.rubrics.spec_rubric import SpecRubric, is_missing

__all__ = ["NEED_REFERENCE", "MTBenchRubric", "escape_released", "turn_texts"]

NEED_REFERENCE: tuple[str, ...] = ("math", "reasoning", "coding")  # FastChat's NEED_REF_CATS
_DELIMITERS = re.compile(r"\[(?=The (?:Start|End) of )|<\|(?=The (?:Start|End) of )|"
                         r"^(?=[ \t]*### (?:User|Assistant|Reference answer)\b)", re.MULTILINE | re.IGNORECASE)


def escape_released(text: str) -> str:
    """``text`` with the release's delimiters (``[The Start/End of ...``, ``<|The Start/End of ...``, a ``### User:``
    / ``### Assistant`` / ``### Reference answer:`` line) escaped with a backslash; other text unchanged."""
    return _DELIMITERS.sub(lambda m: "\\" + m.group(0), text)


def turn_texts(messages: Any, *, item_id: Any, field: str) -> tuple[list[str], list[str]]:
    """The user questions and the assistant's answer to each (its last assistant message in the turn)."""
    checked = check_messages(messages, item_id=item_id, field=field)
    questions: list[str] = []
    answers: list[str] = []
    for m in checked:
        text = "\n".join(message_text_parts(m.get("content")))
        if m["role"] == "user":
            questions.append(text)
            answers.append("")
        elif m["role"] == "assistant" and questions:
            answers[-1] = text
    return questions, answers


class MTBenchRubric(SpecRubric):
    """``mt_bench_single`` (mode direct, field ``conversation``) and ``mt_bench_pair`` (mode pairwise, fields
    ``conversation_a`` / ``conversation_b``); optional fields ``category`` and ``reference`` (the reference
    answers of the two turns)."""

    kind = "mt_bench"
    code_version = "1"
    output_formats = frozenset({"pattern"})
    extra_params = frozenset({"turns", "reference"})
    variant_keywords = frozenset({"system", "options"})

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        turns = params.get("turns", (1, 2))
        turns = (turns,) if isinstance(turns, int) else tuple(turns) if isinstance(turns, list | tuple) else None
        if not turns or any(isinstance(t, bool) or t not in (1, 2) for t in turns) or len(set(turns)) != len(turns):
            raise RubricSpecError(f"rubric {spec.name!r}: turns must be 1, 2 or (1, 2), not {params.get('turns')!r}")
        reference = params.get("reference", "auto")
        if reference not in ("auto", True, False):
            raise RubricSpecError(f"rubric {spec.name!r}: reference must be 'auto', True or False, not {reference!r}")
        self.turns: tuple[int, ...] = turns
        self.reference = reference
        return spec

    def validate_options(self) -> None:
        if self.spec.mode not in ("direct", "pairwise"):
            raise RubricSpecError(f"rubric {self.spec.name!r}: kind 'mt_bench' runs mode direct or pairwise")

    def fingerprint_extra(self) -> Any:
        return {"turns": list(self.turns), "reference": self.reference}

    def _uses_reference(self, item: Mapping[str, Any]) -> bool:
        if self.reference != "auto":
            return bool(self.reference)
        category = item.get("category")
        return not is_missing(category) and str(category) in NEED_REFERENCE

    def _references(self, item: Mapping[str, Any]) -> list[str]:
        value = item.get("reference")
        if hasattr(value, "tolist") and not isinstance(value, str):
            value = value.tolist()
        if is_missing(value) or not isinstance(value, list | tuple) or len(value) < max(self.turns) or \
                not all(isinstance(v, str) for v in value):
            raise ConversationError(f"item {str(item.get('item_id'))!r} of category {item.get('category')!r} is judged "
                                  f"against reference answers, but its field 'reference' is not a list of "
                                  f"{max(self.turns)} texts (pass reference=False to judge without)")
        return [escape_released(v) for v in value]

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        with_reference = self._uses_reference(item)
        context: dict[str, Any] = {"with_reference": with_reference}
        if with_reference:
            refs = self._references(item)
            context.update({f"ref_answer_{k + 1}": r for k, r in enumerate(refs[:2])})
        if self.spec.mode == "pairwise":
            fields = ("conversation_b", "conversation_a") if swapped else ("conversation_a", "conversation_b")
            for label, field in zip("ab", fields, strict=True):
                questions, answers = self._texts(item, field)
                context.update({f"answer_{label}_{k + 1}": a for k, a in enumerate(answers)})
        else:
            questions, answers = self._texts(item, "conversation")
            context.update({f"answer_{k + 1}": a for k, a in enumerate(answers)})
        context.update({f"question_{k + 1}": q for k, q in enumerate(questions)})
        return [self.make_request({**context, "turn": turn}, (RowKey("overall", turn=turn),), swapped=swapped,
                                  meta={"turn": turn}) for turn in self.turns]

    def _texts(self, item: Mapping[str, Any], field: str) -> tuple[list[str], list[str]]:
        questions, answers = turn_texts(item.get(field), item_id=item.get("item_id"), field=field)
        if len(questions) < max(self.turns):
            raise ConversationError(f"item {str(item.get('item_id'))!r}, field {field!r}: the conversation has "
                                  f"{len(questions)} user turn(s); rubric {self.name!r} judges turn {max(self.turns)}")
        return [escape_released(q) for q in questions], [escape_released(a) for a in answers]

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        turn = int(request.meta["turn"])
        if self.spec.mode == "pairwise":
            found = verdict_text.read_winner(raw)
            if found.value not in ("A", "B", "TIE"):
                raise ParseFailure(f"verdict {found.value!r} is not [[A]], [[B]] or [[C]]")
            winner = swap_label(found.value) if request.swapped else found.value
            detail = {"verdict_text": found.matched, "rule": found.rule}
            return [ParsedRow(RowKey("overall", turn=turn), winner=winner, detail=detail)]
        lo, hi = self.scale or (1, 10)
        found = verdict_text.read_score(raw, (lo, hi), decimals=True, labels=("rating",))
        return [ParsedRow(RowKey("overall", turn=turn), score=float(found.value),
                          detail={"verdict_text": found.matched, "rule": found.rule})]
