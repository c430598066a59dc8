"""The base of every error judgelab raises on purpose, and the guard on the public functions' arguments.

Errors a user can cause and fix (a bad file, an unknown rubric, a missing field, an option out of
range) derive from :class:`JudgelabError`; the CLI prints those as one sentence and exits 2. Any
other exception is a bug and keeps its traceback.

:func:`user_errors` wraps a public function (the package facades apply it: ``judgelab.stats``,
``judgelab.datasets``, the probes, the ensembles) so that the mistakes a caller can make with its
arguments end in a :class:`JudgelabError` naming the argument: a value of the wrong type (read from the
function's annotations), an option outside a ``Literal``, a frame without a column the function reads,
an empty frame the function cannot use. It never hides a bug: anything else passes through unchanged,
and a translated error chains the original exception (``raise ... from``).
"""

from __future__ import annotations

import collections.abc
import functools
import inspect
import numbers
import os
import pathlib
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["ArgumentTypeError", "ConfigError", "EmptyFrameError", "JudgelabError", "MissingColumnError",
           "user_errors"]


class JudgelabError(Exception):
    """An error judgelab raised on purpose; the message says what to change."""


class ConfigError(JudgelabError, ValueError):
    """An option of a run, a probe or a command that cannot be used as given."""


class ArgumentTypeError(JudgelabError, TypeError):
    """An argument of a type the function does not take (a number where a table goes ...)."""


class MissingColumnError(JudgelabError, KeyError):
    """A frame without a column the function reads."""

    def __str__(self) -> str:  # KeyError quotes its message; this is a sentence
        return str(self.args[0]) if self.args else ""


class EmptyFrameError(JudgelabError, ValueError):
    """A frame with no rows, given to a function that needs some."""


F = TypeVar("F", bound=Callable[..., Any])
_UNCHECKED = object()  # an annotation the guard does not check (Any, a protocol, an array-like ...)


def _frame_type() -> type | None:
    try:
        import pandas as pd  # imported here: judgelab.errors stays importable without pandas loaded
    except ImportError:  # pragma: no cover - pandas is a dependency
        return None
    return pd.DataFrame


def _predicate(annotation: Any) -> Any:
    """A check ``value -> bool`` for an annotation, or _UNCHECKED when it cannot be checked cheaply and surely."""
    if annotation is Any or isinstance(annotation, TypeVar):
        return _UNCHECKED
    if annotation is None or annotation is type(None):
        return lambda v: v is None
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        options = typing.get_args(annotation)
        return lambda v: any(v is o or (type(v) is type(o) and v == o) for o in options)
    if origin in (typing.Union, types.UnionType):
        parts = [_predicate(a) for a in typing.get_args(annotation)]
        if any(p is _UNCHECKED for p in parts):
            return _UNCHECKED
        return lambda v: any(p(v) for p in parts)
    if annotation is bool:
        return lambda v: isinstance(v, bool) or type(v).__name__ == "bool_"
    if annotation is int:
        return lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)
    if annotation is float:
        return lambda v: isinstance(v, numbers.Real) and not isinstance(v, bool)
    if annotation is str:
        return lambda v: isinstance(v, str)
    if annotation in (os.PathLike, "os.PathLike") or origin is os.PathLike:
        return lambda v: isinstance(v, str | os.PathLike)
    frame = _frame_type()
    if origin in (collections.abc.Sequence, collections.abc.Iterable, list, tuple):
        items = typing.get_args(annotation)

        def listed(v: Any) -> bool:  # a table is not a list of names, even though it iterates over its columns
            return not isinstance(v, str | bytes) and not (frame is not None and isinstance(v, frame)) \
                and isinstance(v, collections.abc.Iterable)

        if origin is tuple and items and items[-1] is not Ellipsis:  # a fixed-length tuple: (alpha, delta) ...
            each = [_predicate(a) for a in items]
            if any(e is _UNCHECKED for e in each):
                return listed
            return lambda v: listed(v) and iter(v) is not v and len(list(v)) == len(each) and all(
                e(x) for e, x in zip(each, v, strict=True))
        element = _predicate(items[0]) if items else _UNCHECKED
        if element is _UNCHECKED:
            return listed
        # elements are checked unless v is an iterator, which checking would consume
        return lambda v: listed(v) and (iter(v) is v or all(element(x) for x in v))
    if origin in (collections.abc.Mapping, dict):
        return lambda v: isinstance(v, collections.abc.Mapping)
    if frame is not None and annotation is frame:
        return lambda v: isinstance(v, frame)
    if inspect.isclass(annotation) and annotation.__module__.startswith("pandas"):  # a Series, an Index ...
        return lambda v: isinstance(v, annotation)
    if annotation is pathlib.Path:
        return lambda v: isinstance(v, str | os.PathLike)
    if inspect.isclass(annotation) and annotation.__module__.startswith("judgelab.") and not getattr(
            annotation, "_is_protocol", False):
        return lambda v: isinstance(v, annotation)  # judgelab's own records (DatasetResult, EscalationRule ...)
    return _UNCHECKED


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{type(value).__name__} ({text[:40]}...)"


