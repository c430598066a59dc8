"""The catalogue of template-injection payloads that every rubric template path must refuse.

Generated from parts, the way public server-side-template-injection cheat sheets build them: a ROOT (a
literal, one of Jinja's default globals, a web framework's context name, an object judgelab hands a template),
a CHAIN of attribute / item / call steps to something that runs code or reads secrets, each step spelled in
every ACCESS style (``.x``, ``['x']``, ``|attr('x')``, a key built by concatenation, a key spelled with
escapes), plus hand-written families that do not compose: format-string tricks, includes of system files,
and resource bombs. Every entry must be refused (one sentence naming the rubric), must not create the canary
file ``{canary}`` names, and must not put the planted environment value or any gadget output into anything.

Placeholders a test fills in: ``{canary}`` (the absolute path a successful payload would write),
``{env}`` (the name of the planted environment variable).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass

__all__ = ["ACCESS_STYLES", "CATALOGUE", "CONTEXT_ROOTS", "GADGET_TELLTALES", "Payload", "counts"]


@dataclass(frozen=True)
class Payload:
    category: str
    template: str  # Jinja source with {canary} / {env} placeholders (braces meant for Jinja are doubled)

    def render(self, canary: str, env: str) -> str:
        return self.template.replace("{canary}", canary).replace("{env}", env)


# -------------------------------------------------------------- chains spelled in every access style
def _attr(name: str, style: str) -> str:
    if style == "dot":
        return f".{name}"
    if style == "item":
        return f"['{name}']"
    if style == "attr_filter":
        return f"|attr('{name}')"
    if style == "concat":
        half = len(name) // 2
        return f"[('{name[:half]}' ~ '{name[half:]}')]"
    if style == "escaped":  # \x5f is "_": Jinja string literals take Python escapes
        return "['" + "".join(f"\\x{ord(c):02x}" if c == "_" else c for c in name) + "']"
    raise ValueError(style)


ACCESS_STYLES = ("dot", "item", "attr_filter", "concat", "escaped")


def _chain(root: str, steps: list[str], style: str) -> str:
    """``steps``: attribute names, or raw suffixes starting with "(" or "[" (calls and indexes)."""
    out = root
    for step in steps:
        out += step if step[0] in "([" else _attr(step, style)
    return "(" + out + ")" if style == "attr_filter" else out


LITERALS = ("''", "()", "[]", "{}", "0", "1.5", "'x'.upper()")
LITERAL_CHAINS = (
    ["__class__"],
    ["__class__", "__base__", "__subclasses__", "()"],
    ["__class__", "__mro__", "[1]", "__subclasses__", "()"],
    ["__class__", "__bases__", "[0]", "__subclasses__", "()", "[132]", "__init__", "__globals__", "[\"popen\"]",
     "('touch {canary}')", "read", "()"],
    ["__class__", "__mro__", "[-1]", "__subclasses__", "()", "[40]", "('{canary}', 'w')", "write", "('x')"],
    ["__init__", "__globals__"],
    ["__doc__"],
    ["__reduce_ex__", "(2)"],
    ["__dir__", "()"],
)
DEFAULT_GLOBALS = ("range", "dict", "lipsum", "cycler", "joiner", "namespace")
GLOBAL_CHAINS = (
    ["__init__", "__globals__", "os", "popen", "('touch {canary}')", "read", "()"],
    ["__globals__", "os", "system", "('touch {canary}')"],
    ["__init__", "__globals__", "__builtins__", "__import__", "('os')", "system", "('touch {canary}')"],
    ["__init__", "__globals__", "__builtins__", "open", "('{canary}', 'w')", "write", "('x')"],
    ["__init__", "__globals__", "os", "environ", "['{env}']"],
    ["__class__", "__init__", "__globals__", "sys", "modules", "['os']", "popen", "('id')", "read", "()"],
    ["__call__", "__globals__", "subprocess", "check_output", "('id')"],
)
FRAMEWORK_NAMES = ("self", "config", "request", "session", "g", "url_for", "get_flashed_messages", "environ", "os",
                   "subprocess", "__builtins__", "builtins", "sys", "getattr", "open", "eval")
FRAMEWORK_CHAINS = (
    ["__class__"],
    ["_TemplateReference__context", "cycler", "__init__", "__globals__", "os", "system", "('touch {canary}')"],
    ["__init__", "__globals__", "['os']", "popen", "('touch {canary}')", "read", "()"],
    ["environ", "['{env}']"],
    ["items", "()"],
    ["popen", "('touch {canary}')"],
)
# what judgelab hands a template: the item's fields, the rubric's spec, its criteria and options, the loop
CONTEXT_ROOTS = ("item", "item.response", "rubric", "rubric.verdict", "criteria", "criteria[0]", "options",
                 "scale_anchors", "language_name")
CONTEXT_CHAINS = (
    ["__class__", "__init__", "__globals__"],
    ["parse_file", "('/etc/passwd')"],  # a pydantic model's file reader, if the spec object were handed over
    ["model_dump_json", "()"],
    ["model_construct", "()"],
    ["copy", "()"],
    ["update", "({'x': 1})"],
    ["pop", "('prompt')"],
    ["append", "(1)"],
    ["clear", "()"],
    ["setdefault", "('x', 1)"],
    ["__setitem__", "('x', 1)"],
    ["center", "(999999999)"],
    ["zfill", "(999999999)"],
    ["expandtabs", "(999999999)"],
    ["encode", "()"],
    ["tofile", "('{canary}')"],  # numpy's file writer, if an array were handed over
)


def _composed() -> list[Payload]:
    out: list[Payload] = []
    for root, steps, style in itertools.product(LITERALS, LITERAL_CHAINS, ACCESS_STYLES):
        out.append(Payload("attribute walk from a literal", "{{ " + _chain(root, steps, style) + " }}"))
    for root, steps, style in itertools.product(DEFAULT_GLOBALS, GLOBAL_CHAINS, ("dot", "item", "attr_filter")):
        out.append(Payload("walk from a default Jinja global", "{{ " + _chain(root, steps, style) + " }}"))
    for root, steps in itertools.product(FRAMEWORK_NAMES, FRAMEWORK_CHAINS):
        out.append(Payload("web framework / builtins name", "{{ " + _chain(root, steps, "dot") + " }}"))
    for root, steps in itertools.product(CONTEXT_ROOTS, CONTEXT_CHAINS):
        out.append(Payload("walk from an object judgelab passes", "{{ " + _chain(root, steps, "dot") + " }}"))
    for steps in CONTEXT_CHAINS:  # the loop variable, inside a loop
        out.append(Payload("walk from an object judgelab passes",
                           "{% for c in criteria %}{{ " + _chain("loop", steps, "dot") + " }}{% endfor %}"))
    return out


# -------------------------------------------------------------- hand-written families
ENVIRONMENT_READS = [
    "{{ environ['{env}'] }}",
    "{{ os.environ.get('{env}') }}",
    "{{ lipsum.__globals__.os.environ['{env}'] }}",
    "{{ cycler.__init__.__globals__.os.environ.get('{env}') }}",
    "{{ self.__init__.__globals__.__builtins__.__import__('os').environ }}",
    "{{ request.environ }}",
    "{{ url_for.__globals__.os.environ }}",
    "{% include '/proc/1/environ' %}",
    "{{ namespace.__init__.__globals__.os.getenv('{env}') }}",
    "{% for k in joiner.__init__.__globals__.os.environ %}{{ k }}{% endfor %}",
]
FORMAT_TRICKS = [
    "{{ '{0.__class__}'.format(item) }}",
    "{{ '{0.__init__.__globals__}'.format(cycler) }}",
    "{{ '{0.__globals__[os].environ}'.format(lipsum) }}",
    "{{ '{0.response}'.format(item) }}",
    "{{ '{x.__class__}'.format_map({'x': item}) }}",
    "{{ '%s' % item }}",
    "{{ '%(a)s' % {'a': item} }}",
    "{{ '%r' % rubric }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{{ '%999999999d' % 1 }}",
    "{{ '{0:{1}}'.format(1, 999999999) }}",
    "{{ item.response.format(item) }}",  # the item's own text used as a format string
    "{{ item.prompt % item }}",
    "{{ item.response.format_map(item) }}",
]
INCLUDE_TAGS = [
    "{% include 'T' %}",
    "{% include 'T' ignore missing %}",
    "{% import 'T' as m %}{{ m }}",
    "{% from 'T' import x %}{{ x }}",
    "{% extends 'T' %}",
    "{% include ['T', 'also.j2'] %}",
    "{% set t = 'T' %}{% include t %}",
]
INCLUDE_TARGETS = [
    "/etc/passwd", "/etc/hostname", "/proc/self/environ", "/proc/self/cmdline", "../outside.j2",
    "../../../../../../../../etc/passwd", "sub/../../outside.j2", "./../outside.j2", "{outside}",
    "link_out.j2", "linkdir/outside.j2", "evil.yaml", "C:\\\\Windows\\\\win.ini", "\\\\\\\\server\\\\share\\\\x.j2",
    "file:///etc/passwd", "builtin:../../../../../../etc/passwd", "builtin:/etc/passwd", "/dev/zero",
]
RESOURCE_BOMBS = [
    "{{ range(10**9)|length }}",
    "{% for i in range(10**9) %}{% endfor %}",
    "{{ 'a' * 10**9 }}",
    "{{ 'a' * 999999999 }}",
    "{{ [0] * 10**9 }}",
    "{{ 10**10**10 }}",
    "{{ 9**9**9**9 }}",
    "{{ (2**255) * (2**255) * (2**255) }}",
    "{{ ('x' * 8000000) ~ ('x' * 8000000) }}",
    "{{ item.response * 10**8 }}",
    "{% for i in 'x' * 100000 %}{% for j in 'x' * 100000 %}{% endfor %}{% endfor %}",
    "{% for i in 'x' * 1000 %}{% for j in 'x' * 1000 %}{{ i }}{% endfor %}{% endfor %}",
    "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}",
    "{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{% else %}{{ s|length }}{% endif %}{% endmacro %}"
    "{{ f('ab', 60) }}",
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}",
    "{{ ('x' * 100000)|replace('x', 'x' * 100000) }}",
    "{{ (['x' * 1000000] * 100)|join('y') }}",
    "{% include 'self.j2' %}",
    "{% extends 'cycle_a.j2' %}",
    "{% for x in criteria recursive %}{{ loop(criteria) }}{% endfor %}",
    "{{ '%*d' % (999999999, 1) }}",
    "{{ 'x'.ljust(999999999) }}",
]


def _catalogue() -> list[Payload]:
    out = _composed()
    out += [Payload("environment read", t) for t in ENVIRONMENT_READS]
    out += [Payload("format-string trick", t) for t in FORMAT_TRICKS]
    out += [Payload("include / import / extends outside the folder", tag.replace("'T'", repr(target)))
            for tag, target in itertools.product(INCLUDE_TAGS, INCLUDE_TARGETS)]
    out += [Payload("resource bomb", t) for t in RESOURCE_BOMBS]
    return out


CATALOGUE: list[Payload] = _catalogue()

# text that would show a payload worked: a file's or command's output, a Python object's repr
GADGET_TELLTALES = ("root:x:0:0", "uid=", "<class ", "<function ", "<module ", "<built-in", "<bound method",
                    "OUTSIDE-TEMPLATE-CONTENT", "'__builtins__': ", "/bin/sh", "SECRET_KEY")


def counts() -> dict[str, int]:
    return dict(Counter(p.category for p in CATALOGUE))
