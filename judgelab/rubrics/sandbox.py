"""Rubric templates are data: the one Jinja environment every rubric template is rendered in.

A rubric file is something researchers share, and a run folder names the rubric it was run with, so a
template is read like any other file from someone else: it may lay out text, never run anything. Every
template judgelab renders (built-in, a user's rubric file, a variant, whatever a run folder names) goes
through :class:`TemplateSandbox`, Jinja's immutable sandbox made stricter:

* **Plain data in.** The context is copied to plain values (text, numbers, booleans, None, lists, dicts);
  no Python object (a pydantic model, an array, a module) reaches a template.
* **An explicit vocabulary.** No globals at all (not ``range``, ``dict``, ``lipsum``, ``cycler``,
  ``joiner`` nor ``namespace``); the filters are :data:`FILTERS` plus the rubric's own (``fence``,
  ``neutralize``), the tests :data:`TESTS`. A template reads attributes only of plain values: a dict's
  keys and ``get``/``items``/``keys``/``values``, a handful of non-growing text methods, the ``loop``
  counters, an imported template's macros. Anything starting with ``_`` is refused when the template is
  compiled, before any item is seen. It calls only its own macros and those methods; ``str.format`` and
  ``%``-formatting of text are refused.
* **Files beside the rubric only.** ``{% include %}``, ``{% import %}`` and ``{% extends %}`` load a
  ``.j2`` file in the rubric's folder (or below it), or ``builtin:NAME.j2``; an absolute path, ``..``, a
  symlink that leaves the folder, or anything that is not a regular ``.j2`` file is refused.
* **Bounded.** One render may take :data:`MAX_STEPS` loop iterations and calls, build no text longer than
  :data:`MAX_TEXT` characters, produce at most :data:`MAX_WORK` characters in all, and compute no integer
  wider than :data:`MAX_INT_BITS` bits: a huge loop, a string multiplied a billion times, ``10**10**10`` or
  a runaway macro is refused in milliseconds instead of hanging.

Every failure, whatever its kind (a syntax error, an undefined variable, a refused attribute, a limit), is
a :class:`RubricTemplateError` of one sentence naming the rubric, the template field and the line; a
refusal (the template tried something a template may not do) is its subclass :class:`TemplateRefusedError`.
"""

from __future__ import annotations

import contextvars
import functools
import re
import secrets
import time
import traceback
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.defaults import DEFAULT_NAMESPACE, DEFAULT_TESTS
from jinja2.meta import find_undeclared_variables
from jinja2.runtime import BlockReference, LoopContext, Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from judgelab.conversations.messages import looks_like_messages
from judgelab.conversations.render import DEFAULT_MAX_TOOL_CHARS, render_conversation
from judgelab.rubrics.spec import RubricSpecError

__all__ = [
    "BUILTIN_PREFIX", "FILTERS", "MAX_INT_BITS", "MAX_SECONDS", "MAX_STEPS", "MAX_TEMPLATE_FILE_BYTES", "MAX_TEXT", "MAX_WORK",
    "RubricTemplateError", "Splice", "TESTS", "TemplateRefusedError", "TemplateSandbox", "compiled",
    "included_sources", "plain", "render", "resolve_template_file", "splice", "static_check", "template_error",
]

MAX_SECONDS = 10.0  # wall-clock time of one render (a built-in prompt takes about a millisecond)
MAX_STEPS = 50_000  # loop iterations plus calls (macros, methods) in one render (a built-in prompt takes < 200)
MAX_TEXT = 8_000_000  # characters of any text a template builds, the rendered prompt included (> any context window)
MAX_WORK = 32_000_000  # characters produced by all the text operations of one render
MAX_INT_BITS = 256  # widest integer a template may compute (prompts hold small numbers)
MAX_ITEMS = 100_000  # longest list a template may build (``[x] * n``, ``a + b``)
MAX_DEPTH = 64  # nesting of the data a template is given (deeper is a recursive structure, e.g. YAML aliases)
MAX_TEMPLATE_FILE_BYTES = 1_000_000  # a template file larger than this is not a template
BUILTIN_PREFIX = "builtin:"

# what a template may read from plain values (attributes starting with "_" never)
_DICT_METHODS = frozenset({"get", "items", "keys", "values"})
_TEXT_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "startswith",
                           "endswith"})
_LOOP_FIELDS = frozenset({"index", "index0", "revindex", "revindex0", "first", "last", "length", "depth", "depth0",
                          "previtem", "nextitem"})


