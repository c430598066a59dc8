"""A release split over many files, read as one frame: ``{field}`` placeholders in a path become columns.

Released judge data is often one file per judge, system, criterion or strategy, with those names only in
the path (``eval_M8_generations/coherence_rts.txt``, ``evaluators/GPT-4/Vanilla/result.json``,
``model_judgment/gpt-4_pair.jsonl``). :func:`judgelab.datasets.read_frame` and
:func:`judgelab.from_frame` take such a path as a pattern::

    read_frame("LLM_summeval/eval_model_generations/{judge}/eval_{system}_generations/{criterion}_rts.txt")

Each ``{name}`` matches one path segment's part (never a ``/``) and becomes a text column ``name`` holding
what it matched; ``*`` and ``?`` match without naming. The files are read in sorted path order, one after
another, as :func:`read_frame` reads one file, and a row is named in messages by its file and line. A
pattern that matches no file, names a field twice, or names a field that is also a column of a file is
one :class:`FrameImportError`.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from judgelab.datasets.frame_text import FrameImportError

__all__ = ["FIELD", "is_pattern", "read_pattern"]

FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_WILDCARDS = ("*", "?")

ReadOne = Callable[[Path], tuple[pd.DataFrame, list[str] | None]]


def is_pattern(path: str) -> bool:
    """Whether a path names several files: it holds a ``{field}`` placeholder or a ``*`` / ``?`` wildcard."""
    return bool(FIELD.search(path)) or any(w in path for w in _WILDCARDS)


def _compile(pattern: str) -> tuple[str, re.Pattern[str], list[str]]:
    """The glob that lists candidate files, the regex that reads the fields from a path, and the field names."""
    fields: list[str] = []
    globbed: list[str] = []
    regex: list[str] = []
    last = 0
    for m in FIELD.finditer(pattern):
        literal = pattern[last:m.start()]
        globbed.append(_glob_literal(literal))
        regex.append(_regex_literal(literal))
        name = m.group(1)
        if name in fields:
            raise FrameImportError(f"the path pattern {pattern!r} names the field {{{name}}} twice; name each part "
                                   "once (use * for a part that repeats)")
        fields.append(name)
        globbed.append("*")
        regex.append(f"(?P<{name}>[^/\\\\]+?)")
        last = m.end()
    globbed.append(_glob_literal(pattern[last:]))
    regex.append(_regex_literal(pattern[last:]))
    return "".join(globbed), re.compile("".join(regex)), fields


def _glob_literal(text: str) -> str:
    # "[" in a real folder name is not a character class here; * and ? stay wildcards
    return text.replace("[", "[[]")


def _regex_literal(text: str) -> str:
    return re.escape(text).replace(r"\*", r"[^/\\]*").replace(r"\?", r"[^/\\]")


def read_pattern(pattern: str, read_one: ReadOne) -> tuple[pd.DataFrame, list[str]]:
    """Every file the pattern matches, read by ``read_one`` and stacked, with the fields as text columns; and
    each row's place ("<file> line 7")."""
    globbed, regex, fields = _compile(pattern)
    matched = []
    for name in sorted(glob.glob(globbed)):
        m = regex.fullmatch(name)
        if m is not None and Path(name).is_file():
            matched.append((name, m.groupdict()))
    if not matched:
        folder = Path(globbed).parent
        while any(w in str(folder) for w in _WILDCARDS) and folder != folder.parent:
            folder = folder.parent
        where = f"(the folder {folder} exists)" if folder.is_dir() else f"(no folder {folder})"
        raise FrameImportError(f"no file matches the path pattern {pattern!r} {where}; each {{field}} and * "
                               "matches part of one path segment")
    frames: list[pd.DataFrame] = []
    places: list[str] = []
    for name, values in matched:
        frame, lines = read_one(Path(name))
        clash = [f for f in fields if f in frame.columns]
        if clash:
            raise FrameImportError(f"the path pattern's field {{{clash[0]}}} is also a column of {name}; rename the "
                                   "field in the pattern")
        frame = frame.reset_index(drop=True)
        for field in fields:
            frame[field] = values[field]
        frames.append(frame)
        shown = Path(name).name
        places += [f"{shown} {line}" for line in lines] if lines is not None else \
            [f"{shown} row {k + 1}" for k in range(len(frame))]
    out = pd.concat(frames, ignore_index=True, sort=False)
    for field in fields:
        out[field] = out[field].astype(object)
    return out, places
