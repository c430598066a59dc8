"""What every importer of another tool's judgments shares: the error, reading its file, checked field access,
the provenance written into each row, and the table it returns.

Each imported row's ``detail`` holds ``imported_from``: the tool, its version (as the file states it), the file
and the tool's run id, so an imported table says where every judgment came from. A file that is not what the
importer reads (another tool's, truncated, keys missing, values of the wrong type) is refused in one sentence
naming the file and the field, never half-imported and never a traceback.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.judgments import JudgmentsTableError, make_table, validate

__all__ = ["ImportFileError", "Fields", "as_score", "guarded", "import_table", "provenance", "read_json"]

T = TypeVar("T")


class ImportFileError(JudgelabError, ValueError):
    """A file another tool wrote that cannot be imported as given; one sentence naming the file and the field."""


def read_json(path: str | os.PathLike[str], tool: str) -> tuple[Path, Any]:
    """The parsed JSON of ``path``; a missing, unreadable or non-JSON file is an :class:`ImportFileError`."""
    file = Path(path)
    if not file.is_file():
        raise ImportFileError(f"no {tool} results file at {file}" + (" (it is a folder)" if file.is_dir() else ""))
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFileError(f"cannot read the {tool} results file {file}: {exc}") from None
    try:
        return file, json.loads(text)
    except ValueError as exc:
        raise ImportFileError(f"{file} is not a {tool} JSON results file: it is not JSON ({exc})") from None


class Fields:
    """Checked access to one JSON object of a file: a missing key or a value of the wrong type is one sentence."""

    def __init__(self, value: Any, where: str, file: Path, tool: str) -> None:
        if not isinstance(value, Mapping):
            raise ImportFileError(f"{file}: {where} is a {type(value).__name__}, not an object; is this a {tool} "
                                  "results file?")
        self.value, self.where, self.file, self.tool = value, where, file, tool

    def get(self, key: str, kind: type | tuple[type, ...], *, required: bool = True, default: Any = None) -> Any:
        if key not in self.value or self.value[key] is None:
            if required:
                raise ImportFileError(f"{self.file}: {self.where} has no {key!r}; is this a {self.tool} results file?")
            return default
        found = self.value[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # a JSON true is no number and a number is no text: bool is checked apart from int
        wrong = isinstance(found, bool) and bool not in kinds or not isinstance(found, kinds)
        if wrong:
            names = " or ".join(k.__name__ for k in kinds)
            raise ImportFileError(f"{self.file}: {self.where}.{key} is a {type(found).__name__}, not {names}")
        return found

    def child(self, key: str, *, required: bool = True) -> Fields | None:
        value = self.get(key, dict, required=required)
        return None if value is None else Fields(value, f"{self.where}.{key}", self.file, self.tool)

    def items(self, key: str, *, required: bool = True) -> list[Fields]:
        value = self.get(key, list, required=required, default=[])
        return [Fields(v, f"{self.where}.{key}[{i}]", self.file, self.tool) for i, v in enumerate(value)]


def as_score(value: Any) -> float | None:
    """A finite number as a float, else None (NaN, infinity, text, booleans are no score)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def provenance(tool: str, version: Any, file: Path, run_id: Any) -> dict[str, Any]:
    return {"tool": tool, "version": None if version is None else str(version), "file": str(file),
            "run_id": None if run_id is None else str(run_id)}


def import_table(rows: list[dict[str, Any]], file: Path, tool: str) -> pd.DataFrame:
    """The validated judgments table of ``rows``; a file with no judgment to import is one sentence."""
    if not rows:
        raise ImportFileError(f"{file} holds no {tool} judgments to import")
    try:
        return validate(make_table(rows))
    except JudgmentsTableError as exc:
        raise ImportFileError(f"{file}: the {tool} judgments do not make a judgments table: {exc}") from None


def guarded(tool: str, read: Callable[..., T]) -> Callable[..., T]:
    """``read`` with a last line of defence: a file shaped in a way the importer's checks did not foresee ends in
    an :class:`ImportFileError` naming the file, never a traceback (the original is chained for a bug report)."""

    def wrapper(*args: Any, **kwargs: Any) -> T:
        try:
            return read(*args, **kwargs)
        except JudgelabError:
            raise
        except (KeyError, TypeError, AttributeError, ValueError, IndexError, RecursionError) as exc:
            given = args[0] if args else next(iter(kwargs.values()), None)
            raise ImportFileError(f"{str(given)[:200]} cannot be imported as {tool} results ({type(exc).__name__}: "
                                  f"{' '.join(str(exc).split())[:160]})") from exc

    wrapper.__name__, wrapper.__doc__, wrapper.__qualname__ = read.__name__, read.__doc__, read.__qualname__
    wrapper.__wrapped__ = read  # type: ignore[attr-defined]
    return wrapper
