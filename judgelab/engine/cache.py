"""SQLite request cache: one row per full model request, so a rerun makes no API calls.

The key hashes everything that changes an answer (model, api base, messages, sampling
parameters, response format, logprob settings, the rubric's fingerprint, the repeat index).
API keys are never part of the key nor of the stored value. WAL mode plus a busy timeout
let several processes share one cache file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from judgelab.errors import JudgelabError

__all__ = ["DEFAULT_CACHE_ENV", "CacheError", "default_cache_path", "request_key", "RequestCache"]

DEFAULT_CACHE_ENV = "JUDGELAB_CACHE"


def default_cache_path() -> Path:
    """$JUDGELAB_CACHE, else ~/.cache/judgelab/requests.sqlite."""
    env = os.environ.get(DEFAULT_CACHE_ENV)
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "judgelab" / "requests.sqlite"


def request_key(request: Mapping[str, Any]) -> str:
    """A stable hash of a request description (must not contain secrets)."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class CacheError(JudgelabError, ValueError):
    """The cache file cannot be used (not a SQLite database, not openable); the message names it."""


class RequestCache:
    """A process- and thread-safe key -> JSON response store."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses "
                "(key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at REAL NOT NULL)"
            )
        except sqlite3.Error as exc:  # a corrupt or foreign file, a folder, no permission: one clear sentence
            if conn is not None:
                conn.close()
            raise CacheError(
                f"cannot use the request cache {self.path}: {exc}; move it away or choose another cache file"
            ) from None
        self._conn = conn

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        blob = json.dumps(value, ensure_ascii=False, default=str)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, value, created_at) VALUES (?, ?, ?)", (key, blob, time.time())
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> RequestCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
