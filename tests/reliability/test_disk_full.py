"""A full disk (or an I/O error) under the cache or the output folder: the run stops with one sentence, every paid
answer is in the cache or in the recovery file that sentence names, and the output folder holds either the whole
new set of files or the old one, untouched.

Two kinds of full disk:
- simulated (always run): SQLite's own "database or disk is full" raised by a stand-in for the cache's
  connection once it has stored a number of answers, and file writes that fail with ENOSPC once a byte
  budget is spent (the writers of the Parquet, JSONL, run.json and report files are wrapped);
- real (run where the kernel allows it): a 256 KB tmpfs mounted in a private mount namespace
  (``unshare -rm``, no root on the host needed), where `judgelab run` meets ENOSPC from the kernel itself.
  Skipped, with the reason, where unprivileged namespaces are not available.
"""

from __future__ import annotations

import builtins
import errno
import io
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgelab
from judgelab import judgments
from judgelab.engine.cache import RequestCache
from judgelab.engine.recovery import RecoveryFileError, read_recovery
from judgelab.engine.run_folder import RunFolderError, write_run_folder
from judgelab.engine.runner import RunAborted
from tests.reliability.helpers import CRITERIA, cli_command, cli_env, direct_items, run_cli, write_jsonl
from tests.support.fault_server import FaultServer, direct_score_answer, tag_key


class FillingConnection:
    """Simulated full disk under SQLite: the cache's real connection, except that the statement ``failing`` fails
    the way SQLite does on a full disk once ``room`` of them have succeeded."""

    def __init__(self, conn: sqlite3.Connection, room: int, failing: str) -> None:
        self.conn, self.room, self.failing = conn, room, failing

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith(self.failing):
            if self.room <= 0:
                raise sqlite3.OperationalError("database or disk is full")
            self.room -= 1
        return self.conn.execute(sql, *args)

    def close(self) -> None:
        self.conn.close()


def _run(srv: FaultServer, items: list[dict[str, Any]], cache: RequestCache) -> Any:
    return judgelab.run(items, "direct_score", "openai/disk-judge", api_base=srv.base_url, cache=cache,
                        progress=False, return_stats=True, concurrency=4, max_retries=0)


@pytest.mark.parametrize("failing", ["INSERT OR REPLACE INTO responses", "INSERT OR REPLACE INTO claims"],
                         ids=["storing-an-answer", "claiming-a-request"])
def test_a_full_cache_stops_the_run_and_loses_no_paid_answer(tmp_path, monkeypatch, failing):
    """Invariant: paid answers = answers in the cache + answers in the recovery file named by the error; every
    item has its rows; putting the recovery file back makes a rerun call only what was never answered."""
    monkeypatch.setenv("JUDGELAB_RECOVERY_DIR", str(tmp_path))
    items = direct_items(30)
    path = tmp_path / "cache.sqlite"
    cache = RequestCache(path)
    cache._conn = FillingConnection(cache._conn, room=8, failing=failing)  # type: ignore[assignment]
    with FaultServer(answer=direct_score_answer, key_fn=tag_key()) as srv:
        with pytest.raises(RunAborted) as stopped:
            _run(srv, items, cache)
        paid = srv.count
        message = str(stopped.value)
        table = judgments.validate(stopped.value.result.table)
        assert len(table) == len(items) * len(CRITERIA)  # every item has its rows, answered or not attempted
        assert "database or disk is full" in message and "\n" not in message
        cache.close()
        with RequestCache(path) as fresh:
            cached = len(fresh)
            if failing.endswith("responses"):
                recovery = Path(message.split("recovery file ")[1].split(" ")[0])
                kept = read_recovery(recovery)
                assert len(kept) == paid - cached > 0  # what the cache refused is all in the recovery file
                assert fresh.restore(recovery) == len(kept)
            else:
                assert "no paid answer was lost" in message and paid == cached  # stopped before calling
            answered = len(fresh)
            assert answered == paid
            again = _run(srv, items, fresh)
        assert srv.count - paid == len(items) - answered  # only the never-answered requests are asked
        assert again.stats.cache_hits == answered and again.stats.ok == len(items) * len(CRITERIA)


