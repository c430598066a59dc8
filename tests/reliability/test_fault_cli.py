"""`judgelab run` (a real subprocess) against the fault server: the ONE JSON summary line and the
written tables agree exactly with what the server injected (tests/reliability/oracle.py).

No provider is reachable here; the fault server stands in. The model is named openai/gpt-4o-mini,
a model litellm has a bundled price for, so the summary's cost can be checked exactly. The
"timeout" fault is left out: the CLI's client timeout is 120 s (it is covered by the API tests).
"""

from __future__ import annotations

import pandas as pd

from judgelab import judgments
from tests.reliability.checks import assert_run_matches_plan
from tests.reliability.helpers import CRITERIA, direct_items, run_cli, summary_line, write_jsonl
from tests.support.fault_server import FAULT_KINDS, FaultPlan, FaultServer, direct_score_answer, tag_key

GPT4O_MINI_PRICE = (0.15e-6, 0.6e-6)  # litellm's bundled USD per input / output token
USAGE = (50, 10)
MAX_RETRIES = 2
KINDS = [k for k in FAULT_KINDS if k not in ("timeout", "unauthorized")]


def _plan(items: list[dict]) -> FaultPlan:
    """Each kind once (recovers), each kind persistently (ends unscored), and a seeded 30% mix after that."""
    script: dict[str, list[str]] = {}
    for i, kind in enumerate(KINDS):
        script[f"q{i}"] = [kind]
        # persistent; connection faults get one empty answer first so an answer has been seen (see the API tests)
        lead = ["empty"] if kind in ("drop", "cut_body") else []
        script[f"q{len(KINDS) + i}"] = lead + [kind] * 10
    mixed = FaultPlan(mix={k: 0.3 / len(KINDS) for k in KINDS}, seed=5)
    return FaultPlan(script=lambda key, n: script[key][n] if key in script and n < len(script[key]) else (
        "ok" if key in script else mixed.kind(key, n)))


def test_cli_summary_and_tables_match_the_injected_faults_exactly(tmp_path):
    items = direct_items(2 * len(KINDS) + 30)
    data = write_jsonl(tmp_path / "items.jsonl", items)
    plan = _plan(items)
    with FaultServer(plan, answer=direct_score_answer, key_fn=tag_key(), usage=USAGE) as srv:
        proc = run_cli("run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/gpt-4o-mini",
                       "--api-base", srv.base_url, "--concurrency", "16", "--max-retries", str(MAX_RETRIES),
                       "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache.sqlite"))
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        summary = summary_line(proc.stdout)
        assert set(summary) == {"items", "judgments", "ok", "unscored", "api_calls", "cache_hits", "retries",
                                "cost_usd", "wall_s", "out"}
        assert summary["out"] == str(tmp_path / "out")
        table = judgments.load(tmp_path / "out" / "judgments.parquet")
        price = USAGE[0] * GPT4O_MINI_PRICE[0] + USAGE[1] * GPT4O_MINI_PRICE[1]
        expected = assert_run_matches_plan(table, summary, srv, plan, [it["item_id"] for it in items],
                                           max_retries=MAX_RETRIES, price_per_answer=price)
    # the JSONL export holds the same rows as the Parquet table
    exported = judgments.load(tmp_path / "out" / "judgments.jsonl")
    cols = ["item_id", "criterion", "status", "score", "unscored_reason", "attempts", "call_id"]
    pd.testing.assert_frame_equal(exported[cols], table[cols])
    statuses = {e.status for e in expected.values()}
    assert statuses == {"ok", "api_error", "parse_error", "refusal"}  # every way to end was exercised
    assert summary["judgments"] == len(items) * len(CRITERIA)
