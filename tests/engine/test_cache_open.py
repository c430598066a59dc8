"""Opening a cache file that another process holds locked waits for it (SQLite can answer "database is locked"
at once while a new file is switched to WAL by another process: seen in a CI run of the concurrent-writers test)."""

from __future__ import annotations

import sqlite3
import threading
import time

from judgelab.engine.cache import RequestCache


def test_opening_a_cache_waits_for_an_exclusive_lock_to_end(tmp_path):
    path = tmp_path / "shared.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # what a process creating the file holds while it sets it up
    threading.Timer(0.5, lambda: holder.execute("COMMIT")).start()
    start = time.monotonic()
    cache = RequestCache(path)
    waited = time.monotonic() - start
    cache.put("k", {"text": "answer"})
    assert cache.get("k") == {"text": "answer"} and waited >= 0.4
    cache.close()
    holder.close()


def test_an_immediate_database_is_locked_on_open_is_retried(tmp_path, monkeypatch):
    """SQLite's immediate SQLITE_BUSY (no busy handler) cannot be provoked on demand here, so the first two
    opens are made to meet it; the third, real open succeeds."""
    from judgelab.engine import cache as cache_module

    real_open, calls = cache_module.RequestCache._open, []

    def flaky_open(self):
        calls.append(1)
        if len(calls) <= 2:
            raise cache_module._Locked("database is locked")
        return real_open(self)

    monkeypatch.setattr(cache_module.RequestCache, "_open", flaky_open)
    cache = RequestCache(tmp_path / "c.sqlite")
    assert len(calls) == 3
    cache.put("k", {"text": "answer"})
    assert cache.get("k") == {"text": "answer"}
    cache.close()
