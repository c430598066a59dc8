"""SQLite request cache: one row per full model request, so a rerun makes no API calls.

The key hashes everything that changes an answer (model, api base, messages, sampling
parameters, response format, logprob settings, the rubric's fingerprint, the repeat index).
API keys are never part of the key nor of the stored value: the caller hashes the api base and
parameters with any key masked (:func:`judgelab.backends.redaction.redact`), so a rotated key still
hits, and every stored value is redacted. WAL mode plus a busy timeout let several processes share
one cache file.

Claims keep processes sharing a cache from paying for one request twice: before calling, a
process claims the request's key (:meth:`RequestCache.claim`, one row in the ``claims`` table
written in a write transaction, so two processes cannot both win); another process that finds the
key claimed waits for the answer instead of calling. A claim ends when its answer is stored or it
is released; a claim whose process died ends at once (same machine: its pid is gone) or when its
time runs out (``expires_at``, renewed by the owner at every attempt).
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgelab.backends.redaction import redact
from judgelab.errors import JudgelabError

__all__ = ["DEFAULT_CACHE_ENV", "CacheError", "CacheIOError", "Claim", "default_cache_path", "request_key",
           "RequestCache"]

DEFAULT_CACHE_ENV = "JUDGELAB_CACHE"


def default_cache_path() -> Path:
    """$JUDGELAB_CACHE, else $XDG_CACHE_HOME/judgelab/requests.sqlite, else ~/.cache/judgelab/requests.sqlite."""
    return _default_cache_location()[0]


def _default_cache_location() -> tuple[Path, str]:
    """The default cache path and what chose it (named when it cannot be used)."""
    env = os.environ.get(DEFAULT_CACHE_ENV)
    if env:
        return Path(env), f"${DEFAULT_CACHE_ENV}"
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "judgelab" / "requests.sqlite", "$XDG_CACHE_HOME"
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no password entry: nowhere to put a default cache
        raise CacheError("there is no home folder for the default request cache (HOME is not set); set "
                         f"{DEFAULT_CACHE_ENV} or pass a cache file (--cache FILE, cache=FILE), or run without a cache "
                         "(--no-cache, cache=False)") from None
    return home / ".cache" / "judgelab" / "requests.sqlite", "$HOME"


def _loads(blob: str) -> Any:
    # a value that is not JSON (a damaged or foreign entry) is handed on as text: ModelReply.from_json makes
    # it an unreadable reply instead of a crash on every rerun
    try:
        return json.loads(blob)
    except (ValueError, RecursionError):
        return blob


def request_key(request: Mapping[str, Any]) -> str:
    """A stable hash of a request description (must not contain secrets)."""
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class CacheError(JudgelabError, ValueError):
    """The cache file cannot be used (not a SQLite database, not openable); the message names it."""


class CacheIOError(CacheError):
    """Reading or writing an open cache failed (disk full, an I/O error, a file made read-only): the message
    names the cache and the system's reason."""


@contextmanager
def _io(path: Path, doing: str) -> Iterator[None]:
    """One clear CacheIOError for any failure of SQLite or the file system under an open cache."""
    try:
        yield
    except (sqlite3.Error, OSError) as exc:
        raise CacheIOError(f"cannot {doing} the request cache {path}: {exc}") from None


@dataclass(frozen=True)
class Claim:
    """What :meth:`RequestCache.claim` found: the stored answer, a claim of ours (``token``), or neither
    (another live process or task holds the key: wait and ask again)."""

    value: dict[str, Any] | None = None
    token: str | None = None

    @property
    def busy(self) -> bool:
        return self.value is None and self.token is None


_HOST = socket.gethostname()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):  # exists but is not ours, or the platform cannot tell: assume alive
        return True
    return True


_OPEN_TIMEOUT_S = 30.0  # how long opening waits for another process that holds the file locked


class _Locked(Exception):
    """Opening the cache met a lock held by another process (retried by RequestCache.__init__)."""