def test_a_recovery_file_with_a_torn_line_is_refused_by_name(tmp_path):
    path = tmp_path / "recovery.jsonl"
    path.write_text(json.dumps({"key": "k", "value": {"text": "x"}}) + "\n" + '{"key": "k2", "val')
    with pytest.raises(RecoveryFileError, match="line 2 of the recovery file"):
        read_recovery(path)


class FullDisk:
    """Simulated full disk: writes to files under ``root`` fail with ENOSPC once ``room`` bytes are written (the
    bytes that fit are written first, as a real disk does)."""

    def __init__(self, root: Path, room: int) -> None:
        self.root, self.room = root.resolve(), room
        self.real_open = builtins.open

    def open(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = self.real_open(file, mode, *args, **kwargs)
        inside = isinstance(file, str | Path) and Path(file).resolve().is_relative_to(self.root)
        if not inside or not any(m in mode for m in "wax"):
            return f
        disk = self
        real_write = f.write

        def write(data: Any) -> int:
            size = len(data.encode() if isinstance(data, str) else data)
            if size > disk.room:
                real_write(data[: disk.room])
                disk.room = 0
                raise OSError(errno.ENOSPC, "No space left on device (simulated)")
            disk.room -= size
            return real_write(data)

        f.write = write
        return f

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(builtins, "open", self.open)
        monkeypatch.setattr(io, "open", self.open)
        real_to_parquet = pd.DataFrame.to_parquet

        def to_parquet(frame: pd.DataFrame, path: Any, *args: Any, **kwargs: Any) -> None:
            buffer = io.BytesIO()
            real_to_parquet(frame, buffer, *args, **kwargs)
            with self.open(path, "wb") as f:  # pyarrow writes through its own C++ files: routed through ours
                f.write(buffer.getvalue())

        monkeypatch.setattr(pd.DataFrame, "to_parquet", to_parquet)


def _table(n: int, score: float) -> pd.DataFrame:
    return judgments.make_table([{"run_id": "r", "item_id": f"i{i}", "rubric": "toy", "criterion": "overall",
                                  "judge": "j", "condition": "original", "repeat": 0, "status": "ok", "score": score,
                                  "raw_output": "x" * 200} for i in range(n)])


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(room=st.integers(min_value=0, max_value=120_000))
def test_an_output_folder_that_fills_keeps_the_old_set_or_gets_the_whole_new_one(tmp_path_factory, room):
    """Invariant: whatever byte the disk fills at, the folder afterwards holds the old set byte for byte (and no
    temporary file) or the complete new set; a failure is one RunFolderError naming the folder."""
    folder = tmp_path_factory.mktemp("run")
    write_run_folder(folder, _table(40, 1.0), {"run": "old"}, report=lambda p: Path(p).write_text("old report"))
    old = _snapshot(folder)
    disk = FullDisk(folder, room)
    with pytest.MonkeyPatch.context() as mp:
        disk.install(mp)
        try:
            write_run_folder(folder, _table(300, 2.0), {"run": "new"},
                             report=lambda p: Path(p).write_text("new report " * 500))
        except RunFolderError as exc:
            assert str(folder) in str(exc) and "previous files are unchanged" in str(exc)
            assert _snapshot(folder) == old
            return
    new = _snapshot(folder)
    assert set(new) == set(old) and json.loads(new["run.json"]) == {"run": "new"}
    assert (judgments.load(folder / "judgments.jsonl")["score"] == 2.0).all()
    assert len(judgments.load(folder / "judgments.parquet")) == 300


# -- a real full disk: tmpfs in a private mount namespace ---------------------------------------------------

def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt 2>/dev/null || "
                            "mount -t tmpfs -o size=64k tmpfs \"$TMPDIR\""], capture_output=True, timeout=30,
                           env={"PATH": "/usr/bin:/bin", "TMPDIR": "/tmp"})
    return probe.returncode == 0


