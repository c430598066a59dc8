"""`judgelab run` killed mid-run (SIGKILL, Ctrl-C) and rerun; two processes sharing one cache.

The model is the fault server (no provider is reachable here) answering after a fixed delay, so
that a run is still going when it is killed; the CLI runs as a real subprocess.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import judgelab.engine.cache
from judgelab import judgments
from judgelab.engine.cache import RequestCache
from tests.reliability.helpers import (
    CRITERIA,
    cli_command,
    cli_env,
    direct_items,
    run_cli,
    summary_line,
    write_jsonl,
)
from tests.support.fault_server import FaultServer, direct_score_answer, tag_key

N_ITEMS = 40


def _args(srv: FaultServer, tmp_path: Path, data: Path, out: str = "out") -> list[str]:
    return ["run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/stub-judge",
            "--api-base", srv.base_url, "--concurrency", "4", "--out", str(tmp_path / out),
            "--cache", str(tmp_path / "cache.sqlite")]


def _wait_for(predicate, timeout_s: float = 90.0) -> None:
    end = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError("the run did not get going in time")
        time.sleep(0.01)


def _cache_state(path: Path) -> tuple[str, str, int]:
    """(integrity_check, journal_mode, rows) of a cache file, read with plain sqlite3."""
    con = sqlite3.connect(path)
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        mode = con.execute("PRAGMA journal_mode").fetchone()[0]
        rows = con.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    finally:
        con.close()
    return integrity, mode, rows


def _assert_complete_table(out: Path, n_items: int) -> None:
    for name in ("judgments.parquet", "judgments.jsonl"):
        t = judgments.load(out / name)  # validates: schema, reasons, no duplicate row keys
        assert len(t) == n_items * len(CRITERIA) and (t["status"] == "ok").all()
        assert t.groupby("item_id").size().eq(len(CRITERIA)).all() and t["item_id"].nunique() == n_items


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_run_resumes_with_only_the_missing_calls(tmp_path, sig, default_sigint):
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(N_ITEMS))
    with FaultServer(answer=direct_score_answer, key_fn=tag_key(), delay_s=0.2) as srv:
        args = _args(srv, tmp_path, data)
        proc = subprocess.Popen(cli_command(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=cli_env())
        try:
            _wait_for(lambda: srv.count >= 12)
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        sent_before = srv.count
        assert sent_before < N_ITEMS  # it really was stopped midway
        if sig == signal.SIGINT:
            # Ctrl-C: a clean exit with one sentence, no traceback wall, no half summary on stdout
            assert proc.returncode == 130, stderr
            assert "Traceback" not in stderr and stdout == ""
            assert "interrupted" in stderr and "rerun the same command to resume" in stderr
        else:
            assert proc.returncode == -signal.SIGKILL
        integrity, mode, cached = _cache_state(tmp_path / "cache.sqlite")
        assert integrity == "ok" and mode == "wal"
        assert 0 < cached <= sent_before  # answers that arrived were kept; in-flight ones were not
        assert not (tmp_path / "out" / "judgments.parquet").exists()  # no partial table pretending to be whole

        rerun = run_cli(*args)
        assert rerun.returncode == 0, rerun.stderr
        summary = summary_line(rerun.stdout)
        new_calls = srv.count - sent_before
    # only the missing calls: every cached answer reused, every other item called exactly once
    assert summary["api_calls"] == new_calls == N_ITEMS - cached
    assert summary["cache_hits"] == cached and summary["items"] == N_ITEMS
    assert summary["judgments"] == summary["ok"] == N_ITEMS * len(CRITERIA)
    _assert_complete_table(tmp_path / "out", N_ITEMS)
    assert _cache_state(tmp_path / "cache.sqlite") == ("ok", "wal", N_ITEMS)


def test_two_processes_sharing_one_cache_make_each_call_once(tmp_path):
    items = direct_items(N_ITEMS)
    first = write_jsonl(tmp_path / "first.jsonl", items[:30])
    second = write_jsonl(tmp_path / "second.jsonl", items[10:])  # 20 items overlap
    with FaultServer(answer=direct_score_answer, key_fn=tag_key(), delay_s=0.05) as srv:
        procs = [subprocess.Popen(cli_command(*_args(srv, tmp_path, data, out=data.stem)), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=cli_env()) for data in (first, second)]
        outputs = [p.communicate(timeout=180) for p in procs]
        for p, (_, err) in zip(procs, outputs, strict=True):
            assert p.returncode == 0, err
            assert "Traceback" not in err and "locked" not in err
        sent = srv.count
        # no lost entries: a third run over all items makes no call at all
        third = run_cli(*_args(srv, tmp_path, write_jsonl(tmp_path / "all.jsonl", items), out="all"))
        assert third.returncode == 0, third.stderr
        assert srv.count == sent
    summaries = [summary_line(out) for out, _ in outputs]
    assert [s["ok"] for s in summaries] == [90, 90]
    # each request sent once over both processes: an overlapping item in flight in one is claimed in the
    # shared cache, and the other waits for its answer instead of calling
    assert sum(s["api_calls"] for s in summaries) == sent == N_ITEMS
    assert sorted(i.key for i in srv.log) == sorted(it["item_id"] for it in items)
    assert summary_line(third.stdout)["cache_hits"] == N_ITEMS
    _assert_complete_table(tmp_path / "all", N_ITEMS)
    assert _cache_state(tmp_path / "cache.sqlite") == ("ok", "wal", N_ITEMS)


# cache.py needs only the standard library: loaded by path, the writers skip importing litellm (seconds)
WRITER = textwrap.dedent("""
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location("judgelab_cache", sys.argv[4])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    cache = mod.RequestCache(sys.argv[1])
    tag, n = sys.argv[2], int(sys.argv[3])
    for i in range(n):
        cache.put(f"{tag}-{i}", {"text": f"{tag} answer {i}", "i": i})
        cache.put(f"shared-{i}", {"text": f"shared answer {i}", "i": i})  # both processes write these
        assert cache.get(f"{tag}-{i}") is not None
    cache.close()
