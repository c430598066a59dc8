"""Text verdict cells for :func:`judgelab.from_frame`: ``parse=`` reads a column of judge answers through the
rubrics' parsing layer, and ``unscored_as=`` applies a publisher's rule for the answers it cannot read.

- ``parse="score"`` reads each cell with :func:`judgelab.parse_score` on ``scale=`` (the row's criterion
  name counts as a score label: "Coherence: 3" on criterion "coherence");
- ``parse="winner"`` with :func:`judgelab.parse_winner` (in the labels as shown; swapped rows are then
  flipped like any other winner);
- ``parse="label"`` with :func:`judgelab.rubrics.parse_text.parse_label` among the declared ``labels=``;
- ``parse=<callable>``: ``f(text)`` returns a :class:`~judgelab.rubrics.parse_text.Parsed`, a value (then
  checked like any cell: scale, labels, winner mapping) or None; an exception it raises becomes the
  row's reason, never an import error.

Each distinct cell is read once per criterion (the same answer in many rows or several judges' columns is
parsed once; a ``parse=`` function is called once per distinct text and criterion), so the cost grows with
distinct answers, not rows.

A cell that cannot be read is an unscored row (status "parse_error", or "refusal" when the judge
declined) whose reason says why and where. ``unscored_as=`` counts those rows (parse errors and
refusals of every judge, gold rows never) as a value through :func:`judgelab.judgments.fill_unscored`:
they become scored and stay countable (``unscored_reason`` keeps "counted as X (was ...)").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.judgments import PARSE_ERROR, REFUSAL, fill_unscored
from judgelab.rubrics.parse_text import Parsed, parse_label, parse_score, parse_winner

__all__ = ["FrameImportError", "ParseRule", "TextReader", "count_unscored_as", "text_reader"]

ParseRule = Literal["score", "winner", "label"] | Callable[[str], Any]
TextReader = Callable[[Any, str], Parsed]  # (cell, criterion) -> Parsed
_KIND_OF = {"score": "score", "winner": "pairwise", "label": "label"}
_COLUMN_OF = {"score": "score", "label": "verdict", "pairwise": "winner"}


class FrameImportError(JudgelabError, ValueError):
    """A frame or file that cannot be read as judgments; the message names the column, row and value."""


def _error(message: str) -> FrameImportError:
    return FrameImportError(message)


def _cell_text(value: Any) -> str:
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def _call(rule: Callable[[str], Any], value: Any) -> Parsed:
    try:
        out = rule(_cell_text(value))
    except Exception as exc:  # the user's parser failing on one cell is that row's reason  # noqa: BLE001
        return Parsed(None, f"parse= raised {type(exc).__name__}: {exc}", "parse_error")
    if isinstance(out, Parsed):
        return out
    if out is None or (isinstance(out, float) and math.isnan(out)):
        return Parsed(None, "parse= returned no value", "parse_error")
    return Parsed(out, None, "ok", None, None, "parse=")


def text_reader(parse: ParseRule | None, kind: str, *,
                scale: tuple[float, float] | Callable[[str], tuple[float, float] | None] | None,
                labels: Sequence[str] | None) -> TextReader | None:
    """The reader ``parse=`` asks for (None: cells are values, not text), checked against the import's kind.
    ``scale``: one (low, high), or a function of the row's criterion giving its range."""
    if parse is None:
        return None
    if callable(parse):
        return lambda value, criterion: _call(parse, value)
    if parse not in _KIND_OF:
        raise _error(f"parse must be 'score', 'winner', 'label' or a function of the cell's text, not {parse!r}")
    if _KIND_OF[parse] != kind:
        raise _error(f"parse={parse!r} reads kind {_KIND_OF[parse]!r}, but this import is kind {kind!r}")
    if parse == "score":
        if scale is None:
            raise _error("parse='score' reads scores on a scale: pass scale=(low, high), e.g. scale=(1, 3)")
        scale_of = scale if callable(scale) else (lambda criterion, fixed=scale: fixed)
        return lambda value, criterion: parse_score(_cell_text(value), scale_of(criterion), labels=[criterion])
    if parse == "label":
        if not labels:
            raise _error("parse='label' reads one of the declared labels: pass labels=[...]")
        declared = list(labels)
        return lambda value, criterion: parse_label(_cell_text(value), declared)
    return lambda value, criterion: parse_winner(_cell_text(value))


def count_unscored_as(table: pd.DataFrame, value: Any, kind: str, *, exclude_judge: str | None) -> pd.DataFrame:
    """The judges' parse errors and refusals counted as ``value`` (see the module docstring)."""
    column = _COLUMN_OF[kind]
    if kind == "score":
        if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
            raise _error(f"unscored_as= for scores must be a finite number (G-Eval counts an unreadable answer "
                         f"as 0: unscored_as=0), not {value!r}")
        value = float(value)
    elif kind == "pairwise":
        side = {"a": "A", "b": "B", "tie": "TIE"}.get(str(value).strip().lower())
        if side is None:
            raise _error(f"unscored_as= for winners must be 'A', 'B' or 'TIE' (LLMBar counts an unreadable verdict "
                         f"as a tie: unscored_as='TIE'), not {value!r}")
        value = side
    else:
        value = _cell_text(value)
    judges = sorted(set(table["judge"]) - ({exclude_judge} if exclude_judge else set()))
    return fill_unscored(table, value, column=column, judge=judges, statuses=(PARSE_ERROR, REFUSAL))
