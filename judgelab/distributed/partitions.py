"""The partitions of a distributed run: one Parquet file per finished block under ``<out>/partitions``.

A block is a run of consecutive items (``block_size`` of them) and every request they need; its
rows are written by the driver, atomically (:func:`judgelab.judgments.save`: a temporary file, synced,
renamed), as soon as its worker returns them, so a killed driver or worker loses no written block.
``manifest.json`` says which run the partitions belong to (run id, block size, the items' hash): a
rerun with the same items and options judges only the blocks not written yet, and a folder holding
another run's partitions is refused instead of mixed. :func:`judgelab.load` reads the partitions of
a folder as one table, in block order (the single-process row order).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.errors import JudgelabError

__all__ = ["PARTITIONS_DIR", "PartitionsError", "block_path", "check_manifest", "items_hash", "written_blocks",
           "write_block"]

PARTITIONS_DIR = judgments.PARTITIONS_DIR
_BLOCK = re.compile(r"block-(\d{6})\.parquet")


class PartitionsError(JudgelabError, ValueError):
    """The output folder holds partitions of another run (other items, options or block size)."""


def block_path(out: Path, index: int) -> Path:
    return out / PARTITIONS_DIR / f"block-{index:06d}.parquet"


def items_hash(item_ids: list[Any]) -> str:
    return hashlib.sha256(json.dumps([str(i) for i in item_ids]).encode()).hexdigest()[:16]


def check_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Write ``manifest`` for a new folder, or refuse a folder whose partitions belong to another run."""
    folder = out / PARTITIONS_DIR
    path = folder / "manifest.json"
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise PartitionsError(f"the partition manifest {path} cannot be read; remove {folder} to start over") \
                from None
        if old != manifest:
            changed = sorted(k for k in set(old) | set(manifest) if old.get(k) != manifest.get(k))
            raise PartitionsError(f"{folder} holds the partitions of another run (its {', '.join(changed)} differ); "
                                  "choose another output folder or remove that one to start over")
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".manifest.{os.getpid()}.json"
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        why = ("part of that path is a file, not a folder" if isinstance(exc, FileExistsError | NotADirectoryError)
               else exc.strerror or str(exc))
        raise PartitionsError(f"cannot write the partitions folder {folder}: {why}; give another output folder") \
            from None


def written_blocks(out: Path) -> list[int]:
    """The indexes of the blocks whose partition is written, ascending."""
    folder = out / PARTITIONS_DIR
    if not folder.is_dir():
        return []
    found = [_BLOCK.fullmatch(p.name) for p in folder.iterdir()]
    return sorted(int(m.group(1)) for m in found if m)


def write_block(out: Path, index: int, table: pd.DataFrame) -> Path:
    return judgments.save(table, block_path(out, index))
