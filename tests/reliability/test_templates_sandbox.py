"""The template sandbox itself (judgelab/rubrics/sandbox.py): its vocabulary is what the shipped templates use,
files come only from beside the rubric, work is bounded, and randomly composed gadget expressions never execute.

Each test states its invariant; the generated one (hypothesis) composes template expressions from the pieces
template-injection payloads are made of (roots, attribute and item steps, calls, filters, operators) and checks:
rendering either raises one RubricTemplateError sentence or returns plain text, never runs anything (a canary
file stays absent), never shows the planted environment value or a Python object's repr, and ends quickly.
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2 import nodes

from judgelab.rubrics import RubricSpecError, RubricTemplateError, TemplateRefusedError, load_rubric, sandbox
from judgelab.rubrics.spec import parse_spec_text
from judgelab.rubrics.spec_rubric import BUILTIN_DIR
from tests.reliability.template_payloads import GADGET_TELLTALES

PACKAGE = Path(sandbox.__file__).resolve().parents[1]
REPO = PACKAGE.parent
SPEC: dict[str, Any] = {
    "name": "mine", "version": "1", "kind": "direct_score", "mode": "direct",
    "required_fields": ["prompt", "response"], "candidate_fields": ["response"], "scale": {"min": 1, "max": 5},
    "criteria": [{"name": "overall", "definition": "Is it good?", "anchors": {1: "bad", 5: "good"}}],
    "output": {"format": "json"}, "templates": {"user": "x"}, "verdict": {"rule": "weighted_mean"},
    "options": {"notes": ["a", "b"]},
}
ITEM = {"item_id": "i1", "prompt": "What is 2 + 2?", "response": "It is 4."}


def _rubric(folder: Path, user: str, **extra: Any) -> Path:
    spec = json.loads(json.dumps(SPEC))
    spec["templates"]["user"] = user
    spec.update(extra)
    path = folder / "mine.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def _render(folder: Path, user: str) -> str:
    return load_rubric(_rubric(folder, user)).requests(ITEM)[0].messages[-1]["content"]


# ------------------------------------------------------------------------------ the vocabulary
def _shipped_templates() -> dict[str, str]:
    """Every template the project ships or its tests and demo use: .j2 files, and inline YAML templates."""
    found = {str(p): p.read_text(encoding="utf-8") for p in REPO.glob("**/*.j2")
             if ".venv" not in p.parts and "site-packages" not in p.parts}
    for path in PACKAGE.glob("**/*.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for field, ref in (data.get("templates") or {}).items() if isinstance(data, dict) else ():
            if ref and not ref.endswith(".j2"):
                found[f"{path}:{field}"] = ref
    return found


def test_the_filters_and_tests_are_exactly_what_the_shipped_templates_use():
    """Invariant: the sandbox offers no filter the built-in, demo and test templates do not use (an explicit,
    small vocabulary), and every filter they use exists; templates have no globals at all."""
    env = jinja2.Environment()
    used_filters: set[str] = set()
    for source in _shipped_templates().values():
        used_filters |= {n.name for n in env.parse(source).find_all(nodes.Filter)}
    assert len(_shipped_templates()) >= 10
    assert used_filters == {*sandbox.FILTERS, "fence", "neutralize"}
    assert set(sandbox.TESTS) == {"defined", "undefined", "none"}
    box = sandbox.TemplateSandbox(BUILTIN_DIR, BUILTIN_DIR, {})
    assert box.globals == {}
    assert sandbox.GADGET_NAMES >= {"range", "dict", "lipsum", "cycler", "joiner", "namespace", "self"}


def test_every_shipped_template_compiles_and_renders_in_the_sandbox():
    """Invariant: the built-in rubrics render their example items (their prompts are those of the plain
    environment they had before, which tests/rubrics pin)."""
    from judgelab.rubrics import example_items, list_rubrics

    for name in list_rubrics():
        rubric = load_rubric(name)
        for item in example_items(name):
            assert rubric.requests(item)


def test_plain_data_only_reaches_a_template(tmp_path):
    """Invariant: what a template sees is plain data: the rubric spec is a dict of its fields (not a pydantic
    model), an array is a list, a str subclass is a str."""
    import numpy as np

    data = sandbox.plain({"rubric": load_rubric("direct_score").spec, "a": np.arange(3), "s": np.str_("x")})
    assert type(data["rubric"]) is not dict and isinstance(data["rubric"], dict)  # a marked dict
    assert data["a"] == [0, 1, 2] and type(data["s"]) is str
    assert _render(tmp_path, "{{ rubric.verdict.rule }} {{ rubric.name }}") == "weighted_mean mine"
    with pytest.raises(RubricTemplateError, match="'dict object' has no attribute 'model_dump'"):
        _render(tmp_path, "{{ rubric.model_dump }}")
    with pytest.raises(TemplateRefusedError, match="it calls 'model_dump', which templates do not have"):
        _render(tmp_path, "{{ rubric.model_dump() }}")


# ------------------------------------------------------------------------------ files beside the rubric
def test_includes_imports_and_extends_work_beside_the_rubric(tmp_path):
    """Invariant: a .j2 file in the rubric's folder (or below it, or through a symlink that stays inside) can be
    included, imported and extended; builtin:NAME.j2 names a built-in template."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "part.j2").write_text("PART {{ item.response }}")
    (tmp_path / "sub" / "macros.j2").write_text("{% macro shout(x) %}{{ x.upper() }}{% endmacro %}")
    (tmp_path / "base.j2").write_text("[{% block body %}{% endblock %}]")
    (tmp_path / "inner_link.j2").symlink_to(tmp_path / "part.j2")
    assert _render(tmp_path, "{% include 'part.j2' %}") == "PART It is 4."
    assert _render(tmp_path, "{% include 'inner_link.j2' %}") == "PART It is 4."
    assert _render(tmp_path, "{% import 'sub/macros.j2' as m %}{{ m.shout('hi') }}") == "HI"
    assert _render(tmp_path, "{% from 'sub/macros.j2' import shout %}{{ shout('ok') }}") == "OK"
    assert _render(tmp_path, "{% extends 'base.j2' %}{% block body %}B{% endblock %}") == "[B]"
    assert _render(tmp_path, "{% include 'builtin:direct_score.user.j2' %}") == \
        _render(tmp_path, "builtin:direct_score.user.j2")
    assert _render(tmp_path, "{% include 'missing.j2' ignore missing %}ok") == "ok"


