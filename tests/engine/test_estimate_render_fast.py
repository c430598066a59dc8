"""The dry run's fast render and count (issue 28) give the very prompts and numbers of the slow way.

Two shortcuts serve ``judgelab.estimate`` (and every run: a rubric renders the same way everywhere):

* :func:`judgelab.rubrics.sandbox.splice`: a template whose item fields are printed only as top-level
  ``{{ name }}`` / ``{{ name.attr }}`` (optionally through ``fence`` or ``neutralize``) is rendered once per rubric
  with those outputs left as holes; each request fills them with the same filter calls.
* :class:`judgelab.backends.pricing.SegmentCounter`: litellm's count of a text for a tiktoken model (o200k, cl100k),
  summed over the text's parts between cuts (a newline before a printable ASCII character other than "/"), each part
  that comes again counted once per estimate.

The reference is the slow way, kept in this test: the full sandboxed render (a rubric whose splice cache holds
"no splice" for every template, so each renders through ``sandbox.render`` as before), litellm's own count function and ``litellm.token_counter``.

Generators (hypothesis, bounded examples; a seeded fuzzer) and the invariant each checks:

* ``_field``: item field values -- text from an alphabet of newlines, "/", carriage returns, unicode spaces,
  apostrophes, digits, letters, fence and template look-alikes, NULs, plus long texts; None, NaN, numbers, lists,
  dicts and chat-message lists (which take the full render). For ``direct_score``, ``pairwise`` (both orders),
  ``reference_gold`` and a spec rubric from YAML: each request's messages are byte-identical to the full render's,
  or both raise the same error sentence.
* ``_count_text``: texts across several 1,024-character windows built from repeated and fresh lines: for
  gpt-4o-mini (o200k) and gpt-4 (cl100k), one ``SegmentCounter`` used for every example (so parts come from its
  cache) gives litellm's count function's number for every text.
* ``_items`` (seeded): a dry run over generated items for each rubric: ``judgelab.estimate``'s items, requests,
  prompt tokens and cost equal the slow way's (full render, ``litellm.token_counter`` per request, litellm's price of
  each count, summed in request order), the cost bit for bit.
* Hostile templates (generated sizes): a template whose fixed part breaks a limit, and an item whose text would make
  the prompt pass ``MAX_TEXT``, are refused with the same sentence as the full render, request after request.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgelab
from judgelab.backends import pricing
from judgelab.backends.pricing import DEFAULT_OUTPUT_TOKENS, SegmentCounter, litellm
from judgelab.engine import runner
from judgelab.engine.config import RunConfig
from judgelab.rubrics import load_rubric, sandbox

FIELDS = {"direct_score": ("prompt", "response"), "pairwise": ("prompt", "response_a", "response_b"),
          "reference_gold": ("question", "gold_answer", "model_output")}
SPEC = """\
name: spliced_spec
version: "1"
kind: direct_score
mode: direct
required_fields: [prompt, response]
optional_fields: [context]
candidate_fields: [response]
scale: {min: 1, max: 5}
criteria:
  - {name: clarity, definition: Is the answer clear?, weight: 1}
  - {name: depth, definition: "Does it go deep?\\nSay why.", weight: 2}
output: {format: pattern}
templates:
  system: "Judge {{ criteria | length }} criteria in {{ language_name }}."
  user: |
    {% for c in criteria %}- {{ c.name }} ({{ c.weight }}): {{ c.definition }}
    {% endfor %}
    Question: {{ item.prompt }}
    {{ item.context | neutralize }}
    Answer:
    {{ item.response | fence("answer") }}
    {% if scale_max > 3 %}Score {{ scale_min }}-{{ scale_max }}.{% endif %}
verdict: {rule: weighted_mean}
"""

_CHARS = ["a", "Z", "é", "日", "7", "42", " ", "  ", "\n", "\n\n", "\r\n", "/", "'s", "'ll", "\t", "\u3000", "\u2028",
          "\x85", "\x1c", "#", "-", "*", "<", "</", ">", "{{", "}}", "{%", "\x00", "🙂", ".", ",", '"']
_text = st.lists(st.sampled_from(_CHARS), max_size=40).map("".join)
_long = st.builds(lambda s, k: s * k, st.sampled_from(["word ", "line\n", "x/y\n", "  \n", "'s\n"]), st.integers(100, 400))
_message = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": _text})
_field = st.one_of(_text, _text, _text, _long, st.none(), st.just(math.nan), st.integers(-5, 10**6), st.floats(0, 1),
                   st.lists(_text, max_size=3), st.dictionaries(st.sampled_from(["k", "v"]), _text, max_size=2),
                   st.lists(_message, min_size=1, max_size=2))


def _spec_rubric(tmp_path: Path) -> Any:
    (tmp_path / "spec.yaml").write_text(SPEC)
    return load_rubric(tmp_path / "spec.yaml")


class _FullRender(dict):  # type: ignore[type-arg]
    """A rubric's splice cache that holds "no splice" for every template: each renders the full sandboxed way."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: object) -> None:
        return None