def _frames(bound: inspect.BoundArguments) -> dict[str, Any]:
    frame = _frame_type()
    return {name: v for name, v in bound.arguments.items() if frame is not None and isinstance(v, frame)}


def user_errors(func: F) -> F:
    """``func`` with its arguments guarded: the caller's mistakes become :class:`JudgelabError` (see the module).

    The function runs first, so its own checks (and their error classes) stand. When it fails with anything
    but a JudgelabError, the arguments are examined: one outside its annotation (DataFrame, str, bool, int,
    float, ``Literal``, sequences, mappings, judgelab's records, unions of these) or a negative ``seed`` ->
    :class:`ArgumentTypeError` / :class:`ConfigError`; a ``KeyError`` naming a column absent from the frame
    arguments -> :class:`MissingColumnError`; an empty frame argument -> :class:`EmptyFrameError`; anything
    else is a bug and is re-raised unchanged. A call that succeeds with an option outside its ``Literal``
    raises :class:`ConfigError` (an unknown option is never run silently).
    """
    signature = inspect.signature(func)
    name = getattr(func, "__qualname__", getattr(func, "__name__", "function"))
    checks: dict[str, Any] | None = None

    def predicates() -> dict[str, Any]:
        nonlocal checks
        if checks is None:
            try:
                hints = typing.get_type_hints(func)
            except Exception:  # an annotation that does not evaluate here: check nothing rather than guess
                hints = {}
            checks = {p: pred for p, hint in hints.items() if p in signature.parameters
                      and (pred := _predicate(hint)) is not _UNCHECKED}
        return checks

    def mismatch(bound: inspect.BoundArguments) -> JudgelabError | None:
        """The first argument outside its annotation (or a negative seed), as the error to raise."""
        for param, ok in predicates().items():
            if param in bound.arguments and not ok(bound.arguments[param]):
                hint = typing.get_type_hints(func).get(param)
                error = ConfigError if _names_options(hint) else ArgumentTypeError  # an option, or a type
                return error(f"{name}(): {param} must be {_describe(hint)}, got {_shown(bound.arguments[param])}")
        seed = bound.arguments.get("seed")  # the one seed= convention: numpy's generators take no negative seed
        if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed < 0:
            return ConfigError(f"{name}(): seed must be a whole number >= 0, got {seed}")
        return None

    def diagnosis(bound: inspect.BoundArguments, exc: Exception) -> JudgelabError | None:
        """What in the arguments made ``func`` fail with ``exc`` (None: nothing there; the failure is a bug)."""
        found = mismatch(bound)
        if found is not None:
            return found
        frames = _frames(bound)
        key = exc.args[0] if isinstance(exc, KeyError) and exc.args else None
        lacking = [p for p, f in frames.items() if isinstance(key, str) and key not in f.columns]
        if lacking and len(lacking) == len(frames):
            columns = list(map(str, frames[lacking[0]].columns))
            shown = ", ".join(columns[:12]) + (" ..." if len(columns) > 12 else "") if columns else "none"
            return MissingColumnError(f"{name}(): the frame given as {lacking[0]} has no column {key!r}, which this "
                                      f"function reads (its columns: {shown})")
        empty = [p for p, f in frames.items() if len(f) == 0]
        if empty:
            return EmptyFrameError(f"{name}(): the frame given as {empty[0]} has no rows")
        return None

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentTypeError(f"{name}(): {exc}; see help({name.split('.')[0]})") from exc
        try:
            result = func(*bound.args, **bound.kwargs)
        except JudgelabError:
            raise  # the function's own check said it: its class and its sentence stand
        except Exception as exc:
            found = diagnosis(bound, exc)
            if found is None:
                raise
            raise found from exc
        found = mismatch(bound)
        if isinstance(found, ConfigError):  # an option outside its Literal was accepted: never run it silently
            raise found
        return result

    return typing.cast(F, guarded)


def _names_options(hint: Any) -> bool:
    """Whether the annotation lists the allowed values (a Literal, possibly in a union)."""
    if typing.get_origin(hint) is typing.Literal:
        return True
    return typing.get_origin(hint) in (typing.Union, types.UnionType) and any(
        typing.get_origin(a) is typing.Literal for a in typing.get_args(hint))


def _describe(hint: Any) -> str:
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(o) for o in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if hint is None or hint is type(None):
        return "None"
    frame = _frame_type()
    if frame is not None and hint is frame:
        return "a pandas DataFrame"
    if origin in (collections.abc.Sequence, collections.abc.Iterable, list, tuple):
        items = typing.get_args(hint)
        return "a list of names" if items == (str,) else "a list"
    if origin in (collections.abc.Mapping, dict):
        return "a mapping (dict)"
    if origin is not None:
        return f"a {getattr(origin, '__name__', str(origin))}"
    names = {str: "a string", int: "a whole number", float: "a number", bool: "True or False",
             pathlib.Path: "a path"}
    return names.get(hint, f"a {getattr(hint, '__name__', str(hint))}")
