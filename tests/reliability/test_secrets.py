"""A planted API key never reaches the cache, the judgments table, logs, stderr or error messages.

The fault server (no provider is reachable here) echoes the Authorization header it received in
its error messages, as careless providers do, so the key arrives back inside exceptions. Every
file the run writes is searched: raw bytes, and Parquet cell by cell (its pages may be compressed).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd
import pytest

import judgelab
from judgelab.engine.runner import RunAborted
from tests.reliability.helpers import cli_env, direct_items, run_cli, summary_line, write_jsonl
from tests.support.fault_server import FaultPlan, FaultServer, direct_score_answer, tag_key

API_KEY = "sk-PLANTED-7f3a9c1e5b2d4f60a8c7e9b1d3f5a7c9"
TELLTALES = (API_KEY, API_KEY[3:], API_KEY[-16:])  # the whole key, and enough of it to be a leak

FAULTS = {"q0": ["rate_limit", "ok"], "q1": ["http_500", "http_500", "ok"], "q2": ["context_exceeded"],
          "q3": ["rate_limit_retry_after", "ok"], "q4": ["http_503", "http_503", "http_503"]}


def _leaks(text: str) -> list[str]:
    return [t for t in TELLTALES if t in text]


def _assert_no_key_in_files(root: Path) -> list[Path]:
    files = [p for p in root.rglob("*") if p.is_file()]
    for path in files:
        blob = path.read_bytes()
        assert not [t for t in TELLTALES if t.encode() in blob], path
        if path.suffix == ".parquet":  # compressed pages: search the decoded cells too
            cells = [str(v) for v in pd.read_parquet(path).to_numpy().ravel()]
            assert not [c for c in cells if _leaks(c)], path
    return files


def test_api_key_given_to_the_python_api_is_never_written_or_logged(tmp_path, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    items = direct_items(6)
    with FaultServer(FaultPlan(script=FAULTS), answer=direct_score_answer, key_fn=tag_key(), echo_auth=True) as srv:
        res = judgelab.run(items, "direct_score", "openai/stub-judge", api_base=srv.base_url, api_key=API_KEY,
                           cache=tmp_path / "cache.sqlite", max_retries=2, retry_base_s=0.01, progress=True,
                           return_stats=True)
        assert {h.get("authorization") for h in srv.headers} == {f"Bearer {API_KEY}"}  # the key was used
        srv.plan.script = lambda key, n: "unauthorized"  # a 401 that quotes the key back
        with pytest.raises(RunAborted) as aborted:
            judgelab.run(direct_items(3, prefix="z"), "direct_score", "openai/stub-judge", api_base=srv.base_url,
                         api_key=API_KEY, cache=tmp_path / "cache.sqlite", concurrency=1, progress=False,
                         max_retries=0)
    t = res.table
    assert set(t.loc[t["item_id"] == "q2", "status"]) == {"api_error"}  # the key came back in these messages...
    assert t["unscored_reason"].dropna().str.contains("you sent Bearer").any()
    # ...and was masked everywhere
    judgelab.save(t, tmp_path / "out" / "judgments.parquet")
    judgelab.save(t, tmp_path / "out" / "judgments.jsonl")
    judgelab.save(aborted.value.result.table, tmp_path / "out" / "aborted.parquet")
    written = _assert_no_key_in_files(tmp_path)
    assert {p.name for p in written} >= {"cache.sqlite", "judgments.parquet", "judgments.jsonl", "aborted.parquet"}
    assert not _leaks(str(aborted.value)) and not _leaks(repr(res.stats))
    assert not _leaks(aborted.value.result.table.to_csv()) and not _leaks(t.to_csv())
    out, err = capfd.readouterr()
    assert not _leaks(out + err)
    assert not _leaks("\n".join(r.getMessage() for r in caplog.records))


def test_api_key_from_env_is_never_written_by_the_cli(tmp_path):
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(6))
    env = cli_env(JUDGE_KEY_UNDER_TEST=API_KEY)
    common = ["--rubric", "direct_score", "--data", str(data), "--model", "openai/stub-judge",
              "--api-key-env", "JUDGE_KEY_UNDER_TEST", "--cache", str(tmp_path / "cache.sqlite"), "--max-retries", "2"]
    with FaultServer(FaultPlan(script=FAULTS), answer=direct_score_answer, key_fn=tag_key(), echo_auth=True) as srv:
        ok = run_cli("run", *common, "--api-base", srv.base_url, "--out", str(tmp_path / "out"), env=env)
        srv.plan.script = lambda key, n: "unauthorized"
        data2 = write_jsonl(tmp_path / "other.jsonl", direct_items(3, prefix="z"))
        bad = run_cli("run", *common[:2], "--data", str(data2), *common[4:], "--api-base", srv.base_url,
                      "--out", str(tmp_path / "out401"), env=env)
        assert {h.get("authorization") for h in srv.headers} == {f"Bearer {API_KEY}"}
    assert ok.returncode == 0, ok.stderr
    summary = summary_line(ok.stdout)
    assert summary["judgments"] == 18 and summary["retries"] == 6  # q0 1, q1 2, q3 1, q4 2 (then exhausted)
    assert bad.returncode == 1 and "authentication failed" in bad.stderr and "Traceback" not in bad.stderr
    for proc in (ok, bad):
        assert not _leaks(proc.stdout + proc.stderr)
    written = _assert_no_key_in_files(tmp_path)
    names = {str(p.relative_to(tmp_path)) for p in written}
    assert {"out/judgments.parquet", "out/judgments.jsonl", "out/run.json", "out401/run.json"} <= names
    t = judgelab.load(tmp_path / "out" / "judgments.parquet")
    assert t["unscored_reason"].dropna().str.contains("you sent Bearer ").any()  # masked, not dropped