real_disk = pytest.mark.skipif(not _namespaces_work(), reason="unprivileged mount namespaces (unshare -rm) are not "
                               "available here, so no small real filesystem can be mounted; the simulated tests run")


def _in_small_fs(mount: Path, size: str, script: str, env: dict[str, str], timeout: float = 300) -> Any:
    """Run ``script`` (sh) with a fresh tmpfs of ``size`` at ``mount``; the mount vanishes when it ends."""
    mount.mkdir(exist_ok=True)
    return subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size={size} tmpfs '{mount}' && {script}"],
                          capture_output=True, text=True, env=env, timeout=timeout)


@real_disk
def test_a_real_full_disk_under_the_cache_stops_the_cli_with_one_sentence(tmp_path):
    """`judgelab run` with its cache on a 256 KB tmpfs that fills mid-run: exit 1 with one sentence naming the
    recovery file, no traceback, the table written, and paid answers = cache + recovery file; after the answers are
    put back, the same command calls only what was never answered."""
    n = 120
    data = write_jsonl(tmp_path / "items.jsonl", direct_items(n))
    mount, saved = tmp_path / "small", tmp_path / "saved"
    saved.mkdir()
    env = cli_env(JUDGELAB_RECOVERY_DIR=str(tmp_path))
    with FaultServer(answer=direct_score_answer, key_fn=tag_key()) as srv:
        args = ["run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/disk-judge",
                "--api-base", srv.base_url, "--concurrency", "4", "--out", str(tmp_path / "out")]
        command = " ".join(f"'{a}'" for a in cli_command(*args, "--cache", str(mount / "cache.sqlite")))
        proc = _in_small_fs(mount, "256k", f"{command}; echo $? > '{saved}/rc'; cp '{mount}'/cache.sqlite* '{saved}/'",
                            env)
        paid = srv.count
        assert (saved / "rc").read_text().strip() == "1", proc.stderr
        assert "Traceback" not in proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and "database or disk is full" in errors[0], proc.stderr
        recovery = Path(errors[0].split("recovery file ")[1].split(" ")[0])
        table = judgments.load(tmp_path / "out" / "judgments.parquet")
        assert len(table) == n * len(CRITERIA)
        with RequestCache(saved / "cache.sqlite") as cache:
            cached = len(cache)
            kept = len(read_recovery(recovery))
            assert 0 < cached < paid and cached + kept == paid
            cache.restore(recovery)
        rerun = run_cli(*args, "--cache", str(saved / "cache.sqlite"), env=env)
        assert rerun.returncode == 0, rerun.stderr
        assert srv.count - paid == n - paid  # only the never-answered requests


@real_disk
def test_a_real_full_disk_under_the_output_folder_keeps_the_previous_set(tmp_path):
    """The output folder on a tmpfs holding a previous run: a bigger run that cannot fit fails with one sentence
    naming the folder, and the folder holds the previous files byte for byte, with no temporary file."""
    small = write_jsonl(tmp_path / "small.jsonl", direct_items(3))
    big = write_jsonl(tmp_path / "big.jsonl", direct_items(400))
    mount, saved = tmp_path / "small-fs", tmp_path / "saved"
    env = cli_env()
    with FaultServer(answer=direct_score_answer, key_fn=tag_key()) as srv:
        def command(data: Path) -> str:
            return " ".join(f"'{a}'" for a in cli_command(
                "run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/disk-judge", "--api-base",
                srv.base_url, "--concurrency", "8", "--no-cache", "--out", str(mount / "out")))

        script = (f"{command(small)} > /dev/null && cp -r '{mount}/out' '{saved}-old' && "
                  f"{command(big)}; echo $? > '{tmp_path}/rc'; cp -r '{mount}/out' '{saved}'")
        proc = _in_small_fs(mount, "96k", script, env)
    assert (tmp_path / "rc").read_text().strip() == "2", proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot write the run folder" in errors[0] and "previous files are unchanged" in errors[0]
    assert _snapshot(saved) == _snapshot(Path(f"{saved}-old"))