def test_an_included_file_is_part_of_the_fingerprint(tmp_path):
    """Invariant: editing a file the template includes changes the rubric's fingerprint (its run ids)."""
    (tmp_path / "part.j2").write_text("one {{ item.response }}")
    path = _rubric(tmp_path, "{% include 'part.j2' %}")
    first = load_rubric(path).fingerprint()
    (tmp_path / "part.j2").write_text("two {{ item.response }}")
    assert load_rubric(path).fingerprint() != first


@pytest.mark.parametrize("target", ["/etc/hostname", "../outside.j2", "sub/../../outside.j2", "link_out.j2",
                                    "linkdir/outside.j2", "mine.yaml", "C:\\\\x.j2", "builtin:../spec.py"])
def test_a_file_outside_the_folder_is_refused_in_one_sentence(tmp_path, target):
    """Invariant: absolute paths, '..', symlinks leaving the folder and non-.j2 files are refused when the rubric
    loads, with one sentence naming the rubric, the template field and the line."""
    folder = tmp_path / "rubric"
    folder.mkdir()
    (tmp_path / "outside.j2").write_text("OUTSIDE")
    (folder / "link_out.j2").symlink_to(tmp_path / "outside.j2")
    (folder / "linkdir").symlink_to(tmp_path, target_is_directory=True)
    path = _rubric(folder, "ok\n{% include " + repr(target) + " %}")
    with pytest.raises(TemplateRefusedError) as refused:
        load_rubric(path)
    message = str(refused.value)
    assert message.startswith("rubric 'mine', templates.user, line 2: the template was refused: it loads")
    assert "\n" not in message and "OUTSIDE" not in message