def _slow(rubric: Any) -> Any:
    rubric._splices = _FullRender()
    return rubric


def _rubrics(tmp_path: Path) -> dict[str, Any]:
    out = {name: load_rubric(name) for name in FIELDS}
    out["spliced_spec"] = _spec_rubric(tmp_path)
    return out


def _fields(name: str) -> tuple[str, ...]:
    return FIELDS.get(name, ("prompt", "response", "context"))


def _requests(rubric: Any, item: dict[str, Any], swapped: bool) -> Any:
    try:
        return [(r.messages, r.response_format, r.max_tokens) for r in rubric.requests(item, swapped=swapped)]
    except Exception as exc:  # noqa: BLE001 - both paths must fail with the same sentence
        return (type(exc).__name__, str(exc))


@pytest.fixture(scope="module")
def rubric_pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    tmp = tmp_path_factory.mktemp("spec")
    fast, slow = _rubrics(tmp), _rubrics(tmp)
    return {name: (fast[name], _slow(slow[name])) for name in fast}


def test_builtin_templates_are_spliced(rubric_pairs: dict[str, tuple[Any, Any]]) -> None:
    """The fast path is taken (else the identity below would compare the slow way with itself)."""
    for name, (fast, slow) in rubric_pairs.items():
        fast.requests({"item_id": "x", **{f: "some text" for f in _fields(name)}})
        slow.requests({"item_id": "x", **{f: "some text" for f in _fields(name)}})
        user = [s for (field, _), s in fast._splices.items() if field == "user"]
        assert user and all(s is not None and s.holes for s in user), name


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(FIELDS) + ["spliced_spec"]), values=st.lists(_field, min_size=3, max_size=3),
       swapped=st.booleans())
def test_spliced_render_is_the_full_render(rubric_pairs: dict[str, tuple[Any, Any]], name: str, values: list[Any],
                                           swapped: bool) -> None:
    fast, slow = rubric_pairs[name]
    item = {"item_id": "i1", **dict(zip(_fields(name), values, strict=False))}
    assert _requests(fast, item, swapped) == _requests(slow, item, swapped)


@pytest.mark.parametrize("source", [
    "{% if item.response %}{{ item.response | fence('r') }}{% endif %}",  # in a condition
    "{% for c in criteria %}{{ item.response }}{% endfor %}",  # in a loop
    "{{ item.response | length }}",  # another filter
    "{{ item.response ~ '!' }}",  # an expression
    "{% set item = 3 %}{{ item }}",  # the name bound by the template
    "{{ item['response'] }}",  # a subscript
    "{{ item.items }}",  # a dict method, not a key
    "{% include 'x.j2' %}{{ item.response }}",  # another template sees the item
])
def test_templates_not_of_the_simple_shape_are_not_spliced(rubric_pairs: dict[str, tuple[Any, Any]],
                                                          source: str) -> None:
    fast, _ = rubric_pairs["direct_score"]
    assert sandbox.splice(fast._env, source, fast._plain_base or {}, {"item"}) is None


HOSTILE = """\
name: hostile
version: "1"
kind: direct_score
mode: direct
required_fields: [prompt, response]
scale: {min: 1, max: 5}
criteria:
  - {name: clarity, definition: Is the answer clear?, weight: 1}
output: {format: pattern}
templates: {user: "t.j2"}
verdict: {rule: weighted_mean}
"""


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_hostile_templates_are_refused_as_before(tmp_path: Path, seed: int) -> None:
    """A fixed part past a limit (generated sizes) is refused at every request with the full render's sentence; an
    item whose text pushes the prompt past MAX_TEXT is refused too (the splice leaves it to the full render)."""
    rng = random.Random(seed)
    hostile = [f"{{{{ 'x' * {sandbox.MAX_TEXT + rng.randrange(1, 10**6)} }}}}{{{{ item.response }}}}",
               f"{{% for a in criteria * {rng.randrange(2, 9) * sandbox.MAX_ITEMS} %}}{{% endfor %}}{{{{ item.response }}}}",
               f"{{{{ {rng.randrange(10**3, 10**4)} ** {rng.randrange(10**3, 10**4)} }}}}{{{{ item.response | fence('r') }}}}"]
    (tmp_path / "r.yaml").write_text(HOSTILE)
    for source in hostile:
        (tmp_path / "t.j2").write_text(source)
        fast, slow = load_rubric(tmp_path / "r.yaml"), _slow(load_rubric(tmp_path / "r.yaml"))
        expected = _requests(slow, {"item_id": "a", "prompt": "p", "response": "r"}, False)
        assert expected[0] == "TemplateRefusedError"
        for _ in range(2):  # the first request tries the splice, the second finds it refused
            assert _requests(fast, {"item_id": "a", "prompt": "p", "response": "r"}, False) == expected
    rubric = load_rubric("direct_score")
    rubric.requests({"item_id": "a", "prompt": "p", "response": "ok"})
    big = "y" * (sandbox.MAX_TEXT - rng.randrange(0, 100))
    with pytest.raises(sandbox.TemplateRefusedError, match="more than"):
        rubric.requests({"item_id": "b", "prompt": "p", "response": big})


