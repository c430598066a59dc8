"""Seed 003: reference-based scoring against a gold answer, verdict recomputed by the library.

Rows: correctness, completeness, style_fidelity (scores) and ("overall") carrying the verdict.
The degraded variant (``degraded=True``) has rows correctness and overall only.
Flags in detail (never failures): delta / decision_basis over the word limit, and
style_relevant=false with a style_fidelity other than the seed's default 5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judgelab.rubrics import parsing
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey
from judgelab.rubrics.spec import OutputSpec, RubricSpec, RubricSpecError, Templates, VerdictSpec
from judgelab.rubrics.spec_rubric import SpecRubric, item_text

__all__ = ["reference_verdict", "reference_verdict_degraded", "ReferenceGoldRubric"]


# ---------------------------------------------------------------- the verdict rules
def reference_verdict(correctness: int, completeness: int) -> str:
    """Seed 003: match if correctness = 5 and completeness >= 4; partial_match if both >= 3; else mismatch."""
    if correctness == 5 and completeness >= 4:
        return "match"
    if correctness >= 3 and completeness >= 3:
        return "partial_match"
    return "mismatch"


def reference_verdict_degraded(correctness: int) -> str:
    """Seed 003's degraded variant (one axis, two verdicts): match iff correctness = 5.

    The seed names only the two labels; 5 is the correctness condition of its full "match" rule.
    """
    return "match" if correctness == 5 else "mismatch"


class ReferenceGoldRubric(SpecRubric):
    kind = "reference_gold"
    code_version = "1"
    variant_keywords = SpecRubric.variant_keywords | {"justification"}
    extra_params = frozenset({"degraded"})

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        self.degraded = bool(params.get("degraded", False))
        if not self.degraded:
            return spec
        deg = spec.options.get("degraded")
        if not isinstance(deg, Mapping) or "template" not in deg:
            raise RubricSpecError(f"rubric {spec.name!r} has no options.degraded.template for degraded=True")
        return spec.model_copy(
            update={
                "version": f"{spec.version}+degraded",
                "criteria": [spec.criterion("correctness")],
                "templates": Templates(user=deg["template"]),
                "output": OutputSpec(format="json", description="correctness only; verdict match / mismatch",
                                     json_schema=deg.get("json_schema")),
                "verdict": VerdictSpec(rule=str(deg.get("rule", "match: correctness=5; else mismatch"))),
            }
        )

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        context = {f: item_text(item, f, conversations=True) for f in self.required_fields}
        keys = tuple(RowKey(c.name) for c in self.spec.criteria) + (RowKey("overall"),)
        return [self.make_request(context, keys, logprob_criterion="correctness" if self.degraded else None)]

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        obj = parsing.extract_json_object(raw)
        scores_obj = parsing.require(obj, "scores")
        if not isinstance(scores_obj, Mapping):
            raise ParseFailure("scores is not a JSON object")
        lo, hi = self.scale or (1, 5)
        scores = {
            c.name: parsing.as_integer_score(parsing.require(scores_obj, c.name, "scores"), lo, hi, f"scores.{c.name}")
            for c in self.spec.criteria
        }
        labels = ("match", "mismatch") if self.degraded else ("match", "partial_match", "mismatch")
        stated = parsing.as_choice(parsing.require(obj, "verdict"), labels, "verdict")
        delta = parsing.as_text(parsing.require(obj, "delta"), "delta")
        basis = parsing.as_text(parsing.require(obj, "decision_basis"), "decision_basis")
        flags: list[str] = []
        limit = int(self.spec.options.get("max_words", 30))
        for name, text in (("delta", delta), ("decision_basis", basis)):
            n = parsing.word_count(text)
            if n > limit:
                flags.append(f"{name} has {n} words (limit {limit})")
        detail: dict[str, Any] = {"delta": delta, "decision_basis": basis, "stated_verdict": stated}
        if self.degraded:
            verdict = reference_verdict_degraded(scores["correctness"])
        else:
            style_relevant = parsing.as_bool(parsing.require(obj, "style_relevant"), "style_relevant")
            detail["style_relevant"] = style_relevant
            if not style_relevant and scores["style_fidelity"] != 5:
                flags.append(f"style_relevant is false but style_fidelity={scores['style_fidelity']} (the rubric asks for 5 when style is not relevant)")
            verdict = reference_verdict(scores["correctness"], scores["completeness"])
        detail["disagreements"] = [] if stated == verdict else [f"stated verdict {stated} but the rule gives {verdict}"]
        detail["flags"] = flags
        rows = [ParsedRow(RowKey(name), score=float(s)) for name, s in scores.items()]
        rows.append(ParsedRow(RowKey("overall"), verdict=verdict, detail=detail))
        return rows