def test_a_template_file_named_outside_the_folder_is_refused(tmp_path):
    """Invariant: `templates.user: ../x.j2` (the spec's own file reference) follows the same rule as includes."""
    folder = tmp_path / "rubric"
    folder.mkdir()
    (tmp_path / "x.j2").write_text("OUTSIDE")
    with pytest.raises(TemplateRefusedError, match=r"rubric 'mine', templates.user \(\.\./x\.j2\).*outside"):
        load_rubric(_rubric(folder, "../x.j2"))
    with pytest.raises(RubricSpecError, match="field 'templates.user': template file not found"):
        load_rubric(_rubric(folder, "absent.j2"))


def test_a_yaml_alias_bomb_or_a_self_referencing_alias_is_refused():
    """Invariant: a rubric file whose aliases expand past the limit, or refer to themselves, is one sentence (the
    spec is copied and hashed value by value: an alias bomb of a few lines would never finish)."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 8)]
    bomb = "\n".join(lines) + "\nname: bomb\n"
    start = time.monotonic()
    with pytest.raises(RubricSpecError, match="more than 100,000 values once its YAML aliases are expanded"):
        parse_spec_text(bomb, "bomb.yaml")
    assert time.monotonic() - start < 5
    with pytest.raises(RubricSpecError, match="a YAML alias refers to the value that contains it"):
        parse_spec_text("name: loop\noptions: &o {self: *o}\n", "loop.yaml")


# ------------------------------------------------------------------------------ errors are sentences
@pytest.mark.parametrize(("template", "kind", "expected"), [
    ("{{ nope }}", RubricTemplateError, r"templates.user, line 1: 'nope' is undefined$"),
    ("ok\n{% if %}", RubricTemplateError, r"templates.user, line 2: Expected an expression"),
    ("{{ item.response|upper }}", TemplateRefusedError, r"it uses the filter 'upper'.*\(the filters: capitalize, conversation, "
                                                        r"fence, join, length, neutralize, replace\)"),
    ("{{ item is odd }}", TemplateRefusedError, r"it uses the test 'odd'"),
    ("{{ 1 / 0 }}", RubricTemplateError, r"ZeroDivisionError: division by zero$"),
    ("{{ item.items }}", RubricTemplateError, r"it prints the function 'items' \(call it, or leave it out\)"),
    ("{% for c in criteria %}{{ loop.cycle('a', 'b') }}{% endfor %}", TemplateRefusedError, r"'cycle'"),
])
def test_every_template_error_is_one_sentence_naming_rubric_and_field(tmp_path, template, kind, expected):
    """Invariant: a template error of any kind (undefined, syntax, unknown filter or test, a Python error while
    rendering, printing a function) is one line naming the rubric and the template field, of the class said."""
    with pytest.raises(kind) as error:
        _render(tmp_path, template)
    message = str(error.value)
    assert message.startswith("rubric 'mine', templates.user") and "\n" not in message
    assert __import__("re").search(expected, message), message


# ------------------------------------------------------------------------------ bounded work
@pytest.mark.parametrize("template", [
    "{% for a in item.response * 1000 %}{% for b in item.response * 1000 %}{% endfor %}{% endfor %}",
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(30) }}",
    "{% macro f(s, n) %}{% if n %}{{ f(s ~ s, n - 1) }}{% else %}{{ s|length }}{% endif %}{% endmacro %}{{ f('a', 64) }}",
    "{{ (item.response * 1000000)|replace('4', item.response * 1000000) }}",
    "{{ 3 ** 100000 }}",
    "{{ [item] * 10000000 }}",
])
def test_runaway_work_is_refused_quickly(tmp_path, template):
    """Invariant: a loop, recursion, text or integer beyond the limits is refused in seconds, not left to hang."""
    start = time.monotonic()
    with pytest.raises(TemplateRefusedError, match="the template was refused: it"):
        _render(tmp_path, template)
    assert time.monotonic() - start < 10


@pytest.mark.parametrize("template", [
    "{% set big = item.response * 1000000 %}{% for i in item.response * 5000 %}{% set s = big[1:] %}{% endfor %}",
    "{% set big = [item.response * 1000000] * 50 %}{{ big }}",
    "{% set big = [item.response * 1000000] * 50 %}{{ big ~ '' }}",
])
def test_copies_and_printed_containers_are_counted(tmp_path, template):
    """Invariant: slicing a long text in a loop and printing a list of long texts count as the text they build
    (refused before the copies or the text exist), not free."""
    start = time.monotonic()
    with pytest.raises(TemplateRefusedError, match="the template was refused: it"):
        _render(tmp_path, template)
    assert time.monotonic() - start < 10


def test_the_clock_bounds_what_the_counts_cannot_see(tmp_path, monkeypatch):
    """Invariant: a render that stays within the counts but keeps comparing long texts is stopped by the clock
    (MAX_SECONDS, lowered to 0.5 s here to keep the test short)."""
    monkeypatch.setattr(sandbox, "MAX_SECONDS", 0.5)
    template = ("{% set a = item.response * 1000000 %}{% set b = (item.response * 999999) ~ 'It is 4!' %}"
                "{% for i in item.response * 5000 %}{% if a == b %}{% endif %}{% endfor %}")
    start = time.monotonic()
    with pytest.raises(TemplateRefusedError, match=r"it takes more than 0.5 s to render"):
        _render(tmp_path, template)
    assert time.monotonic() - start < 10


def test_a_long_legitimate_prompt_still_renders(tmp_path):
    """Invariant: the limits leave room for real prompts: a 2-million-character document renders whole."""
    rubric = load_rubric(_rubric(tmp_path, "{{ item.response | fence('doc') }}"))
    text = rubric.requests({**ITEM, "response": "word " * 400_000})[0].messages[-1]["content"]
    assert len(text) > 2_000_000


# ------------------------------------------------------------------------------ no other code reads text as code
def test_no_format_string_of_data_and_only_safe_yaml_in_the_package():
    """Invariant: nowhere in judgelab is ``str.format`` / ``format_map`` called on text that could come from a file
    (only on string literals and module constants), YAML is read only with the safe loaders, and nothing
    unpickles, evals or execs."""
    constants = {"challenge", "opinion", "cell"}  # locals bound to module constants (probes.sycophancy, widgets)
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                target, name = node.func.value, node.func.attr
                if name in {"format", "format_map"}:
                    literal = isinstance(target, ast.Constant) and isinstance(target.value, str)
                    constant = isinstance(target, ast.Name) and (target.id.isupper() or target.id in constants) \
                        or ast.unparse(target) == "self.missing"  # a class constant (probes.wrappers)
                    indexed = isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id.isupper()
                    if not (literal or constant or indexed):
                        offenders.append(f"{path.name}:{node.lineno} .{name} on {ast.unparse(target)}")
                if isinstance(target, ast.Name) and target.id == "yaml" and name in {"load", "load_all", "unsafe_load",
                                                                                     "full_load", "full_load_all"}:
                    offenders.append(f"{path.name}:{node.lineno} yaml.{name}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"eval", "exec"}:
                offenders.append(f"{path.name}:{node.lineno} {node.func.id}")
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                offenders += [f"{path.name}:{node.lineno} imports {m}" for m in modules
                              if m.split(".")[0] in {"pickle", "marshal", "shelve", "dill", "cloudpickle"}]
    assert not offenders, offenders


# ------------------------------------------------------------------------------ generated gadget expressions
ROOTS = ["''", "()", "[]", "{}", "0", "item", "item.response", "rubric", "criteria", "criteria[0]", "options",
         "scale_anchors", "language_name", "loop", "range", "lipsum", "cycler", "joiner", "namespace", "dict", "self",
         "config", "request", "environ", "os", "__builtins__"]
NAMES = ["__class__", "__base__", "__mro__", "__subclasses__", "__init__", "__globals__", "__builtins__", "__import__",
         "os", "popen", "system", "environ", "get", "items", "keys", "values", "read", "open", "write", "format",
         "format_map", "upper", "strip", "model_dump", "parse_file", "update", "pop", "copy", "response", "name",
         "mro", "__dict__", "func_globals", "gi_frame", "f_globals", "__reduce__", "__getattribute__", "modules"]
ENV_NAME = "JUDGELAB_TEMPLATE_FUZZ_VALUE"  # not secret-looking: only the sandbox keeps it out


def _step(name_or_call: tuple[str, str]) -> str:
    kind, value = name_or_call
    return {"dot": f".{value}", "item": f"[{value!r}]", "attr": f"|attr({value!r})", "call": f"({value})",
            "index": f"[{value}]", "filter": f"|{value}", "mul": f" * {value}", "pct": f" % {value}",
            "cat": f" ~ {value}"}[kind]


_ARGS = ["", "'id'", "'{canary}'", "'{canary}', 'w'", "'os'", "'{env}'", "10**9", "1", "item"]
STEPS = st.one_of(
    st.tuples(st.sampled_from(["dot", "item", "attr"]), st.sampled_from(NAMES)),
    st.tuples(st.just("call"), st.sampled_from(_ARGS)),
    st.tuples(st.just("index"), st.sampled_from(["0", "1", "-1", "132", "'os'", "'{env}'", "1:", "::-1", "0:10**9"])),
    st.tuples(st.just("filter"), st.sampled_from(["length", "join", "capitalize", "list", "string", "attr('x')",
                                                   "map(attribute='__class__')", "format(item)", "pprint"])),
    st.tuples(st.sampled_from(["mul", "pct", "cat"]), st.sampled_from(["10**9", "item", "'x'", "2"])),
)
WRAPPERS = ["{{ EXPR }}", "{% for x in EXPR %}{{ x }}{% endfor %}", "{% set v = EXPR %}{{ v }}",
            "{% if EXPR %}yes{% endif %}", "{{ '{0}'.format(EXPR) }}", "{% include EXPR %}"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(root=st.sampled_from(ROOTS), steps=st.lists(STEPS, max_size=6), wrapper=st.sampled_from(WRAPPERS))
def test_generated_gadget_expressions_never_execute(tmp_path, monkeypatch, root, steps, wrapper):
    """Invariant: whatever expression the pieces compose, rendering raises one RubricTemplateError sentence or
    returns plain text; the canary file is never written; neither the planted environment value nor any Python
    object's repr (a class, a function, a module) reaches the prompt or the message; it ends in seconds."""
    secret = "fuzz-" + secrets.token_hex(10)
    monkeypatch.setenv(ENV_NAME, secret)
    canary = tmp_path / "CANARY"
    expression = (root + "".join(_step(s) for s in steps)).replace("{canary}", str(canary)).replace("{env}", ENV_NAME)
    start = time.monotonic()
    try:
        out = _render(tmp_path, wrapper.replace("EXPR", expression))
    except RubricSpecError as error:  # RubricTemplateError, or a spec error the YAML text caused
        out = str(error)
        assert "\n" not in out and out.startswith(("rubric 'mine'", str(tmp_path))), out
    assert isinstance(out, str)
    assert not canary.exists(), expression
    assert secret not in out, expression
    assert os.environ.get(ENV_NAME) == secret
    shown = [t for t in GADGET_TELLTALES if t in out]
    assert not shown, (expression, out[:300])
    assert time.monotonic() - start < 15, expression