""")


def test_concurrent_writers_lose_no_cache_entries(tmp_path):
    path = tmp_path / "shared.sqlite"
    n = 400
    module = Path(judgelab.engine.cache.__file__)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, str(n), str(module)], env=cli_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("a", "b")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with RequestCache(path) as cache:
        assert len(cache) == 3 * n
        assert cache.get("a-7") == {"text": "a answer 7", "i": 7} and cache.get("b-399")["i"] == 399
        assert cache.get("shared-5") == {"text": "shared answer 5", "i": 5}
    assert _cache_state(path)[:2] == ("ok", "wal")


def _table(score: float) -> pd.DataFrame:
    rows = [{"run_id": "r", "item_id": f"i{i}", "rubric": "toy", "criterion": "overall", "judge": "j",
             "condition": "original", "repeat": 0, "status": "ok", "score": score} for i in range(3)]
    return judgments.make_table(rows)


@pytest.mark.parametrize("name", ["judgments.parquet", "judgments.jsonl"])
def test_a_write_dying_half_way_leaves_the_previous_table_whole(tmp_path, monkeypatch, name):
    """A crash in the middle of writing the table (simulated: the writer dies after writing part of
    its file; a real kill cannot be timed that precisely) leaves the previous file intact and no
    temporary file behind, because the table is written to a temporary file and renamed."""
    path = tmp_path / name
    judgments.save(_table(1.0), path)

    def dying_writer(self, target, *args, **kwargs):
        Path(target).write_bytes(b"PAR1 half a file")
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", dying_writer)
    monkeypatch.setattr(judgments, "_write_jsonl", dying_writer)  # the JSONL writer: (table, path)
    with pytest.raises(OSError, match="simulated"):
        judgments.save(_table(2.0), path)
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert (judgments.load(path)["score"] == 1.0).all()
