"""Release shapes :func:`judgelab.from_frame` reads beyond one id column and one value per cell.

- **Composite item ids** (``item_id=["doc_id", "system"]``): an item named by several columns is the
  columns' text joined by ":" ("dm-test-8764:M8"); two different combinations that would join to the same
  text are refused, never merged.
- **Pairs named by their candidates** (``candidates=("model_a", "model_b")``): MT-Bench and Chatbot Arena
  releases name the two models of each vote, in the order shown, and the same pair appears in either order
  across votes. The item is the id plus the pair in sorted order ("81:alpaca-13b:gpt-4"), "A" is the
  alphabetically first candidate (FastChat's ``compute_agreement.py`` orders a pair the same way), and a
  vote whose row lists them the other way round has its winner flipped. A winner may be written as a
  candidate's name ("gpt-4") as well as model_a/model_b/tie. The sorted names are kept in the columns
  ``candidate_a`` and ``candidate_b``; ``detail.shown`` keeps the order of the row.
- **Several answers in one cell** (G-Eval's ``all_responses``: 20 sampled answers per response): a cell
  holding a list gives one row per answer, ``repeat`` 0, 1, ... in the list's order (an empty list is one
  missing row); :func:`judgelab.aggregate_repeats` then averages them.
- **A scale per criterion** (``scale={"coherence": (1, 3), "groundedness": (0, 1)}``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgelab.datasets.frame_text import FrameImportError
from judgelab.datasets.text_tables import id_text

__all__ = ["CANDIDATE_COLUMNS", "Candidates", "Scales", "is_list_cell", "item_ids"]

CANDIDATE_COLUMNS = ("candidate_a", "candidate_b")
_SEPARATOR = ":"

Place = Callable[[int], str]


def item_ids(frame: pd.DataFrame, columns: Sequence[str], where: Place,
             extra: Sequence[tuple[str, str]] | None = None) -> list[str]:
    """Each row's item id: the id columns' text (and the ``extra`` parts) joined by ":"."""
    if len(columns) == 1 and extra is None and isinstance(frame[columns[0]].dtype, pd.StringDtype) \
            and not frame[columns[0]].hasnans:
        return frame[columns[0]].tolist()  # text ids are their own text (id_text); none is missing
    parts = [[id_text(v, where=f"column {col!r} (item_id) in {where(i)}", error=FrameImportError)
              for i, v in enumerate(frame[col])] for col in columns]
    rows = [tuple(p) for p in zip(*parts, strict=True)]
    if extra is not None:
        rows = [(*r, *e) for r, e in zip(rows, extra, strict=True)]
    ids = [_SEPARATOR.join(r) for r in rows]
    if rows and len(rows[0]) > 1:
        seen: dict[str, tuple[int, tuple[str, ...]]] = {}
        for pos, (text, parts_of) in enumerate(zip(ids, rows, strict=True)):
            first = seen.setdefault(text, (pos, parts_of))
            if first[1] != parts_of:
                raise FrameImportError(
                    f"the item id parts {list(first[1])} ({where(first[0])}) and {list(parts_of)} ({where(pos)}) "
                    f"both join to {text!r}; the parts are joined with {_SEPARATOR!r}: make one id column first")
    return ids


class Candidates:
    """The two candidates of each row as shown, their sorted order, and whether the row shows them reversed."""

    def __init__(self, frame: pd.DataFrame, columns: Sequence[str], where: Place,
                 is_missing: Callable[[Any], bool], text: Callable[[Any], str]) -> None:
        if isinstance(columns, str) or len(columns) != 2:
            raise FrameImportError(f"candidates= names the TWO columns holding the candidates shown first and "
                                   f"second (e.g. candidates=('model_a', 'model_b')), not {columns!r}")
        first, second = columns
        self.shown: list[tuple[str, str]] = []
        for pos, (a, b) in enumerate(zip(frame[first], frame[second], strict=True)):
            for col, value in ((first, a), (second, b)):
                if is_missing(value):
                    raise FrameImportError(f"column {col!r} (candidates) is empty in {where(pos)}; every vote "
                                           "needs both candidates' names")
            a_text, b_text = text(a), text(b)
            if a_text == b_text:
                raise FrameImportError(f"{where(pos)} names {a_text!r} as both candidates ({first!r} and "
                                       f"{second!r}); a pairwise vote compares two different candidates")
            self.shown.append((a_text, b_text))
        self.sorted = [tuple(sorted(pair)) for pair in self.shown]
        self.flipped = np.array([s != o for s, o in zip(self.shown, self.sorted, strict=True)], dtype=bool)

    def side(self, text: str, pos: int) -> str | None:
        """ "A" / "B" (as shown in the row) when the winner is written as a candidate's name, else None."""
        a, b = self.shown[pos]
        return "A" if text == a else "B" if text == b else None


class Scales:
    """``scale=``: one (low, high) for every criterion, or a mapping criterion -> (low, high)."""

    def __init__(self, scale: tuple[float, float] | Mapping[str, tuple[float, float]] | None) -> None:
        self.per_criterion = isinstance(scale, Mapping)
        if scale is None:
            self.ranges: dict[str | None, tuple[float, float]] = {}
        elif isinstance(scale, Mapping):
            if not scale:
                raise FrameImportError("scale= maps no criterion; give (low, high) or {criterion: (low, high)}")
            self.ranges = {str(k): _range(v, f"scale[{k!r}]") for k, v in scale.items()}
        else:
            self.ranges = {None: _range(scale, "scale")}

    def __bool__(self) -> bool:
        return bool(self.ranges)

    def of(self, criterion: str) -> tuple[float, float] | None:
        if not self.ranges:
            return None
        return self.ranges[criterion] if self.per_criterion else self.ranges[None]

    def check(self, criteria: Sequence[str]) -> None:
        """Every criterion of the import has a range (a mapping that misses one would leave it unchecked)."""
        if not self.per_criterion:
            return
        missing = sorted(set(criteria) - set(self.ranges))
        if missing:
            raise FrameImportError(f"scale= gives no range for criterion {missing[0]!r} (it maps "
                                   f"{sorted(k for k in self.ranges if k is not None)}); add one")


def _range(scale: Any, name: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in scale)
    except (TypeError, ValueError):
        raise FrameImportError(f"{name} must be (low, high), not {scale!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise FrameImportError(f"{name} must be (low, high) with low < high, not {scale!r}")
    return low, high


def is_list_cell(value: Any) -> bool:
    """A cell holding several answers (a JSON list, a tuple, an array from Parquet)."""
    return isinstance(value, list | tuple | np.ndarray)
