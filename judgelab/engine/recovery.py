"""Paid answers the request cache could not take (disk full, an I/O error), kept in a JSONL file.

When storing an answer in the cache fails, the run stops (every further answer would be at risk) and
each answer the cache refused is appended to one recovery file, flushed and synced at once, in the
first of these folders that can take it: ``$JUDGELAB_RECOVERY_DIR``, the system's temporary folder,
the cache's own folder, the home folder. The error that stops the run names the file; once there is
room again, :meth:`judgelab.engine.cache.RequestCache.restore` puts the answers back, so that a rerun
makes no call for them. Each line is ``{"key": <request key>, "value": <the cached reply>}``, redacted
like the cache itself.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from judgelab.backends.redaction import redact
from judgelab.errors import JudgelabError

__all__ = ["RECOVERY_DIR_ENV", "RecoveryFile", "RecoveryFileError", "read_recovery"]

RECOVERY_DIR_ENV = "JUDGELAB_RECOVERY_DIR"


class RecoveryFileError(JudgelabError, ValueError):
    """A recovery file that cannot be read back (not one judgelab wrote); the message names file and line."""


class RecoveryFile:
    """Where one run puts the answers its cache refused; ``path`` is None until the first one is kept."""

    def __init__(self, cache_path: Path | None = None) -> None:
        self.cache_path = cache_path
        self.path: Path | None = None
        self.kept = 0
        self.lost = 0  # answers no folder could take (they are only in the run's table)

    def _candidates(self) -> list[Path]:
        if self.path is not None:
            return [self.path]
        folders = [os.environ.get(RECOVERY_DIR_ENV), tempfile.gettempdir(),
                   str(self.cache_path.parent) if self.cache_path is not None else None, str(Path.home())]
        name = f"judgelab-recovery-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.jsonl"
        return [Path(f) / name for f in dict.fromkeys(f for f in folders if f)]

    def keep(self, key: str, value: dict[str, Any]) -> Path | None:
        """Append one answer, synced to disk; the file it went to, or None when no folder could take it."""
        line = json.dumps({"key": key, "value": redact(value)}, ensure_ascii=True, default=str) + "\n"
        for candidate in self._candidates():
            try:
                with open(candidate, "a", encoding="utf-8") as f:
                    f.write(line)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError:
                continue
            self.path = candidate
            self.kept += 1
            return candidate
        self.lost += 1
        return None


def read_recovery(path: str | os.PathLike[str]) -> list[tuple[str, dict[str, Any]]]:
    """The (key, value) pairs of a recovery file; a line that is not one (a torn last line) is an error
    naming it."""
    out: list[tuple[str, dict[str, Any]]] = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key, value = entry["key"], entry["value"]
            except (ValueError, KeyError, TypeError):
                raise RecoveryFileError(f"line {number} of the recovery file {path} is not an answer judgelab "
                                        "wrote; remove that line and restore again") from None
            if not isinstance(key, str) or not isinstance(value, dict):
                raise RecoveryFileError(f"line {number} of the recovery file {path} is not an answer judgelab wrote")
            out.append((key, value))
    return out