class RubricTemplateError(RubricSpecError):
    """A rubric template that cannot be compiled or rendered; one sentence naming the rubric, field and line."""


class TemplateRefusedError(RubricTemplateError):
    """A template that tried something templates may not do (read a hidden attribute, call an unknown
    function, load a file outside the rubric's folder, exceed a limit)."""


class _Refused(SecurityError):
    """Raised inside rendering; :func:`render` turns it into a :class:`TemplateRefusedError` sentence."""


class _RefusedAtCompile(jinja2.TemplateAssertionError):
    """A construct refused when the template is compiled (a hidden attribute, a file outside the folder)."""


# ------------------------------------------------------------------------------ the budget of one render
@dataclass
class _Budget:
    steps: int = 0
    work: int = 0
    # the clock bounds what the counts cannot see (comparing or searching long texts inside a loop)
    deadline: float = field(default_factory=lambda: time.monotonic() + MAX_SECONDS)

    def step(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > MAX_STEPS:
            raise _Refused(f"it takes more than {MAX_STEPS:,} loop iterations and calls")
        if time.monotonic() > self.deadline:
            raise _Refused(f"it takes more than {MAX_SECONDS:g} s to render")

    def produce(self, size: int) -> None:
        if size > MAX_TEXT:
            raise _Refused(f"it builds a text of more than {MAX_TEXT:,} characters")
        self.work += size
        if self.work > MAX_WORK:
            raise _Refused(f"its text operations produce more than {MAX_WORK:,} characters")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("judgelab_template_budget", default=None)


def _budget() -> _Budget:
    budget = _BUDGET.get()
    # a hook runs only while a template renders, and every render sets a budget (_BoundedTemplate.render);
    # compile-time constant folding (finalize) runs with none and costs nothing to count
    return budget if budget is not None else _Budget()


def _check_text(text: str) -> str:
    _budget().produce(len(text))
    return text


def _check_int(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise _Refused(f"it computes an integer wider than {MAX_INT_BITS} bits")
    return value


# ------------------------------------------------------------------------------ filters and tests
def _text(value: Any) -> str:
    """A value as text; a function or method is not text (printing one would show a memory address), and a list
    or dict whose text would pass :data:`MAX_TEXT` is refused before that text is built."""
    if isinstance(value, str):
        return value
    if looks_like_messages(value):  # a conversation printed as it is: the one renderer, fenced and escaped
        return render_conversation(value)
    if callable(value) and not isinstance(value, jinja2.Undefined | LoopContext):
        name = getattr(value, "__name__", None) or getattr(value, "name", None) or type(value).__name__
        raise jinja2.TemplateRuntimeError(f"it prints the function {name!r} (call it, or leave it out)")
    if isinstance(value, list | tuple | dict) and _text_size(value, MAX_TEXT) > MAX_TEXT:
        raise _Refused(f"it prints a {type(value).__name__} whose text is longer than {MAX_TEXT:,} characters")
    return str(value)


def _text_size(value: Any, limit: int) -> int:
    """An upper bound of ``len(str(value))`` for plain data, counted only until it passes ``limit``."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += 2 * len(item) + 2  # its quotes, and an escape for each newline or quote
        elif isinstance(item, dict):
            total += 2 + 2 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            total += 2 + 2 * len(item)
            stack.extend(item)
        else:
            total += 32
    return total


def _join(value: Iterable[Any], d: str = "") -> str:
    parts = [_text(v) for v in value]
    size = sum(len(p) for p in parts) + len(_text(d)) * max(len(parts) - 1, 0)
    _budget().produce(size)
    return _text(d).join(parts)


def _replace(value: Any, old: Any, new: Any, count: int | None = None) -> str:
    text, old, new = _text(value), _text(old), _text(new)
    n = text.count(old) if old else len(text) + 1
    if count is not None:
        n = min(n, max(int(count), 0))
    _budget().produce(len(text) + n * (len(new) - len(old)))
    return text.replace(old, new, -1 if count is None else max(int(count), 0))


def _capitalize(value: Any) -> str:
    return _check_text(_text(value).capitalize())


def _conversation(value: Any, max_tool_chars: int = DEFAULT_MAX_TOOL_CHARS, upto_turn: int | None = None) -> str:
    """A chat-message list as fenced, escaped text (judgelab.conversations.render): the one way a template shows
    a conversation; a list that is not one is refused in one sentence."""
    return render_conversation(value, max_tool_chars=max_tool_chars, upto_turn=upto_turn)


# the filters the built-in templates use besides the rubric's own fence / neutralize (an inventory of
# judgelab/rubrics/builtin, the demo's and the tests' templates; tests/reliability/test_templates_sandbox.py
# keeps this list equal to what they use)
FILTERS: dict[str, Callable[..., Any]] = {"capitalize": _capitalize, "join": _join, "length": len,
                                           "replace": _replace, "conversation": _conversation}
# predicates that only look at a value: the idioms for optional fields
TESTS: dict[str, Callable[..., Any]] = {name: DEFAULT_TESTS[name] for name in ("defined", "undefined", "none")}
# names a template may not use unless it defines them: Jinja's default globals and the usual entry points of
# template injection (the sandbox has no globals, so these could only be an attempt to reach Python)
GADGET_NAMES = frozenset({*DEFAULT_NAMESPACE, "self", "config", "request", "session", "g", "url_for",
                          "get_flashed_messages", "environ", "os", "sys", "subprocess", "builtins", "globals",
                          "locals", "getattr", "eval", "exec", "open", "import"})


def _bounded_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose text result is counted against the render's budget."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _budget().step()
        result = func(*args, **kwargs)
        if isinstance(result, str) and func not in (_join, _replace, _capitalize):  # those count their own
            _budget().produce(len(result))
        return result

    return wrapper


# ------------------------------------------------------------------------------ plain data in
class _PlainDict(dict):  # type: ignore[type-arg]
    """A dict :func:`plain` built: everything inside is plain already (walked once, not at every render)."""

    __slots__ = ()


class _PlainList(list):  # type: ignore[type-arg]
    __slots__ = ()


class _PlainTuple(tuple):  # type: ignore[type-arg]
    __slots__ = ()


_MADE_PLAIN = (_PlainDict, _PlainList, _PlainTuple)
for _cls, _shown in zip(_MADE_PLAIN, ("dict", "list", "tuple"), strict=True):
    # Jinja names a value's type in its messages ("'dict object' has no attribute 'x'"): name them as the user sees them
    _cls.__module__, _cls.__name__, _cls.__qualname__ = "builtins", _shown, _shown
_SCALARS = (str, bool, int, float)


def plain(value: Any) -> Any:
    """``value`` as plain data a template may see: text, numbers, booleans, None, lists, tuples and dicts with
    text or integer keys (subclasses become the base type); a pydantic model becomes its fields, a numpy value
    its Python value, anything else its text. Data nested deeper than :data:`MAX_DEPTH` or holding more than
    :data:`MAX_STEPS` values (a recursive or alias-expanded structure) is refused. The containers it returns
    are marked, so handing them to :func:`plain` again costs nothing (a rubric's fixed context is walked once)."""
    count = 0

    def walk(value: Any, depth: int) -> Any:
        nonlocal count
        count += 1
        if depth > MAX_DEPTH or count > MAX_STEPS:
            raise _Refused(f"its data nests deeper than {MAX_DEPTH} levels or holds more than {MAX_STEPS:,} values")
        kind = type(value)
        if value is None or kind in _SCALARS or kind in _MADE_PLAIN:
            return value
        for scalar in _SCALARS[::-1]:  # a subclass (numpy.str_, an enum) as its base type; bool before int
            if isinstance(value, scalar):
                return scalar(value)
        if isinstance(value, Mapping):
            return _PlainDict({k if type(k) in (str, int) else str(k): walk(v, depth + 1) for k, v in value.items()})
        if isinstance(value, tuple):
            return _PlainTuple(walk(v, depth + 1) for v in value)
        if isinstance(value, list | set | frozenset):
            return _PlainList(walk(v, depth + 1) for v in value)
        if hasattr(value, "model_dump"):  # a pydantic model (the rubric's spec)
            return walk(value.model_dump(), depth + 1)
        if callable(getattr(value, "tolist", None)):  # numpy scalars and arrays
            return walk(value.tolist(), depth + 1)
        return str(value)

    return walk(value, 0)


# ------------------------------------------------------------------------------ files beside the rubric
def resolve_template_file(folder: Path, name: str, builtin_dir: Path) -> Path:
    """The ``.j2`` file ``name`` names, inside ``folder`` (or ``builtin:NAME.j2`` in ``builtin_dir``).

    Raises ``_Refused`` for anything else: not text, empty, absolute, ``..``, a backslash or NUL, not
    ``.j2``, a symlink leaving the folder, not a regular file, larger than :data:`MAX_TEMPLATE_FILE_BYTES`;
    ``jinja2.TemplateNotFound`` when it does not exist.
    """
    if not isinstance(name, str) or not name.strip():
        raise _Refused(f"it names a template {name!r} that is not a file name")
    base, rel = (builtin_dir, name[len(BUILTIN_PREFIX):]) if name.startswith(BUILTIN_PREFIX) else (folder, name)
    outside = (PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive
               or "\\" in rel or "\x00" in rel or ".." in PurePosixPath(rel).parts)
    if outside:
        raise _Refused(f"it loads {name!r}, a path outside the rubric's folder (only .j2 files beside the "
                       "rubric file can be included, imported or extended)")
    if not rel.endswith(".j2"):
        raise _Refused(f"it loads {name!r}, which is not a .j2 template file")
    root = base.resolve()
    path = (root / rel).resolve()
    if not path.is_relative_to(root):
        raise _Refused(f"it loads {name!r}, which leads outside the rubric's folder (a symlink)")
    if not path.exists():
        raise jinja2.TemplateNotFound(name)
    if not path.is_file():
        raise _Refused(f"it loads {name!r}, which is not a regular file")
    if path.stat().st_size > MAX_TEMPLATE_FILE_BYTES:
        raise _Refused(f"it loads {name!r}, larger than {MAX_TEMPLATE_FILE_BYTES:,} bytes")
    return path


class _FolderLoader(jinja2.BaseLoader):
    """Templates named relative to one folder, through :func:`resolve_template_file`."""

    def __init__(self, folder: Path, builtin_dir: Path) -> None:
        self.folder, self.builtin_dir = folder, builtin_dir

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        path = resolve_template_file(self.folder, template, self.builtin_dir)
        mtime = path.stat().st_mtime_ns
        source = path.read_text(encoding="utf-8")

        def uptodate() -> bool:
            try:
                return path.stat().st_mtime_ns == mtime
            except OSError:
                return False

        return source, str(path), uptodate


# ------------------------------------------------------------------------------ compiling
_INCLUDES = (nodes.Include, nodes.Import, nodes.FromImport, nodes.Extends)


def static_check(env: TemplateSandbox, tree: nodes.Template, name: str | None, filename: str | None) -> None:
    """Refuse, before rendering, what no template may do: read a name starting with ``_`` as an attribute or a
    constant key, use a name of :data:`GADGET_NAMES` it does not define, include/import/extend a constant
    name outside the rubric's folder."""
    undeclared = find_undeclared_variables(tree)
    # "self" is Jinja's own (never undeclared); a name it does not define starting with "_" (__builtins__) is hidden
    gadgets = GADGET_NAMES & undeclared | {"self"} | {n for n in undeclared if n.startswith("_")}
    for node in tree.find_all(nodes.Name):
        if node.ctx == "load" and node.name in gadgets:
            raise _RefusedAtCompile(f"it uses {node.name!r}, which templates do not have (they have no globals)",
                                    node.lineno, name, filename)
    for node in tree.find_all((nodes.Getattr, nodes.Getitem, *_INCLUDES)):
        hidden = None
        if isinstance(node, nodes.Getattr):
            hidden = node.attr
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            hidden = node.arg.value
        if hidden is not None and hidden.startswith("_"):
            raise _RefusedAtCompile(f"it reads the hidden attribute {hidden!r}", node.lineno, name, filename)
        if isinstance(node, _INCLUDES) and isinstance(node.template, nodes.Const):
            targets = node.template.value if isinstance(node.template.value, list | tuple) else [node.template.value]
            for target in targets:
                try:
                    env.loader.get_source(env, target)  # type: ignore[union-attr]
                except _Refused as refused:
                    raise _RefusedAtCompile(str(refused), node.lineno, name, filename) from None
                except jinja2.TemplateNotFound:
                    if not getattr(node, "ignore_missing", False):
                        raise _RefusedAtCompile(f"it loads {target!r}, which does not exist beside the rubric file",
                                                node.lineno, name, filename) from None


def included_sources(env: TemplateSandbox, sources: Iterable[str]) -> dict[str, str]:
    """name -> text of every template ``sources`` include, import or extend by a constant name, recursively (part
    of a rubric's fingerprint: editing an included file changes the rubric)."""
    found: dict[str, str] = {}
    pending = list(sources)
    while pending:
        tree = env.parse(pending.pop())
        for node in tree.find_all(_INCLUDES):
            value = node.template.value if isinstance(node.template, nodes.Const) else None
            for target in value if isinstance(value, list | tuple) else [value]:
                if isinstance(target, str) and target not in found:
                    try:
                        found[target] = env.loader.get_source(env, target)[0]  # type: ignore[union-attr]
                    except jinja2.TemplateNotFound:  # "ignore missing": nothing to fingerprint
                        continue
                    pending.append(found[target])
    return dict(sorted(found.items()))


class _BoundedCodeGenerator(CodeGenerator):
    """Jinja's code generator, with every loop's iterable counted and every ``~`` concatenation measured."""

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        static_check(self.environment, node, self.name, self.filename)  # type: ignore[arg-type]
        for loop in node.find_all(nodes.For):
            loop.iter = nodes.Call(nodes.EnvironmentAttribute("counted", lineno=loop.lineno), [loop.iter], [], None,
                                   None, lineno=loop.lineno)
            loop.iter.set_environment(self.environment)
        super().visit_Template(node, frame)

    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if not isinstance(node.arg, nodes.Slice):
            return super().visit_Getitem(node, frame)
        # Jinja writes x[a:b] as plain Python; here a slice goes through the environment and is counted
        self.write("environment.getitem(")
        self.visit(node.node, frame)
        self.write(", slice(")
        for k, part in enumerate((node.arg.start, node.arg.stop, node.arg.step)):
            self.write(", " if k else "")
            if part is None:
                self.write("None")
            else:
                self.visit(part, frame)
        self.write("))")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.concat_parts((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _BoundedTemplate(jinja2.Template):
    """A template whose every render (also one called directly) runs under a fresh budget."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        if _BUDGET.get() is not None:
            return super().render(*args, **kwargs)
        token = _BUDGET.set(_Budget())
        try:
            return super().render(*args, **kwargs)
        finally:
            _BUDGET.reset(token)


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """The sandboxed environment of one rubric (see the module docstring); ``folder`` is the rubric's folder,
    ``filters`` the rubric's own (``fence``, ``neutralize``)."""

    code_generator_class = _BoundedCodeGenerator
    template_class = _BoundedTemplate
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, folder: Path, builtin_dir: Path, filters: Mapping[str, Callable[..., Any]]) -> None:
        super().__init__(loader=_FolderLoader(folder, builtin_dir), undefined=jinja2.StrictUndefined,
                         autoescape=False,  # prompts are plain text; untrusted text goes through fence/neutralize
                         keep_trailing_newline=False, trim_blocks=True, lstrip_blocks=True, auto_reload=True,
                         finalize=_finalize)
        self.globals.clear()  # no range, dict, lipsum, cycler, joiner, namespace
        self.filters = {name: _bounded_filter(f) for name, f in {**FILTERS, **filters}.items()}
        self.tests = dict(TESTS)

    # ---- what a template may read and call
    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("_"):
            return False
        if isinstance(obj, str):
            return attr in _TEXT_METHODS
        if isinstance(obj, dict):
            return attr in _DICT_METHODS
        if isinstance(obj, LoopContext):
            return attr in _LOOP_FIELDS
        if isinstance(obj, jinja2.environment.TemplateModule):
            return attr in vars(obj)  # what an imported template exports: its macros and variables
        return False

    def is_safe_callable(self, obj: Any) -> bool:
        if isinstance(obj, Macro | BlockReference):
            return True
        if isinstance(obj, types.BuiltinMethodType | types.MethodType):
            owner = getattr(obj, "__self__", None)
            if owner is self:
                return obj.__name__ == "counted"
            if isinstance(owner, str):
                return obj.__name__ in _TEXT_METHODS
            if isinstance(owner, dict):
                return obj.__name__ in _DICT_METHODS
        return False

    def wrap_str_format(self, value: Any) -> None:
        return None  # str.format / format_map are refused like any other method (widths make huge texts)

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        raise _Refused(f"it reads the attribute {attribute!r} of a {type(obj).__name__} value")

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 (Jinja's signature)
        _budget().step()
        if isinstance(__obj, jinja2.Undefined):  # x.zfill() on a dict, myfunc(): what templates do not have
            name = getattr(__obj, "_undefined_name", None) or "an undefined name"
            raise _Refused(f"it calls {name!r}, which templates do not have (they call only their own macros and a "
                           "few text and dict methods)")
        if not __self.is_safe_callable(__obj):
            what = getattr(__obj, "__name__", None) or type(__obj).__name__
            raise _Refused(f"it calls {what!r}, which templates may not call")
        result = __context.call(__obj, *args, **kwargs)
        return _check_text(result) if isinstance(result, str) and __obj.__class__ is not Macro else result

    def getitem(self, obj: Any, argument: Any) -> Any:
        """``x[i]`` and ``x[a:b]``; a slice is a new text or list, counted like any other."""
        value = super().getitem(obj, argument)
        if isinstance(argument, slice) and isinstance(value, str | list | tuple):
            _budget().step()
            _budget().produce(len(value))
        return value

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _budget().step()
        if operator == "%" and isinstance(left, str):
            raise _Refused("it %-formats text")
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            if right * left.bit_length() > MAX_INT_BITS * 2:
                raise _Refused(f"it computes an integer wider than {MAX_INT_BITS} bits")
        if operator == "*":
            for seq, n in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(n, int):
                    limit = MAX_TEXT if isinstance(seq, str) else MAX_ITEMS
                    if len(seq) * max(n, 0) > limit:
                        raise _Refused(f"it repeats a {type(seq).__name__} beyond {limit:,} "
                                       f"{'characters' if isinstance(seq, str) else 'items'}")
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INT_BITS * 2:
                raise _Refused(f"it computes an integer wider than {MAX_INT_BITS} bits")
        if operator == "+" and isinstance(left, list | tuple) and isinstance(right, list | tuple):
            if len(left) + len(right) > MAX_ITEMS:
                raise _Refused(f"it builds a list of more than {MAX_ITEMS:,} items")
        result = self.binop_table[operator](left, right)
        return _check_text(result) if isinstance(result, str) else _check_int(result)

    # ---- hooks the generated code calls
    def counted(self, iterable: Any) -> Iterator[Any]:
        """A loop's iterable, each iteration counted against the render's budget."""
        budget = _budget()
        for value in iterable:
            budget.step()
            yield value

    def concat_parts(self, parts: Iterable[Any]) -> str:
        """The ``~`` operator, measured."""
        texts = [_text(p) for p in parts]
        _budget().produce(sum(len(t) for t in texts))
        return "".join(texts)

    def concat(self, parts: Iterable[str]) -> str:  # type: ignore[override]  # an attribute in Jinja
        """Every buffer the template joins (its output, a macro's, a block's), measured as it grows."""
        out: list[str] = []
        size = 0
        for part in parts:
            size += len(part)
            if size > MAX_TEXT:
                raise _Refused(f"it builds a text of more than {MAX_TEXT:,} characters")
            out.append(part)
        _budget().produce(size)
        return "".join(out)


def _finalize(value: Any) -> Any:
    """Every ``{{ value }}`` as text, its size counted (a list or dict printed is a new text)."""
    if isinstance(value, str) or isinstance(value, jinja2.Undefined):
        return value
    return _check_text(_text(value))


# ------------------------------------------------------------------------------ rendering
@functools.lru_cache(maxsize=512)
def compiled(env: TemplateSandbox, source: str) -> jinja2.Template:
    """The template compiled once per environment and source (compiling costs a few ms; a run renders each
    template once per item and order)."""
    return env.from_string(source)


def render(env: TemplateSandbox, source: str, context: Mapping[str, Any], *, where: str) -> str:
    """Render ``source`` with ``context`` (made plain); any failure is one :class:`RubricTemplateError`
    sentence that starts with ``where`` (the rubric and the template field)."""
    try:
        template = compiled(env, source)
        token = _BUDGET.set(_Budget())
        try:
            return template.render(plain(context)).strip()
        finally:
            _BUDGET.reset(token)
    except Exception as exc:  # a template is data: whatever it does wrong is a sentence, never a traceback
        raise template_error(exc, where) from None


def template_error(exc: BaseException, where: str) -> RubricTemplateError:
    """The one sentence for ``exc`` raised while compiling or rendering the template ``where``."""
    refused = isinstance(exc, _Refused | _RefusedAtCompile | SecurityError)
    if isinstance(exc, jinja2.TemplateSyntaxError):
        line, file = exc.lineno, exc.filename
        problem = exc.message or "syntax error"
        unknown = _UNKNOWN.match(problem)
        if unknown:
            kind, which = unknown.groups()
            refused, problem = True, (f"it uses the {kind} {which!r}, which templates do not have (the {kind}s: "
                                      f"{', '.join(_allowed(kind))})")
    else:
        line, file = _template_line(exc)
        problem = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, RecursionError):
        refused, problem = True, "it recurses without end"
    elif isinstance(exc, MemoryError):
        refused, problem = True, "it needs more memory than a prompt may take"
    elif isinstance(exc, jinja2.TemplateNotFound):
        problem = f"it loads {exc.name!r}, which does not exist beside the rubric file"
    elif not refused and not isinstance(exc, jinja2.TemplateError):
        problem = f"{type(exc).__name__}: {problem}"
    at = ""
    if file and not file.startswith("<"):
        at += f" in {Path(file).name}"
    if line:
        at += f", line {line}"
    problem = " ".join(str(problem).split())[:300]
    if refused:
        return TemplateRefusedError(f"{where}{at}: the template was refused: {problem} (templates are data: they lay "
                                    "out the item's fields and the rubric's values and may not reach anything else)")
    return RubricTemplateError(f"{where}{at}: {problem}")


_UNKNOWN = re.compile(r"No (filter|test) named '([^']*)'")


def _allowed(kind: str) -> list[str]:
    # fence and neutralize are every rubric's own filters (judgelab.rubrics.prompting)
    return sorted({*FILTERS, "fence", "neutralize"}) if kind == "filter" else sorted(TESTS)


def _template_line(exc: BaseException) -> tuple[int | None, str | None]:
    """The template line (and file) of the innermost template frame of ``exc``'s traceback (Jinja rewrites
    its frames to point at template lines)."""
    found: tuple[int | None, str | None] = (None, None)
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<template>" or frame.filename.endswith(".j2"):
            found = (frame.lineno, frame.filename)
    return found



# ------------------------------------------------------------------------------ spliced renders (once per rubric)
# A rubric's prompt is mostly the rubric's own text (criteria, instructions, output format); per item only the
# fenced fields change. A dry run over 10^6 items rendering the whole template each time spent ~85 us per item
# in Jinja (context, budget, ~70 finalize calls), so a template whose item-dependent outputs have the simple
# shape below is rendered once per rubric with each of them left as a hole, and each item's prompt is that text
# with the holes filled by the very filter calls the template makes. Anything else renders the full way.
_SPLICE_FILTERS = frozenset({"fence", "neutralize"})  # the rubric's own filters: they use no render budget
_PLAIN_DICTS = (dict, _PlainDict)


@dataclass(frozen=True)
class _Hole:
    """``{{ name }}``, ``{{ name.attr }}`` or either through ``fence``/``neutralize`` with constant arguments."""

    name: str
    attr: str | None
    filter: Callable[..., Any] | None  # the filter's own function (not the budgeted wrapper)
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]

    def text(self, context: Mapping[str, Any]) -> str | None:
        """What the template prints here for ``context``, or None where it would do anything but print a text
        (a missing field raises, a list is printed by other rules): the full render then does it."""
        value = context.get(self.name)
        if self.attr is not None:
            # Jinja's sandbox reads a dict's key through the attribute syntax only when the dict has no such
            # attribute (``item.items`` is the method); those names never reach a hole
            if type(value) not in _PLAIN_DICTS or self.attr not in value:
                return None
            value = value[self.attr]
        if type(value) is not str:
            return None
        if self.filter is None:
            return value  # _finalize prints a text as it is
        try:
            out = self.filter(value, *self.args, **dict(self.kwargs))
        except Exception:  # noqa: BLE001 - the full render raises the one-sentence error
            return None
        return out if type(out) is str else None


@dataclass(frozen=True)
class Splice:
    """A template rendered once with its holes: ``pieces[0] + hole[0] + pieces[1] + ... + pieces[-1]``, stripped,
    is the template's render for a context whose names in ``names`` fill the holes (:func:`splice`)."""

    names: frozenset[str]
    pieces: tuple[str, ...]
    holes: tuple[_Hole, ...]
    steps: int  # the budget the fixed part used (it is the same at every render)
    work: int
    fixed_size: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fixed_size", sum(map(len, self.pieces)))

    def render(self, context: Mapping[str, Any]) -> str | None:
        """The render for ``context`` (the item's names only), or None: render the full way."""
        if not self.holes:  # a template that prints no item field (a system prompt): the same text every time
            return self.pieces[0].strip()
        for name in self.names:  # text, or a dict of texts: plain() would give them to the template as they are
            value = context.get(name)
            if type(value) is not str:
                if type(value) not in _PLAIN_DICTS:
                    return None
                for v in value.values():
                    if type(v) is not str:
                        return None
        texts = []
        for hole in self.holes:
            text = hole.text(context)
            if text is None:
                return None
            texts.append(text)
        size = self.fixed_size + sum(map(len, texts))
        # the full render counts one step per filter call, and each filter's text and the whole output as work;
        # when those could come near a limit, the full render decides (and raises) exactly as it always did
        if size > MAX_TEXT or self.steps + len(texts) > MAX_STEPS or self.work + 2 * size > MAX_WORK:
            return None
        out = [self.pieces[0]]
        for text, piece in zip(texts, self.pieces[1:], strict=True):
            out += (text, piece)
        return "".join(out).strip()


def splice(env: TemplateSandbox, source: str, fixed: Mapping[str, Any], names: Iterable[str]) -> Splice | None:
    """``source`` rendered once with ``fixed`` (the rubric's values), each output of an item name (``names``) left
    as a hole; None when the template is not of that simple shape, or the fixed render fails (the full render then
    raises its sentence at every item, as before).

    Spliced only when every use of an item name is the whole of a ``{{ }}`` at the top level of the template (not
    in a loop, condition, macro or block), of the form ``name``, ``name.attr`` or either through ``fence`` /
    ``neutralize`` with constant arguments, and the template neither binds those names nor includes, imports or
    extends another. Then the fixed text cannot depend on the item, and every hole prints once, in order.
    The limits hold as before: the fixed part runs here under a full budget and clock (a hostile template fails
    here, and then at every full render), and :meth:`Splice.render` leaves to the full render any request whose
    filter calls and output could bring the counted steps, text or work near their limits.
    """
    names = frozenset(names)
    try:
        tree = env.parse(source)
    except Exception:  # noqa: BLE001 - the full render raises its sentence
        return None
    if any(True for _ in tree.find_all(_INCLUDES)):
        return None
    marker = f"\x00{secrets.token_hex(16)}\x01"  # unpredictable, and no prefix of it is a suffix: never overlaps
    holes = []
    for node in tree.body:
        if not isinstance(node, nodes.Output):
            continue
        for i, child in enumerate(node.nodes):
            if not any(n.name in names for n in _names(child)):
                continue
            hole = _hole(env, child, names)
            if hole is None:
                return None
            holes.append(hole)
            node.nodes[i] = nodes.Const(marker, lineno=child.lineno)
    if any(n.name in names for n in tree.find_all(nodes.Name)):  # read, set or bound anywhere else
        return None
    budget = _Budget()
    token = _BUDGET.set(budget)
    try:
        raw = env.from_string(tree).render(plain({k: v for k, v in fixed.items() if k not in names}))
    except Exception:  # noqa: BLE001 - a failing or refused template: the full render raises it per item
        return None
    finally:
        _BUDGET.reset(token)
    if raw.count(marker) != len(holes):
        return None
    return Splice(names, tuple(raw.split(marker)), tuple(holes), budget.steps, budget.work)


def _names(node: nodes.Node) -> list[nodes.Name]:
    return [node] if isinstance(node, nodes.Name) else list(node.find_all(nodes.Name))


def _hole(env: TemplateSandbox, node: nodes.Node, names: frozenset[str]) -> _Hole | None:
    func, args, kwargs = None, (), ()
    if isinstance(node, nodes.Filter):
        if (node.name not in _SPLICE_FILTERS or node.node is None or node.dyn_args is not None
                or node.dyn_kwargs is not None or not all(isinstance(a, nodes.Const) for a in node.args)
                or not all(isinstance(k.value, nodes.Const) for k in node.kwargs)):
            return None
        func = getattr(env.filters.get(node.name), "__wrapped__", None)
        if func is None:
            return None
        args = tuple(a.value for a in node.args)
        kwargs = tuple((k.key, k.value.value) for k in node.kwargs)
        node = node.node
    attr = None
    if isinstance(node, nodes.Getattr):
        if hasattr(dict, node.attr) or node.attr.startswith("_"):
            return None
        attr, node = node.attr, node.node
    if not (isinstance(node, nodes.Name) and node.ctx == "load" and node.name in names):
        return None
    return _Hole(node.name, attr, func, args, kwargs)
