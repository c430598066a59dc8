"""Seed 002's pairwise comparison, and its rule for consolidating two passes in swapped orders.

One call compares A and B per criterion and overall, with the seed's anti-bias instructions; the
overall winner and confidence are the judge's (the seed has no formula deriving them), mapped back
to original labels when the prompt was swapped. The library also computes a weighted per-criterion
vote (:func:`weighted_vote`) and flags a disagreement with the stated winner. Two passes (original +
swapped) are consolidated by :func:`combine_swapped_passes`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from judgelab.rubrics import parsing, verdict_text
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, swap_label
from judgelab.rubrics.spec import RubricSpec, RubricSpecError, apply_criteria_params
from judgelab.rubrics.spec_rubric import SpecRubric, item_text

__all__ = ["PairwiseRubric", "combine_swapped_passes", "weighted_vote"]


# ---------------------------------------------------------------- the verdict rules
def weighted_vote(winners: Mapping[str, str], weights: Mapping[str, float]) -> str:
    """Winner of a weighted per-criterion vote (TIE votes count for neither)."""
    a = sum(weights[c] for c, w in winners.items() if w == "A")
    b = sum(weights[c] for c, w in winners.items() if w == "B")
    if math.isclose(a, b):
        return "TIE"
    return "A" if a > b else "B"


def combine_swapped_passes(first: Any, second: Any) -> dict[str, Any]:
    """Seed 002's position-swap rule over two passes whose winners are in ORIGINAL labels.

    Passes agree -> that winner with the mean of the two confidences; passes disagree -> TIE with
    confidence 0.5. Each pass is a mapping or object with ``winner`` and ``confidence``.
    A pass with a missing winner (unscored) makes the result unscored: winner None.
    """
    w1, c1 = _winner_conf(first)
    w2, c2 = _winner_conf(second)
    result: dict[str, Any] = {"first_pass_winner": w1, "second_pass_winner": w2}
    if w1 is None or w2 is None:
        return {**result, "winner": None, "confidence": None, "consistent": None}
    if w1 == w2:
        conf = None if c1 is None or c2 is None else (c1 + c2) / 2
        return {**result, "winner": w1, "confidence": conf, "consistent": True}
    return {**result, "winner": "TIE", "confidence": 0.5, "consistent": False}


def _winner_conf(p: Any) -> tuple[str | None, float | None]:
    get = p.get if isinstance(p, Mapping) else lambda k: getattr(p, k, None)
    winner, conf = get("winner"), get("confidence")
    if winner is not None and winner not in ("A", "B", "TIE"):
        raise ValueError(f"winner {winner!r} must be 'A', 'B' or 'TIE' (original labels)")
    if conf is not None and (isinstance(conf, float) and math.isnan(conf)):
        conf = None
    return winner, None if conf is None else float(conf)


class PairwiseRubric(SpecRubric):
    kind = "pairwise"
    code_version = "1"
    variant_keywords = SpecRubric.variant_keywords | {"justification"}
    extra_params = frozenset({"criteria", "weights"})
    # "pattern": a free-text verdict read by verdict_text.read_winner ("[[A]]", "[[A>>B]]", "[[C]]" = tie,
    # "Output (a) is better", "Winner: B", a reply opening with the label); one criterion, no confidence.
    output_formats = frozenset({"json", "pattern"})

    def validate_options(self) -> None:
        if self.spec.output.format == "pattern" and len(self.spec.criteria) != 1:
            raise RubricSpecError(f"rubric {self.spec.name!r}: field 'output.format': a pairwise 'pattern' verdict "
                                  f"is one winner, so the rubric needs exactly one criterion, not "
                                  f"{len(self.spec.criteria)}")

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        return apply_criteria_params(spec, params)

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        field_a, field_b = self.candidate_fields
        context = {f: item_text(item, f, conversations=True)
                   for f in self.required_fields + tuple(self.spec.optional_fields)}
        shown_a, shown_b = (context[field_b], context[field_a]) if swapped else (context[field_a], context[field_b])
        keys = tuple(RowKey(c.name) for c in self.spec.criteria) + (RowKey("overall"),)
        return [self.make_request({"item": context, "response_a": shown_a, "response_b": shown_b}, keys,
                                  swapped=swapped)]

    def response_schema(self) -> dict[str, Any] | None:
        """The spec's schema with its per-criterion ``comparison`` list tightened to this rubric's criteria: one
        entry per criterion, named by one of them (as ``direct_score`` does for its scores). A constrained decoder
        then cannot write placeholder criterion names or an endless list; the parser still checks all of it."""
        schema = self.spec.output.json_schema
        entry = (schema or {}).get("properties", {}).get("comparison", {})
        fields = entry.get("items", {}).get("properties", {})
        if self.spec.output.format != "json" or "criterion" not in fields:
            return schema
        schema = copy.deepcopy(schema)
        entry = schema["properties"]["comparison"]
        n = len(self.spec.criteria)
        entry.update(minItems=n, maxItems=n)
        entry["items"]["properties"]["criterion"] = {"type": "string", "enum": [c.name for c in self.spec.criteria]}
        return schema

    def _parse_pattern(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        found = verdict_text.read_winner(raw)
        shown = str(found.value)
        winner = swap_label(shown) if request.swapped else shown
        detail = {"reasoning": parsing.answer_text(raw), "shown_winner": shown, "matched": found.matched,
                  "parse_rule": found.rule}
        return [ParsedRow(RowKey(self.spec.criteria[0].name), winner=winner, detail={"shown_winner": shown}),
                ParsedRow(RowKey("overall"), winner=winner, detail=detail)]

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        if self.spec.output.format == "pattern":
            return self._parse_pattern(raw, request)
        obj = parsing.extract_json_object(raw)
        comparison = parsing.require(obj, "comparison")
        if not isinstance(comparison, list):
            raise ParseFailure("comparison is not a list")
        by_name = parsing.match_criterion_entries(comparison, self.spec.criteria)

        def original(label: str) -> str:
            return swap_label(label) if request.swapped else label  # type: ignore[return-value]

        rows, winners = [], {}
        for c in self.spec.criteria:
            entry = by_name[c.name]
            where = f"comparison[{c.name}]"
            shown = parsing.as_choice(parsing.require(entry, "winner", where), ("A", "B", "TIE"), f"{where}.winner")
            winners[c.name] = original(shown)
            detail = {k: v for k, v in entry.items() if k not in {"criterion", "winner"}}
            detail["shown_winner"] = shown
            rows.append(ParsedRow(RowKey(c.name), winner=winners[c.name], detail=detail))
        shown_overall = parsing.as_choice(parsing.require(obj, "winner"), ("A", "B", "TIE"), "winner")
        confidence = parsing.as_number(parsing.require(obj, "confidence"), 0.0, 1.0, "confidence")
        winner = original(shown_overall)
        vote = weighted_vote(winners, {c.name: c.weight for c in self.spec.criteria})
        detail = {"reasoning": obj.get("reasoning"), "shown_winner": shown_overall, "criteria_vote_winner": vote,
                  "disagreements": []}
        if vote != winner:
            detail["disagreements"].append(f"stated winner {winner} differs from the weighted criterion vote {vote}")
        rows.append(ParsedRow(RowKey("overall"), winner=winner, confidence=confidence, detail=detail))
        return rows
