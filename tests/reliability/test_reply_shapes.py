"""Every kind of reply in the chaos server's space, once each, through the Python API and real HTTP: each ends as
the rows its kind owes, every paid reply is in the cache, a rerun from the cache makes no call and gives the
same rows, and reparse never raises on what was stored.

The server (tests/support/chaos_server.py, 127.0.0.1) stands in for a provider: none is reachable here, and
none sends these replies on demand. The client side (litellm, the openai client, HTTP) is the real one.
"""

from __future__ import annotations

import sqlite3

import pandas as pd

import judgelab
from judgelab import judgments
from judgelab.engine.cache import RequestCache
from tests.reliability.chaos import MARKER, conflicting_verdicts_refused
from tests.reliability.helpers import CRITERIA
from tests.support.chaos_server import ChaosServer
from tests.support.reply_space import KINDS, PAID, ScriptedSpace

TIMEOUT_S = 3.0
MAX_RETRIES = 1


def _items(kinds: list[str]) -> list[dict[str, str]]:
    return [{"item_id": k, "prompt": f"Question about {k}?", "response": f"[item:{k}] An answer."} for k in kinds]


def _run(srv: ChaosServer, kinds: list[str], cache: RequestCache, **kw) -> judgelab.RunResult:
    return judgelab.run(_items(kinds), "direct_score", "openai/chaos-judge", api_base=srv.base_url, cache=cache,
                        progress=False, return_stats=True, timeout=TIMEOUT_S, max_retries=MAX_RETRIES,
                        retry_base_s=0.01, concurrency=16, **kw)


def test_every_reply_kind_ends_as_the_rows_it_owes_and_is_kept(tmp_path):
    """For each kind K (the same kind on every request of its conversation):
    - paid_valid: rows ok, with exactly the scores the reply held; paid_maybe: that, or unscored with a reason;
    - paid_invalid: unscored with a reason, never a score; a reply with no answer in it is a parse_error whose
      reason starts with "unreadable reply" and whose raw_output is the reply as received;
    - retry: api_error after max_retries + 1 attempts; reject: api_error after one attempt;
    - every paid reply's marker is in the cache; the summary adds up; a rerun from the cache makes no call and
      gives the same rows; reparse keeps every row count and raises nothing."""
    kinds = [k for k in KINDS if k != "conflicting_verdicts" or conflicting_verdicts_refused()]
    cache = RequestCache(tmp_path / "cache.sqlite")
    with ChaosServer(ScriptedSpace(TIMEOUT_S, {k: [k] * 8 for k in kinds})) as srv:
        first = _run(srv, kinds, cache)
        log = srv.served()
        paid_kinds = [k for k in kinds if next(s for s in log if s.key == k).label in PAID]
        again = _run(srv, paid_kinds, cache)
        assert srv.count == len(log)  # every paid answer came from the cache: nothing paid twice
    table = judgments.validate(first.table)
    assert len(table) == len(kinds) * len(CRITERIA)
    stats = first.stats
    assert stats.ok + stats.unscored == stats.judgments == len(table)
    by_key = {k: [s for s in log if s.key == k] for k in kinds}
    problems = []
    for kind, rows in table.groupby("item_id"):
        label = by_key[kind][0].label
        status = set(rows["status"])
        scores = dict(zip(rows["criterion"], rows["score"], strict=True))
        held = by_key[kind][0].scores
        if label == "paid_valid" and (status != {"ok"} or any(scores[c] != v for c, v in held.items())):
            problems.append((kind, label, status, rows["unscored_reason"].iloc[0]))
        if label == "paid_maybe" and status == {"ok"} and any(scores[c] != v for c, v in held.items()):
            problems.append((kind, label, "scored other values", scores))
        if label in ("paid_invalid", "retry", "reject") and "ok" in status:
            problems.append((kind, label, "scored", scores))
        if status != {"ok"} and rows["unscored_reason"].isna().any():
            problems.append((kind, label, "no reason"))
        attempts = set(rows["attempts"])
        if label == "retry" and (status != {"api_error"} or attempts != {MAX_RETRIES + 1}):
            problems.append((kind, label, status, attempts, rows["unscored_reason"].iloc[0]))
        if label == "reject" and (status != {"api_error"} or attempts != {1}):
            problems.append((kind, label, status, attempts))
        reason = str(rows["unscored_reason"].iloc[0])
        if reason.startswith("unreadable reply") and not (rows["status"] == "parse_error").all():
            problems.append((kind, "an unreadable reply that is not a parse_error"))
        if reason.startswith("unreadable reply") and by_key[kind][0].marker not in str(rows["raw_output"].iloc[0]):
            problems.append((kind, "an unreadable reply whose raw_output is not the reply received"))
    assert problems == []
    con = sqlite3.connect(tmp_path / "cache.sqlite")
    stored = set(MARKER.findall(" ".join(v for (v,) in con.execute("SELECT value FROM responses"))))
    con.close()
    paid = {s.marker for s in log if s.label in PAID and s.marker is not None}
    assert paid - stored == set()
    cols = ["item_id", "criterion", "status", "score", "unscored_reason"]
    pd.testing.assert_frame_equal(again.table[cols].reset_index(drop=True),
                                  first.table.loc[first.table["item_id"].isin(paid_kinds), cols].reset_index(drop=True))
    assert again.stats.api_calls == 0
    reparsed = judgelab.reparse(first.table, "direct_score")
    assert len(reparsed) == len(table)
    unreadable = table["unscored_reason"].fillna("").str.startswith("unreadable reply")
    kept = reparsed.set_index(["item_id", "criterion"]).loc[
        table.loc[unreadable].set_index(["item_id", "criterion"]).index]
    assert (kept["status"] == "parse_error").all()
    cache.close()