_counters: dict[str, Any] = {}


def _counter(model: str) -> tuple[Any, Any]:
    if model not in _counters:
        from litellm.litellm_core_utils.token_counter import _get_count_function

        exact = _get_count_function(model, None)
        _counters[model] = (SegmentCounter.for_model(model, exact), exact)
    return _counters[model]


_lines = ["## Criteria\n", "Weight: 0.5\n", "\n", "  indented\n", "/path/to\n", "'s quoted\n", "1. first\n",
          "- item\n", "<tag id=\"1\">\n", "\r\n", " \n", "word", "\u3000\n", "é日🙂\n", "x" * 700 + "\n"]
_count_text = st.lists(st.one_of(st.sampled_from(_lines), _text.map(lambda t: t + "\n"), _text), max_size=60).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=_count_text, model=st.sampled_from(["gpt-4o-mini", "gpt-4"]))
def test_segment_counter_is_litellms_count(text: str, model: str) -> None:
    counter, exact = _counter(model)
    assert counter is not None  # both are tiktoken models of a checked pattern
    assert counter(text) == exact(text)
    assert counter(text) == exact(text)  # again: now its parts come from the cache


def test_segment_counter_is_used_only_where_it_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The counter stands in for litellm's count only for an encoding whose pre-tokenizer pattern the cut rule was
    checked against: the same model with that pattern changed gets litellm's own function."""
    from litellm.litellm_core_utils.token_counter import _get_count_function

    exact = _get_count_function("gpt-4o-mini", None)
    assert isinstance(pricing._count_function("gpt-4o-mini"), SegmentCounter)
    other = pricing._O200K.replace("[\\r\\n/]*", "[\\r\\n]*")  # cl100k's tail of a punctuation piece
    assert other != pricing._O200K
    monkeypatch.setattr(pricing, "_O200K", other)
    assert SegmentCounter.for_model("gpt-4o-mini", exact) is None
    assert not isinstance(pricing._count_function("gpt-4o-mini"), SegmentCounter)
    assert isinstance(pricing._count_function("gpt-4"), SegmentCounter)  # cl100k is still checked


def _items(rng: random.Random, name: str, n: int) -> list[dict[str, Any]]:
    words = ["alpha", "beta", "</x>", "{{ y }}", "/", "\n", "\n\n", "é", "42", "'s", "  "]
    return [{"item_id": f"i{k}", **{f: "".join(rng.choice(words) for _ in range(rng.randrange(1, 120)))
                                    for f in _fields(name)}} for k in range(n)]


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])
def test_estimate_equals_the_slow_way(rubric_pairs: dict[str, tuple[Any, Any]], model: str) -> None:
    rng = random.Random(28)
    for name, (fast, slow) in rubric_pairs.items():
        items = _items(rng, name, 60)
        config = RunConfig(swap=name == "pairwise")
        got = judgelab.estimate(items, fast, model, cache=False, swap=config.swap)
        _, item_df, jobs, _ = runner._prepare(items, slow, model, config, False)  # planned with the full render
        tokens, cost = 0, 0.0
        for job in jobs:
            params = config.request_params(slow, job.request, job.repeat)
            count = int(litellm.token_counter(model=model, messages=job.request.messages))
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=model, prompt_tokens=count, completion_tokens=params.get("max_tokens") or DEFAULT_OUTPUT_TOKENS)
            tokens += count
            cost += float(prompt_cost) + float(completion_cost)
        assert (got.items, got.requests, got.cached, got.estimated_prompt_tokens) == (len(item_df), len(jobs), 0, tokens)
        assert got.estimated_max_cost_usd == cost, name


@pytest.mark.long
@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4"])
def test_segment_counter_on_many_prompts(rubric_pairs: dict[str, tuple[Any, Any]], model: str) -> None:
    """Seeded fuzzer (long: ~1 min): 5,000 rendered prompts of every rubric here, with item texts drawn from a wide
    alphabet (any printable unicode, every whitespace, "/" and newline mixes, long runs), counted by one counter
    (its cache filling and emptying as a dry run's does) equal litellm's count function, text by text."""
    counter, exact = _counter(model)
    rng = random.Random(2028)
    pool = [chr(c) for c in range(32, 127)] + ["\n"] * 12 + ["\r", "\t", "\u3000", "\u2028", "\x85", "\x1c", "é", "日",
                                                              "🙂", "\u0301", "٣", "\n/", "\n ", " \n", "'ll", "'S"]
    names = sorted(rubric_pairs)
    for k in range(5000):
        name = names[k % len(names)]
        fast, _ = rubric_pairs[name]
        item = {"item_id": f"i{k}", **{f: "".join(rng.choice(pool) for _ in range(rng.randrange(1, 2500)))
                                       for f in _fields(name)}}
        for request in fast.requests(item):
            for message in request.messages:
                assert counter(message["content"]) == exact(message["content"]), (name, k)
