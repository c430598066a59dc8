"""Tiny rubrics written for engine tests: they exercise the contract, not any seed rubric."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey


class ToyDirect:
    """Asks for {"score": 1-5}; one criterion 'quality'."""

    name, version, mode = "toy_direct", "1", "direct"
    required_fields = ("answer",)
    scale = (1, 5)
    default_temperature = 0.0

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        msgs = [{"role": "user", "content": f"Rate 1-5. Answer: {item['answer']}\nReply as JSON {{\"score\": n}}."}]
        return [JudgeRequest(msgs, (RowKey("quality"),), response_format={"type": "json_object"},
                             logprob_criterion="quality", max_tokens=20)]

    def parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        m = re.search(r"\{.*\}", raw, re.S)
        if not m:
            raise ParseFailure("no JSON object in the output")
        try:
            score = json.loads(m.group(0))["score"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ParseFailure("JSON lacks a 'score' field") from None
        if not isinstance(score, int) or not 1 <= score <= 5:
            raise ParseFailure(f"score {score!r} is not an integer in 1-5")
        return [ParsedRow(RowKey("quality"), score=float(score))]

    def fingerprint(self) -> str:
        return "toy_direct-1"


class ToyPairwise:
    """Asks which of two answers is better: reply 'A' or 'B'. Maps swapped answers back."""

    name, version, mode = "toy_pairwise", "1", "pairwise"
    required_fields = ("answer_a", "answer_b")
    scale = None
    default_temperature = 0.0

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        first, second = (item["answer_b"], item["answer_a"]) if swapped else (item["answer_a"], item["answer_b"])
        msgs = [{"role": "user", "content": f"First: {first}\nSecond: {second}\nWhich is better? Reply A or B."}]
        return [JudgeRequest(msgs, (RowKey("overall"),), swapped=swapped, max_tokens=5)]

    def parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        shown = raw.strip().upper()[:1]
        if shown not in ("A", "B"):
            raise ParseFailure(f"expected A or B, got {raw.strip()[:20]!r}")
        winner = {"A": "B", "B": "A"}[shown] if request.swapped else shown
        return [ParsedRow(RowKey("overall"), winner=winner, detail={"shown_winner": shown})]

    def fingerprint(self) -> str:
        return "toy_pairwise-1"
