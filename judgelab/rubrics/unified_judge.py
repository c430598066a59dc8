"""Seed 001: the Unified Judge Template v2.0 with library-computed correctness and verdict.

Rows: correctness, rule_compliance, reasoning_quality (section points) and "overall"
(score = total after the seed's cap, verdict PASS/FAIL).

Correctness is computed from the item whenever possible: extraction F1 over the output and
expected sets, classification EXACT/PARTIAL/NONE by label comparison (PARTIAL = hierarchical
``category/sub`` labels sharing the category), boolean by comparing parsed booleans. Only when a
boolean item's values are not booleans does the judge's ``match`` decide (detail says so).
Rule compliance = 10 x compliant rules; reasoning = the sum of its three sub-scores. Judge-stated
section scores, total and verdict go into detail with any mismatch under "disagreements".
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from judgelab.rubrics import parsing
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey
from judgelab.rubrics.spec import RubricSpecError
from judgelab.rubrics.spec_rubric import SpecRubric, item_text

__all__ = [
    "CLASSIFICATION_POINTS", "MODULE_TYPES", "REASONING_PARTS", "as_item_bool", "as_item_set",
    "classification_match", "extraction_credit_band", "extraction_f1", "unified_verdict",
    "UnifiedJudgeRubric",
]


# ---------------------------------------------------------------- the verdict rules
def extraction_f1(output: Iterable[str], expected: Iterable[str]) -> dict[str, float]:
    """Set precision, recall and F1 of extracted items (case- and space-normalised).

    Conventions for empty sets (the seed leaves them open): both empty -> P = R = F1 = 1
    (nothing to extract, nothing extracted); output empty, expected not -> P = R = F1 = 0;
    output non-empty, expected empty -> P = 0, R = 1, F1 = 0.
    """
    out = {_norm(x) for x in output if _norm(x)}
    exp = {_norm(x) for x in expected if _norm(x)}
    if not out and not exp:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0, "n_output": 0, "n_expected": 0, "n_overlap": 0}
    overlap = len(out & exp)
    precision = overlap / len(out) if out else 0.0
    recall = overlap / len(exp) if exp else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "n_output": len(out),
        "n_expected": len(exp),
        "n_overlap": overlap,
    }


def _norm(x: Any) -> str:
    return " ".join(str(x).casefold().split())


def extraction_credit_band(f1: float) -> str:
    """The seed's F1 bands: >= 0.8 full, >= 0.5 partial, else low (reported, score is F1 x 40)."""
    return "full" if f1 >= 0.8 else "partial" if f1 >= 0.5 else "low"


def classification_match(output: str, expected: str, separators: str = "/:>") -> str:
    """EXACT when labels are equal (case-insensitive); PARTIAL when hierarchical labels
    (``category/sub``) share the category but not the sub-label; NONE otherwise."""
    o, e = _norm(output), _norm(expected)
    if o == e:
        return "EXACT"
    cat_o, cat_e = _category(o, separators), _category(e, separators)
    if cat_o is not None and cat_o == cat_e:
        return "PARTIAL"
    return "NONE"


def _category(label: str, separators: str) -> str | None:
    for sep in separators:
        if sep in label:
            return label.split(sep, 1)[0].strip()
    return None


CLASSIFICATION_POINTS = {"EXACT": 40, "PARTIAL": 20, "NONE": 0}


def unified_verdict(correctness: float, rule_compliance: float, reasoning: float) -> tuple[str, float, str]:
    """Seed 001's ``calculate_verdict``, verbatim: (verdict, total, reason)."""
    total = correctness + rule_compliance + reasoning
    if correctness == 0:
        return "FAIL", min(total, 60), "Incorrect output"
    if total >= 70:
        return "PASS", total, "Meets threshold"
    return "FAIL", total, "Below threshold"


MODULE_TYPES = ("boolean", "classification", "extraction")
REASONING_PARTS = {"chain_of_thought": 8, "evidence_usage": 8, "confidence_calibration": 4}
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def as_item_set(value: Any) -> list[str]:
    """An extraction output/expected value as a list: a list, a JSON list string, or lines/commas."""
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy arrays from Parquet list columns
        value = value.tolist()
    if isinstance(value, list | tuple | set):
        return [str(v) for v in value]
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = json.loads(text)
                if isinstance(parsed, list):
                    return [str(v) for v in parsed]
            except json.JSONDecodeError:
                pass
        parts = re.split(r"\n|,|;", text)
        return [p.strip().lstrip("-*• ").strip() for p in parts if p.strip()]
    return [] if value is None else [str(value)]


