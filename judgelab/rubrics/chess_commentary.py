"""Seed 000: pairwise chess commentary, strict one-line CSV, library totals and tie-breaks.

Rows per call: (criterion, "A") and (criterion, "B") for the six criteria, ("overall", "A") and
("overall", "B") carrying the library totals, and ("overall", None) carrying the winner.

The hard rule, applied by the library (``apply_hard_rule``, default on) -- a conservative
keyword check: a candidate's claim counts as UNSUPPORTED only when
  * a claim keyword appears in a sentence without negation ("no", "not", "without", ...)
    and without hedging ("could", "might", "may", "if", "threat"...), and
  * the feature context states the matching flag explicitly as false (``check=no``); a flag that
    is missing or NA never triggers the rule (the seed: avoid strong claims, not punish them).
Then that candidate's Faithfulness is forced to 1 and ``detail["hard_rule"]`` records the claims.
Forced tactics and specific threats are left to the judge: no keyword list captures them safely.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from judgelab.rubrics import parsing
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, swap_label
from judgelab.rubrics.spec import RubricSpec
from judgelab.rubrics.spec_rubric import SpecRubric, item_text

__all__ = [
    "FLAG_NAMES", "HARD_RULE_CLAIMS", "chess_winner", "ChessCommentaryRubric", "context_flags",
    "PairwiseTotals", "unsupported_claims",
]


# ---------------------------------------------------------------- the verdict rule
@dataclass(frozen=True)
class PairwiseTotals:
    total_a: int
    total_b: int
    winner: str  # "A", "B" or "TIE"
    decided_by: str  # "total", or the tie-break criterion, or "tie"


def chess_winner(
    scores_a: Mapping[str, int], scores_b: Mapping[str, int], tie_break: Sequence[str]
) -> PairwiseTotals:
    """Seed 000: total = sum of the six criteria; higher total wins; tie-break cascade, else TIE."""
    if set(scores_a) != set(scores_b):
        raise ValueError("both candidates must be scored on the same criteria")
    total_a, total_b = sum(scores_a.values()), sum(scores_b.values())
    if total_a != total_b:
        return PairwiseTotals(total_a, total_b, "A" if total_a > total_b else "B", "total")
    for criterion in tie_break:
        if scores_a[criterion] != scores_b[criterion]:
            return PairwiseTotals(total_a, total_b, "A" if scores_a[criterion] > scores_b[criterion] else "B", criterion)
    return PairwiseTotals(total_a, total_b, "TIE", "tie")


# claim -> (pattern, flags that must ALL be explicitly false for the claim to be unsupported)
_PIECE = r"(?:pawn|knight|bishop|rook|queen|piece|exchange)s?"
_TARGET = rf"(?:on\s+)?(?:[a-h][1-8]\b|(?:the|a|an|his|her|their|white's|black's|its)\s+(?:\w+\s+)?{_PIECE}\b)"
HARD_RULE_CLAIMS: dict[str, tuple[re.Pattern[str], tuple[str, ...]]] = {
    "check": (re.compile(r"\bchecks?\b|\bchecking\b|\bin check\b", re.I), ("check", "checkmate")),
    "checkmate": (re.compile(r"\bcheck-?mates?\b|\bcheckmated\b|\bmates?\b|\bmated\b|\bmating\b", re.I),
                  ("checkmate", "mate_threat")),
    # "takes"/"took" only with a chess target ("takes on e5", "took the knight"): "takes space" is no capture
    "capture": (re.compile(rf"\bcaptur(?:e|es|ed|ing)\b|\b(?:takes|took|grabs|grabbed|snaps up)\s+{_TARGET}", re.I),
                ("capture",)),
    "trade": (re.compile(r"\btrad(?:e|es|ed|ing)\b(?!-off)|\bexchang(?:e|es|ed|ing)\b(?!\s+sac)", re.I),
              ("trade", "capture")),
    "promotion": (re.compile(r"\bpromot\w*\b|\bunderpromot\w*\b", re.I), ("promotion",)),
    "hanging_piece": (re.compile(r"\bhanging\b|\bhangs\b|\ben prise\b", re.I), ("hanging_piece",)),
}
FLAG_NAMES = ("check", "checkmate", "capture", "trade", "promotion", "hanging_piece", "mate_threat")
_NEGATION = re.compile(r"\b(no|not|without|never|nor|avoids?|avoiding|prevents?|stops?|none)\b|n't\b", re.I)
_HEDGE = re.compile(r"\b(could|might|may|would|if|threat\w*|possibl\w*|perhaps|maybe|potential\w*)\b", re.I)
_FLAG = re.compile(r"\b(" + "|".join(FLAG_NAMES) + r")\s*[=:]\s*(yes|no|true|false|na|n/a|unknown)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_FIELD = re.compile(r"^\s*(-?\d+)\s*$")


def context_flags(context: str, features: Mapping[str, Any] | None = None) -> dict[str, bool | None]:
    """Explicit true/false flags from a linearised feature context (or a features dict); else None."""
    flags: dict[str, bool | None] = dict.fromkeys(FLAG_NAMES)
    if features:
        for name in FLAG_NAMES:
            v = features.get(name)
            flags[name] = v if isinstance(v, bool) else None
        return flags
    for name, value in _FLAG.findall(context or ""):
        v = value.lower()
        flags[name.lower()] = True if v in {"yes", "true"} else False if v in {"no", "false"} else None
    return flags


def unsupported_claims(text: str, flags: Mapping[str, bool | None]) -> list[dict[str, str]]:
    """Claims in a candidate that the context explicitly contradicts (see module docstring)."""
    found = []
    for sentence in _SENTENCE.split(text or ""):
        if not sentence.strip() or _NEGATION.search(sentence) or _HEDGE.search(sentence):
            continue
        for claim, (pattern, needed_false) in HARD_RULE_CLAIMS.items():
            m = pattern.search(sentence)
            if m and all(flags.get(f) is False for f in needed_false):
                found.append({"claim": claim, "keyword": m.group(0), "sentence": sentence.strip()})
    return found


class ChessCommentaryRubric(SpecRubric):
    kind = "chess_commentary"
    code_version = "2"  # 2: capture/trade keywords need a chess target (no "takes space", "trade-off")
    extra_params = frozenset({"apply_hard_rule"})
    output_formats = frozenset({"csv_line"})

    def apply_params(self, spec: RubricSpec, params: Mapping[str, Any]) -> RubricSpec:
        if "apply_hard_rule" in params:
            return spec.model_copy(update={"options": {**spec.options, "apply_hard_rule": bool(params["apply_hard_rule"])}})
        return spec

    @property
    def criterion_names(self) -> list[str]:
        return [c.name for c in self.spec.criteria]

    def expected_rows(self) -> tuple[RowKey, ...]:
        keys = [RowKey(c, side) for side in ("A", "B") for c in self.criterion_names]
        return (*keys, RowKey("overall", "A"), RowKey("overall", "B"), RowKey("overall"))

    def requests(self, item: Mapping[str, Any], *, swapped: bool = False) -> list[JudgeRequest]:
        field_a, field_b = self.candidate_fields
        a, b = item_text(item, field_a), item_text(item, field_b)
        shown_a, shown_b = (b, a) if swapped else (a, b)
        context = item_text(item, "context")
        features = item.get("features") if isinstance(item.get("features"), Mapping) else None
        meta = {
            "candidates": {"A": a, "B": b},
            "flags": context_flags(context, features),
        }
        return [
            self.make_request(
                {"context": context, "candidate_a": shown_a, "candidate_b": shown_b},
                self.expected_rows(),
                swapped=swapped,
                meta=meta,
            )
        ]

    # ------------------------------------------------------------------ parsing
    def parse_line(self, raw: str) -> dict[str, Any]:
        """The judge's CSV line, strictly: returns shown-slot scores, stated totals and winner."""
        lines = [ln.strip().strip("`").strip() for ln in parsing.answer_text(raw).splitlines()]
        hits = sorted({ln for ln in lines if re.match(r"^WINNER\s*,", ln, re.I)})
        if not hits:
            raise ParseFailure("no line starting with 'WINNER,' in the output")
        if len(hits) > 1:
            raise ParseFailure(f"{len(hits)} different WINNER lines in the output")
        fields = [f.strip() for f in hits[0].split(",")]
        n = len(self.criterion_names)
        expected = 2 * n + 6
        if len(fields) != expected:
            raise ParseFailure(f"the WINNER line has {len(fields)} fields, expected {expected}")
        winner = fields[1].upper()
        if winner not in {"A", "B", "TIE"}:
            raise ParseFailure(f"winner field {fields[1]!r} is not A, B or TIE")
        out: dict[str, Any] = {"winner": winner}
        for slot, start in (("A", 2), ("B", n + 4)):
            if fields[start].upper() != slot:
                raise ParseFailure(f"field {start + 1} should be the label {slot!r}, got {fields[start]!r}")
            scores = {}
            for i, name in enumerate(self.criterion_names):
                scores[name] = self._int_field(fields[start + 1 + i], f"{slot} {name}", 1, 5)
            out[f"scores_{slot}"] = scores
            out[f"total_{slot}"] = self._int_field(fields[start + 1 + n], f"{slot}_TOTAL", None, None)
        return out

    @staticmethod
    def _int_field(text: str, name: str, low: int | None, high: int | None) -> int:
        m = _FIELD.match(text)
        if not m:
            raise ParseFailure(f"{name}={text!r} is not an integer")
        value = int(m.group(1))
        if low is not None and high is not None and not low <= value <= high:
            raise ParseFailure(f"{name}={value} is outside the scale {low}-{high}")
        return value

    def _parse(self, raw: str, request: JudgeRequest) -> list[ParsedRow]:
        shown = self.parse_line(raw)

        def original(slot: str) -> str:
            return swap_label(slot) if request.swapped else slot  # type: ignore[return-value]

        judge_scores = {original(s): dict(shown[f"scores_{s}"]) for s in ("A", "B")}
        stated_totals = {original(s): shown[f"total_{s}"] for s in ("A", "B")}
        stated_winner = original(shown["winner"]) if shown["winner"] != "TIE" else "TIE"
        tie_break = self.spec.verdict.tie_break
        disagreements = []
        for side in ("A", "B"):
            own_sum = sum(judge_scores[side].values())
            if stated_totals[side] != own_sum:
                disagreements.append(f"stated_total_{side}={stated_totals[side]} but its criteria sum to {own_sum}")
        from_judge_scores = chess_winner(judge_scores["A"], judge_scores["B"], tie_break)

        final = {side: dict(judge_scores[side]) for side in ("A", "B")}
        hard_rule: dict[str, list[dict[str, str]]] = {}
        if self.spec.options.get("apply_hard_rule", True):
            flags = request.meta.get("flags", {})
            for side in ("A", "B"):
                claims = unsupported_claims(request.meta.get("candidates", {}).get(side, ""), flags)
                if claims:
                    hard_rule[side] = claims
                    final[side]["faithfulness"] = 1
        result = chess_winner(final["A"], final["B"], tie_break)
        if stated_winner != result.winner:
            disagreements.append(f"stated_winner={stated_winner} but the library winner is {result.winner}")

        rows = []
        for side in ("A", "B"):
            for name in self.criterion_names:
                detail: dict[str, Any] = {}
                if name == "faithfulness" and side in hard_rule:
                    detail = {"hard_rule_applied": True, "judge_score": judge_scores[side][name],
                              "unsupported_claims": hard_rule[side]}
                rows.append(ParsedRow(RowKey(name, side), score=float(final[side][name]), detail=detail))
        totals = {"A": result.total_a, "B": result.total_b}
        for side in ("A", "B"):
            rows.append(ParsedRow(RowKey("overall", side), score=float(totals[side]),
                                  detail={"stated_total": stated_totals[side]}))
        rows.append(
            ParsedRow(
                RowKey("overall"),
                winner=result.winner,
                detail={
                    "decided_by": result.decided_by,
                    "total_A": result.total_a,
                    "total_B": result.total_b,
                    "stated_winner": stated_winner,
                    "stated_total_A": stated_totals["A"],
                    "stated_total_B": stated_totals["B"],
                    "winner_from_judge_scores": from_judge_scores.winner,
                    "hard_rule": hard_rule,
                    "shown_winner": shown["winner"],
                    "disagreements": disagreements,
                },
            )
        )
        return rows
