"""A run folder written all at once: the complete new set of files, or the previous set untouched.

``judgelab run`` and ``judgelab probe`` leave ``judgments.parquet``, ``judgments.jsonl``, ``run.json`` and,
when asked, ``report.html`` in their output folder. :func:`write_run_folder` writes every file of the
new set under a temporary name in that folder, syncs each to disk, and only then renames them over the
old names (``run.json`` last) and syncs the folder. A failure while writing (a full disk, an I/O error,
a report that cannot be rendered) removes the temporary files and raises :class:`RunFolderError`: the
folder still holds the previous set exactly as it was. The renames themselves allocate nothing, so the
only moment a folder can hold a mix is a crash of the machine between two renames.

A ``report.html`` left from the previous set when the new set has none is removed with the commit: it
described other rows.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.backends.redaction import redact
from judgelab.errors import JudgelabError

__all__ = ["REPORT_NAME", "RUN_FILES", "RunFolderError", "write_run_folder"]

RUN_FILES = ("judgments.parquet", "judgments.jsonl", "run.json")
REPORT_NAME = "report.html"


class RunFolderError(JudgelabError, OSError):
    """The output folder could not take the new set of files; its previous files are unchanged."""


def _temporary(out: Path, name: str, token: str) -> Path:
    stem, dot, suffix = name.rpartition(".")
    return out / f".{stem}.{token}.new{dot}{suffix}"  # the suffix kept: judgments.save picks the format by it


def _write_json(path: Path, meta: Mapping[str, Any]) -> None:
    data = json.dumps(redact(json.loads(json.dumps(meta, default=str))), indent=2).encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_folder(out: Path) -> None:
    try:
        fd = os.open(out, os.O_RDONLY)
    except OSError:  # a platform that cannot open folders: the renames are still atomic one by one
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_run_folder(out: str | os.PathLike[str], table: pd.DataFrame, meta: Mapping[str, Any], *,
                     report: Callable[[Path], Any] | None = None) -> dict[str, Path]:
    """Write the table (Parquet and JSONL), ``run.json`` (``meta``, redacted) and, when ``report`` is given,
    ``report.html`` (``report(path)`` writes it) into ``out`` as one set; returns name -> path.

    Raises :class:`RunFolderError` naming the folder and the reason when any file cannot be written; the
    folder then holds its previous files unchanged."""
    out = Path(out)
    names = [*RUN_FILES, *([REPORT_NAME] if report is not None else [])]
    token = uuid.uuid4().hex[:10]
    staged = {name: _temporary(out, name, token) for name in names}
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
            judgments.save(table, staged["judgments.parquet"])
            judgments.save(table, staged["judgments.jsonl"])
            _write_json(staged["run.json"], meta)
            if report is not None:
                report(staged[REPORT_NAME])
                judgments._fsync(staged[REPORT_NAME])
        except OSError as exc:
            raise RunFolderError(f"cannot write the run folder {out}: {exc.strerror or exc}; its previous files "
                                 "are unchanged") from None
        except JudgelabError as exc:  # the report's own sentence (it cannot be written or rendered)
            raise RunFolderError(f"cannot write the run folder {out}: {exc}; its previous files are unchanged") \
                from None
    except BaseException:
        for path in staged.values():
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
        raise
    # commit: run.json last, so a folder whose run.json is new holds the new table
    for name in (*[n for n in names if n != "run.json"], "run.json"):
        os.replace(staged[name], out / name)
    if report is None:
        stale = out / REPORT_NAME
        if stale.exists():
            stale.unlink()
    _fsync_folder(out)
    return {name: out / name for name in names}