def as_item_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


class UnifiedJudgeRubric(SpecRubric):
    kind = "unified_judge"
    code_version = "1"

    def validate_options(self) -> None:
        opts = self.spec.options
        types = opts.get("module_types", {})
        modules = opts.get("modules", {})
        self.module_type: dict[str, str] = {}
        for t, names in types.items():
            if t not in MODULE_TYPES:
                raise RubricSpecError(f"rubric {self.name!r}: options.module_types has unknown type {t!r}")
            for m in names:
                if m in self.module_type:
                    raise RubricSpecError(f"rubric {self.name!r}: module {m} is listed under two types")
                self.module_type[m] = t
        for m, spec in modules.items():
            if m not in self.module_type:
                raise RubricSpecError(f"rubric {self.name!r}: module {m} has rules but no type in options.module_types")
            if len(spec.get("rules", [])) != 4:
                raise RubricSpecError(f"rubric {self.name!r}: module {m} must have exactly 4 rules")

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        module = str(item.get("module", "")).strip()
        if module not in self.spec.options.get("modules", {}):
            raise ValueError(f"item {item.get('item_id', '?')!r}: unknown module {module!r}; "
                             f"known: {', '.join(self.spec.options['modules'])}")
        mtype = self.module_type[module]
        mspec = self.spec.options["modules"][module]
        correctness = self.library_correctness(mtype, item.get("output"), item.get("expected"))
        context = {
            "module": module,
            "module_title": mspec["title"],
            "module_type": mtype,
            "rules": mspec["rules"],
            "input": item_text(item, "input"),
            "output": item_text(item, "output"),
            "expected": item_text(item, "expected"),
            "reasoning": item_text(item, "reasoning"),
        }
        keys = (RowKey("correctness"), RowKey("rule_compliance"), RowKey("reasoning_quality"), RowKey("overall"))
        meta = {"module": module, "module_type": mtype, "rules": [r["name"] for r in mspec["rules"]],
                "correctness": correctness}
        request = self.make_request(context, keys, meta=meta)
        return [replace(request, response_format=_with_rules(request.response_format, meta["rules"]))]

    @staticmethod
    def library_correctness(mtype: str, output: Any, expected: Any) -> dict[str, Any]:
        """Correctness points computed from the item (points None when only the judge can tell)."""
        if mtype == "extraction":
            m = extraction_f1(as_item_set(output), as_item_set(expected))
            return {**m, "points": 40 * m["f1"], "band": extraction_credit_band(m["f1"])}
        if mtype == "classification":
            label = classification_match(str(output), str(expected))
            return {"match": label, "points": CLASSIFICATION_POINTS[label]}
        o, e = as_item_bool(output), as_item_bool(expected)
        if o is None or e is None:
            return {"match": None, "points": None, "note": "output/expected are not booleans; the judge's match is used"}
        return {"match": o == e, "points": 40 if o == e else 0}

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        obj = parsing.extract_json_object(raw)
        ev = parsing.require(obj, "evaluation")
        corr = parsing.require(ev, "correctness", "evaluation")
        rc = parsing.require(ev, "rule_compliance", "evaluation")
        rq = parsing.require(ev, "reasoning_quality", "evaluation")
        meta = request.meta
        disagreements: list[str] = []

        # Section 1: correctness -- the library's value; the judge's only for non-boolean boolean items
        computed = dict(meta["correctness"])
        stated_corr = parsing.as_number(parsing.require(corr, "score", "correctness"), 0, 40, "correctness.score")
        judge_match = parsing.require(corr, "match", "correctness")
        if computed["points"] is None:
            computed["points"] = 40 if parsing.as_bool(judge_match, "correctness.match") else 0
            computed["source"] = "judge"
        else:
            computed["source"] = "library"
        correctness = float(computed["points"])
        if abs(stated_corr - correctness) > 0.5:
            disagreements.append(f"stated correctness {stated_corr:g} but the library computes {correctness:g}")

        # Section 2: rule compliance, 10 per compliant rule
        rules = parsing.require(rc, "rules", "rule_compliance")
        if not isinstance(rules, list) or len(rules) != 4:
            raise ParseFailure(f"rule_compliance.rules must list the 4 rules, got {len(rules) if isinstance(rules, list) else 'no list'}")
        expected_names = meta["rules"]
        rule_rows = []
        for i, r in enumerate(rules):
            where = f"rule_compliance.rules[{i}]"
            compliant = parsing.as_bool(parsing.require(r, "compliant", where), f"{where}.compliant")
            name = str(r.get("name", ""))
            if _norm(name) != _norm(expected_names[i]) and not re.fullmatch(r"rule\s*\d", _norm(name)):
                disagreements.append(f"rule {i + 1} named {name!r}, expected {expected_names[i]!r}")
            rule_rows.append({"name": expected_names[i], "compliant": compliant, "evidence": r.get("evidence")})
        rule_points = 10.0 * sum(r["compliant"] for r in rule_rows)
        stated_rc = parsing.as_number(parsing.require(rc, "score", "rule_compliance"), 0, 40, "rule_compliance.score")
        if stated_rc != rule_points:
            disagreements.append(f"stated rule_compliance {stated_rc:g} but 10 x compliant rules = {rule_points:g}")

        # Section 3: reasoning = sum of its parts
        parts = {
            k: parsing.as_integer_score(parsing.require(rq, k, "reasoning_quality"), 0, hi, f"reasoning_quality.{k}")
            for k, hi in REASONING_PARTS.items()
        }
        reasoning = float(sum(parts.values()))
        stated_rq = parsing.as_number(parsing.require(rq, "score", "reasoning_quality"), 0, 20, "reasoning_quality.score")
        if stated_rq != reasoning:
            disagreements.append(f"stated reasoning_quality {stated_rq:g} but its parts sum to {reasoning:g}")

        verdict, total, reason = unified_verdict(correctness, rule_points, reasoning)
        stated_total = obj.get("total_score")
        stated_verdict = obj.get("verdict")
        if stated_total is not None and _num(stated_total) != total:
            disagreements.append(f"stated total_score {stated_total} but the library total is {total:g}")
        if stated_verdict is not None and str(stated_verdict).upper() != verdict:
            disagreements.append(f"stated verdict {stated_verdict} but the library verdict is {verdict}")
        return [
            ParsedRow(RowKey("correctness"), score=correctness,
                      detail={**computed, "stated_score": stated_corr, "judge_match": judge_match,
                              "details": corr.get("details")}),
            ParsedRow(RowKey("rule_compliance"), score=rule_points, detail={"rules": rule_rows, "stated_score": stated_rc}),
            ParsedRow(RowKey("reasoning_quality"), score=reasoning, detail={**parts, "stated_score": stated_rq}),
            ParsedRow(
                RowKey("overall"),
                score=float(total),
                verdict=verdict,
                detail={
                    "reason": reason,
                    "module": meta["module"],
                    "module_type": meta["module_type"],
                    "uncapped_total": correctness + rule_points + reasoning,
                    "stated_total": stated_total,
                    "stated_verdict": stated_verdict,
                    "summary": obj.get("summary"),
                    "improvement_suggestions": obj.get("improvement_suggestions"),
                    "disagreements": disagreements,
                },
            ),
        ]


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().replace("*", "").split())


def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _with_rules(response_format: dict[str, Any] | None, names: list[str]) -> dict[str, Any] | None:
    """The response format with its rule list tightened to this module's rules: exactly one entry per rule, named
    by one of them. The parser requires exactly these; a constrained decoder then writes them all."""
    schema = ((response_format or {}).get("json_schema") or {}).get("schema")
    try:
        rules = schema["properties"]["evaluation"]["properties"]["rule_compliance"]["properties"]["rules"]
        fields = rules["items"]["properties"]
    except (KeyError, TypeError):
        return response_format
    if "name" not in fields or not names:
        return response_format
    tightened = copy.deepcopy(response_format)
    rules = tightened["json_schema"]["schema"]["properties"]["evaluation"]["properties"]["rule_compliance"][
        "properties"]["rules"]
    rules.update(minItems=len(names), maxItems=len(names))
    rules["items"]["properties"]["name"] = {"type": "string", "enum": list(names)}
    return tightened
