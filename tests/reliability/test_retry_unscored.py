"""`judgelab run --retry-unscored`: a rerun asks again exactly the requests whose cached answer ended unscored.

A real CLI subprocess against the fault server on 127.0.0.1 (no provider is reachable here); the server's
request log is the ground truth for the call counts.
"""

from __future__ import annotations

from judgelab import judgments
from tests.reliability.helpers import CRITERIA, cli_env, direct_items, run_cli, summary_line, write_jsonl
from tests.support.fault_server import FaultPlan, FaultServer, direct_score_answer, tag_key

N_ITEMS = 12
REFUSED = {"q1", "q4", "q7"}  # these items' first run ends in refusals (every re-ask refused too)


def _args(srv: FaultServer, tmp_path, data, out: str, *extra: str) -> list[str]:
    return ["run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/stub-judge",
            "--api-base", srv.base_url, "--concurrency", "4", "--out", str(tmp_path / out),
            "--cache", str(tmp_path / "cache.sqlite"), *extra]


def test_retry_unscored_reasks_only_the_unscored_requests(tmp_path):
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(N_ITEMS))
    phase = {"refuse": True}

    def script(key: str, n: int) -> str:
        return "refusal" if phase["refuse"] and key in REFUSED else "ok"

    env = cli_env()
    with FaultServer(FaultPlan(script=script), answer=direct_score_answer, key_fn=tag_key()) as srv:
        first = run_cli(*_args(srv, tmp_path, data, "first"), env=env)
        assert first.returncode == 0, first.stderr
        s1 = summary_line(first.stdout)
        assert s1["unscored"] == len(REFUSED) * len(CRITERIA) and s1["ok"] == (N_ITEMS - len(REFUSED)) * len(CRITERIA)
        refused_keys = {i.key for i in srv.log if i.kind == "refusal"}
        assert refused_keys == REFUSED

        # the default: a rerun makes zero calls, the unscored rows come back from the cache
        before = srv.count
        plain = run_cli(*_args(srv, tmp_path, data, "plain"), env=env)
        assert plain.returncode == 0, plain.stderr
        assert srv.count == before and summary_line(plain.stdout)["api_calls"] == 0
        assert "retried_unscored" not in summary_line(plain.stdout)

        # asked for: exactly the refused requests go out again, once each (the server now answers them)
        phase["refuse"] = False
        retry = run_cli(*_args(srv, tmp_path, data, "retry", "--retry-unscored"), env=env)
        assert retry.returncode == 0, retry.stderr
        new = srv.log[before:]
        assert sorted(i.key for i in new) == sorted(REFUSED)
        s2 = summary_line(retry.stdout)
        assert s2["retried_unscored"] == len(REFUSED) == s2["api_calls"]
        assert s2["ok"] == N_ITEMS * len(CRITERIA) and s2["unscored"] == 0

        # the earlier raw outputs are kept in the new rows' detail
        table = judgments.load(tmp_path / "retry" / "judgments.parquet")
        retried = table[table["item_id"].isin(REFUSED)]
        assert judgments.is_scored(retried).all()
        assert retried["detail"].astype(str).str.contains("can't help").all()

        # and the retried answers are now cached: another --retry-unscored run makes no call
        again = run_cli(*_args(srv, tmp_path, data, "again", "--retry-unscored"), env=env)
        assert again.returncode == 0, again.stderr
        assert summary_line(again.stdout)["api_calls"] == 0 and summary_line(again.stdout)["retried_unscored"] == 0
