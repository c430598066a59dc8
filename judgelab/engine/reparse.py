"""Re-apply a (changed) parser to the raw outputs already in a judgments table: no model calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.engine.items import read_items
from judgelab.engine.rows import read_reply, scored_rows, unscored_rows
from judgelab.errors import JudgelabError
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, Rubric

__all__ = ["ReparseError", "reparse"]


class ReparseError(JudgelabError, ValueError):
    """The table's rows cannot be matched to the rubric's requests (other items, or the prompt changed)."""


_CALL_FIELDS = ("run_id", "item_id", "rubric", "rubric_version", "judge", "condition", "repeat", "temperature",
                "seed", "prompt_hash", "call_id", "raw_output", "input_tokens", "output_tokens", "cost_usd",
                "latency_s", "cached", "attempts", "system_fingerprint", "created_at", "reasoning", "reasoning_tokens")


def _request_for(group: pd.DataFrame, rubric: Rubric, items: dict[str, dict[str, Any]] | None) -> JudgeRequest:
    first = group.iloc[0]
    swapped = bool(judgments.detail(first).get("swapped", False))
    keys = tuple(RowKey(str(r.criterion), None if pd.isna(r.side) else str(r.side),
                        None if pd.isna(getattr(r, "turn", pd.NA)) else int(r.turn)) for r in group.itertuples())
    if items is not None:
        item = items.get(str(first["item_id"]))
        if item is None:
            raise ReparseError(f"item {first['item_id']!r} of the table is not among the items given to reparse")
        for req in rubric.requests(item, swapped=swapped):
            if req.prompt_hash() == first["prompt_hash"]:
                return req
        raise ReparseError(
            f"no request of rubric {rubric.name!r} for item {first['item_id']!r} renders the prompt that produced "
            "this row (the prompt changed); rerun instead of reparsing"
        )
    return JudgeRequest(messages=[], expected_rows=keys, swapped=swapped)


def reparse(table: pd.DataFrame, rubric: Rubric | str | Path, items: Any = None, **rubric_params: Any) -> pd.DataFrame:
    """A new judgments table with every raw output parsed again by ``rubric``.

    ``rubric`` is a rubric object, or a built-in name / YAML path loaded with ``rubric_params``
    (as :func:`judgelab.run` takes it). Rows whose call produced no raw output (api_error,
    skipped_budget) or an unreadable reply (no answer in it) are kept unchanged; whatever the parser
    raises on a raw output becomes a ``parse_error`` row naming the exception's class. Pass ``items``
    when the rubric's parser needs item values (e.g. expected sets, feature flags).
    """
    if isinstance(rubric, str | Path):
        from judgelab.rubrics import load_rubric

        rubric = load_rubric(rubric, **rubric_params)
    elif rubric_params:
        raise TypeError(f"rubric parameters {sorted(rubric_params)} apply only when the rubric is given by name")
    table = judgments.validate(table)
    item_map = None
    if items is not None:
        df = read_items(items)
        item_map = {str(r["item_id"]): r for r in df.to_dict(orient="records")}
    out: list[dict[str, Any]] = []
    for _, group in table.groupby("call_id", sort=False, dropna=False):
        first = group.iloc[0]
        old_detail = judgments.detail(first)
        if pd.isna(first["raw_output"]) or old_detail.get("unreadable_reply"):
            # no call output, or a reply that held no answer (its raw_output is the reply as received): as it is
            out.extend(group.to_dict(orient="records"))
            continue
        base = {f: first[f] for f in _CALL_FIELDS}
        request = _request_for(group, rubric, item_map)
        keep = {k: old_detail[k] for k in ("swapped", "earlier_raw_outputs", "failed_attempts", "reply_notes") if k in old_detail}
        try:
            parsed = read_reply(rubric, str(first["raw_output"]), request)
        except ParseFailure as failure:
            out.extend(unscored_rows(base, request, failure.status, failure.reason, keep))
            continue
        # a logprob-weighted score came from the call's token logprobs, not from the text: keep it
        logprob = {(r.criterion, None if pd.isna(r.side) else r.side): (r.logprob_score, r.valid_prob_mass)
                   for r in group.itertuples()}

        def kept_logprob(p: ParsedRow, logprob: dict[Any, Any] = logprob) -> dict[str, Any]:
            score, mass = logprob.get((p.key.criterion, p.key.side), (None, None))
            return {"logprob_score": score, "valid_prob_mass": mass}

        out.extend(scored_rows(base, request, parsed, keep, kept_logprob))
    return judgments.make_table(out)