class RequestCache:
    """A process- and thread-safe key -> JSON response store."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        if path is not None:
            self.path, origin = Path(path), "the cache file given"
        else:
            self.path, origin = _default_cache_location()
        self._check_location(origin)
        self._lock = threading.Lock()
        # Switching a new file to WAL needs an exclusive lock, and SQLite may answer "database is locked" at
        # once, without its busy handler, while another process is opening the same new file: retry that.
        deadline = time.monotonic() + _OPEN_TIMEOUT_S
        delay = 0.02
        while True:
            try:
                self._conn = self._open()
                return
            except _Locked as locked:
                if time.monotonic() + delay > deadline:
                    raise CacheError(f"cannot use the request cache {self.path}: {locked}; another process kept it "
                                     f"locked for {_OPEN_TIMEOUT_S:.0f} s") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _check_location(self, origin: str) -> None:
        """One sentence, before SQLite tries, when the cache cannot live where it was asked to: the path is a
        folder, or its folder cannot be made (under a file, in /proc, not writable)."""
        fix = (f"choose another cache file (--cache FILE, cache=FILE, ${DEFAULT_CACHE_ENV}) or run without a cache "
               "(--no-cache, cache=False)")
        if self.path.is_dir():
            raise CacheError(f"cannot use the request cache {self.path}: it is a folder, not a file ({origin}); {fix}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            why = ("part of that path is a file, not a folder" if isinstance(exc, FileExistsError | NotADirectoryError)
                   else exc.strerror or str(exc))
            raise CacheError(f"cannot use the request cache {self.path}: its folder {self.path.parent} cannot be "
                             f"created ({origin}): {why}; {fix}") from None

    def _open(self) -> sqlite3.Connection:
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
            conn.execute(
                "CREATE TABLE IF NOT EXISTS claims "
                "(key TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, "
                "expires_at REAL NOT NULL)"
            )
        except sqlite3.Error as exc:  # a corrupt or foreign file, a folder, no permission: one clear sentence
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise _Locked(str(exc)) from None
            raise CacheError(
                f"cannot use the request cache {self.path}: {exc}; move it away or choose another cache file"
            ) from None
        return conn

    def get(self, key: str) -> Any:
        with self._lock, _io(self.path, "read"):
            row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return _loads(row[0]) if row else None

    def put(self, key: str, value: Mapping[str, Any], token: str | None = None) -> None:
        """Store ``value`` (redacted) under ``key``, replacing what was there; end the claim ``token``.

        Raises :class:`CacheIOError` when the file cannot take it (disk full, I/O error): nothing is half
        written (one transaction), and the caller decides where the answer goes instead."""
        clean = redact(dict(value))
        try:
            blob = json.dumps(clean, ensure_ascii=False, default=str)
            blob.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate cannot be stored as UTF-8 text: keep it \u-escaped
            blob = json.dumps(clean, ensure_ascii=True, default=str)
        with self._lock, _io(self.path, "write to"), self._transaction():
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, value, created_at) VALUES (?, ?, ?)", (key, blob, time.time())
            )
            if token is not None:
                self._conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, token))

    def claim(self, key: str, ttl_s: float, *, read_cache: bool = True) -> Claim:
        """The stored answer (when ``read_cache``), else a new claim on ``key`` for ``ttl_s`` seconds, else
        busy: a live claim by another process or task. Checked and written in one write transaction."""
        now = time.time()
        with self._lock, _io(self.path, "write to"), self._transaction():
            if read_cache:
                row = self._conn.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
                if row:
                    return Claim(value=_loads(row[0]))
            held = self._conn.execute("SELECT host, pid, expires_at FROM claims WHERE key = ?", (key,)).fetchone()
            if held is not None and held[2] > now and (held[0] != _HOST or _pid_alive(int(held[1]))):
                return Claim()
            token = uuid.uuid4().hex
            self._conn.execute(
                "INSERT OR REPLACE INTO claims (key, owner, host, pid, expires_at) VALUES (?, ?, ?, ?, ?)",
                (key, token, _HOST, os.getpid(), now + ttl_s),
            )
        return Claim(token=token)

    def renew(self, key: str, token: str, ttl_s: float) -> None:
        """Extend our claim on ``key`` to ``ttl_s`` seconds from now (an attempt is starting)."""
        with self._lock, _io(self.path, "write to"):
            self._conn.execute("UPDATE claims SET expires_at = ? WHERE key = ? AND owner = ?",
                               (time.time() + ttl_s, key, token))

    def release(self, key: str, token: str) -> None:
        """End our claim on ``key`` without an answer (the call failed or was not made)."""
        with self._lock, _io(self.path, "write to"):
            self._conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, token))

    def restore(self, path: str | os.PathLike[str]) -> int:
        """Put back the answers of a recovery file (:mod:`judgelab.engine.recovery`) written when this cache
        could not take them; returns how many. An answer already in the cache is replaced by the file's."""
        from judgelab.engine.recovery import read_recovery

        entries = read_recovery(path)
        for key, value in entries:
            self.put(key, value)
        return len(entries)

    def claims(self) -> int:
        """How many claims are held (live or expired)."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM claims").fetchone()[0])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        # BEGIN IMMEDIATE takes the database's write lock up front: a check and its write are one step for
        # every process sharing the file (the busy timeout makes the others wait, not fail)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._conn.execute("COMMIT")
        except BaseException:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error:  # SQLite already rolled back (a full disk does): the first error is the one to say
                pass
            raise

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
