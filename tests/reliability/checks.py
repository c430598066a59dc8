"""Exact checks of a finished run against the fault server's plan, its request log and the oracle."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pandas as pd
import pytest

from judgelab import judgments
from tests.reliability.helpers import CRITERIA
from tests.reliability.oracle import Expected, expected_outcome
from tests.support.fault_server import CONTENT_KINDS, RETRYABLE_KINDS, FaultPlan, FaultServer, stable_score

BILLED_KINDS = (*CONTENT_KINDS, "ok")  # requests that got an HTTP 200 with a usage block


def assert_run_matches_plan(table: pd.DataFrame, summary: Mapping[str, Any], srv: FaultServer, plan: FaultPlan,
                            ids: list[str], *, max_retries: int, max_reasks: int = 1,
                            price_per_answer: float | None = None) -> dict[str, Expected]:
    """Every item's rows, reasons, attempts and scores; the summary line; the server's log: all exact.

    ``summary`` is RunStats.summary() or the CLI's JSON line; ``price_per_answer`` (USD per billed request)
    checks the cost, None checks that the cost is reported unknown."""
    t = judgments.validate(table)  # schema, unscored rows unscored with a reason, no duplicate keys
    expected = {i: expected_outcome(lambda n, i=i: plan.kind(i, n), max_retries, max_reasks) for i in ids}
    assert len(t) == len(ids) * len(CRITERIA)
    assert Counter(t["item_id"]) == {i: len(CRITERIA) for i in ids}  # no item lost, none duplicated
    log = srv.by_key()
    for item_id, rows in t.groupby("item_id"):
        exp = expected[item_id]
        assert sorted(rows["criterion"]) == sorted(CRITERIA)
        assert set(rows["status"]) == {exp.status}, (item_id, exp, rows["unscored_reason"].tolist())
        for reason in rows["unscored_reason"]:
            assert exp.reason_ok(None if pd.isna(reason) else reason), (item_id, exp, reason)
        assert set(rows["attempts"]) == {exp.calls}
        assert [inj.kind for inj in log[item_id]] == [plan.kind(item_id, n) for n in range(exp.calls)]
        if exp.status == "ok":
            by_crit = dict(zip(rows["criterion"], rows["score"], strict=True))
            assert by_crit["factual_accuracy"] == stable_score(f"{item_id}:factual_accuracy")
            assert by_crit["instruction_following"] == stable_score(f"{item_id}:instruction_following")
        else:
            assert rows["score"].isna().all()
    truth = srv.kind_counts()
    assert summary["items"] == len(ids) and summary["judgments"] == len(t)
    assert summary["api_calls"] == srv.count == sum(e.calls for e in expected.values())
    assert summary["retries"] == sum(e.retries for e in expected.values())
    # every injected retryable fault was retried, except the last one of each exhausted request
    exhausted = sum(e.status == "api_error" and e.final_kind in RETRYABLE_KINDS for e in expected.values())
    assert summary["retries"] == sum(truth[k] for k in RETRYABLE_KINDS) - exhausted
    assert summary["ok"] == (t["status"] == "ok").sum() == len(CRITERIA) * sum(
        e.status == "ok" for e in expected.values())
    assert summary["unscored"] == len(t) - summary["ok"] and summary["cache_hits"] == 0
    # tokens and cost: every answered request billed once, failed ones never, none twice
    billed = sum(truth[k] for k in BILLED_KINDS)
    assert t.drop_duplicates("call_id")["input_tokens"].fillna(0).sum() == srv.usage[0] * billed
    if price_per_answer is None:
        assert summary["cost_usd"] is None
    else:
        assert summary["cost_usd"] == pytest.approx(billed * price_per_answer, abs=1e-8)
    return expected
