"""The dry run at scale (issue 28) gives the numbers it always gave.

``judgelab.estimate`` now streams its requests (one rendered prompt at a time), counts tokens through
:class:`judgelab.backends.pricing.CallCostEstimator` (litellm's count function taken once, each role's share
and a repeated system message counted once) and shares ``direct_score``'s tightened schema. None of that may
change a number a user sees. The reference here is the dry run as it was before: every request planned up
front (``plan_jobs``), each counted by ``litellm.token_counter`` over its whole message list (with the
4-characters-per-token rule when that raises) and priced by ``litellm.cost_per_token``, summed in request
order. It lives in this test, not in the package.

Generators (hypothesis, bounded examples) and the invariant each checks:

* ``_items``: items of every built-in rubric (direct, pairwise, reference, the conversation rubrics
  ``mt_bench_*`` and ``trajectory``, chess, unified judge), each text field -- and each message of a
  conversation field -- replaced by generated text: any unicode (no surrogates), empty, special-token look-
  alikes (``<|endoftext|>``), fence and template look-alikes, long texts past litellm's 1,024-character
  encoding chunk; optional fields missing. With generated options (swap, random order, repeats, seed,
  max_tokens, a max_tokens in extra_params) and models (priced, free, unknown price -> NaN, the legacy
  0301 message accounting): every field of the RunEstimate equals the reference's, the cost bit for bit
  (NaN where the reference is NaN), or both raise the same error.
* ``_messages``: message lists of generated roles and contents (and a ``name`` key, which takes the
  slow path): ``CallCostEstimator`` gives, request after request (a repeated system message is reused),
  exactly the (tokens, cost) of ``estimate_call_cost``, which is litellm's ``token_counter`` + prices.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import astuple
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import judgelab
from judgelab.backends.pricing import DEFAULT_OUTPUT_TOKENS, CallCostEstimator, estimate_call_cost, litellm
from judgelab.engine import rows, runner
from judgelab.engine.cache import RequestCache
from judgelab.engine.config import RunConfig
from judgelab.rubrics import example_items, list_rubrics, load_rubric

MODELS = ("gpt-4o-mini", "openai/judgelab-no-such-model", "local/smollm2", "gpt-3.5-turbo-0301")
_FIXED_FIELDS = {"item_id", "module", "ply", "san", "features", "category", "reference"}  # values a rubric reads as codes

_piece = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=30),
    st.sampled_from(["", " ", "\n\n", "<|endoftext|>", "<|im_start|>user", "</response>", '<prompt id="x">',
                     "{{ item }}", "Score: 5", "\t  \n", "é", "日本語", "🙂", "  trailing   "]),
    st.builds(lambda s, k: s * k, st.text(min_size=1, max_size=12), st.integers(90, 260)),  # past 1,024 chars
)
_text = st.lists(_piece, max_size=4).map("".join)
# a required field must hold some non-blank text (else both paths refuse the item up front)
_filled = st.builds(lambda a, w, b: a + w + b, _text, st.sampled_from(["a", "Ω", "5", "🙂", "word", "<|endoftext|>"]),
                    _text)


def _reference(items: Any, rubric: Any, model: str, cache: Any = False, **options: Any) -> runner.RunEstimate:
    """The dry run as it was: every request planned first, each counted and priced on its own."""
    config = RunConfig(**options)
    engine, item_df, jobs, own_cache = runner._prepare(items, rubric, model, config, cache)
    tokens_total, cost_total, cached = 0, 0.0, 0
    try:
        for job in jobs:
            params = config.request_params(engine.rubric, job.request, job.repeat)
            hit = engine.cache.get(engine.key(list(job.request.messages), params, job.repeat)) \
                if engine.cache is not None else None
            if hit is not None and not (config.retry_unscored and runner._unscored(engine.rubric, job, hit)):
                cached += 1
                continue
            messages = job.request.messages
            try:
                tokens = int(litellm.token_counter(model=engine.model, messages=messages))
            except Exception:  # noqa: BLE001 - the old fallback
                tokens = sum(len(m.get("content") or "") for m in messages) // 4 + 4 * len(messages)
            try:
                prompt_cost, completion_cost = litellm.cost_per_token(
                    model=engine.model, prompt_tokens=tokens,
                    completion_tokens=params.get("max_tokens") or DEFAULT_OUTPUT_TOKENS)
                cost = float(prompt_cost) + float(completion_cost)
            except Exception:  # noqa: BLE001 - unknown price
                cost = math.nan
            tokens_total += tokens
            cost_total += cost
    finally:
        if own_cache and engine.cache is not None:
            engine.cache.close()
    return runner.RunEstimate(len(item_df), len(jobs), cached, tokens_total, cost_total)


def _same(a: runner.RunEstimate, b: runner.RunEstimate) -> bool:
    return all((x == y) or (isinstance(x, float) and math.isnan(x) and math.isnan(y))
               for x, y in zip(astuple(a), astuple(b), strict=True))


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - both paths must refuse the same input the same way
        return (type(exc).__name__, str(exc))


def _replace_texts(value: Any, draw: Any, required: bool) -> Any:
    if isinstance(value, str):
        return draw(_filled if required else _text)
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return [{**m, "content": draw(_filled)} if isinstance(m.get("content"), str) else dict(m) for m in value]
    return copy.deepcopy(value)


@st.composite
def _items(draw: Any, name: str) -> list[dict[str, Any]]:
    examples, rubric = example_items(name), load_rubric(name)
    out = []
    for k in range(draw(st.integers(1, 4))):
        base = examples[draw(st.integers(0, len(examples) - 1))]
        item = {f: (copy.deepcopy(v) if f in _FIXED_FIELDS else _replace_texts(v, draw, f in rubric.required_fields))
                for f, v in base.items()}
        item["item_id"] = f"i{k}"
        for optional in rubric.spec.optional_fields:
            if optional in item and draw(st.booleans()):
                del item[optional]  # a missing optional field
        out.append(item)
    return out


_options = st.fixed_dictionaries({}, optional={
    "swap": st.booleans(), "order": st.sampled_from(["given", "random"]), "repeats": st.integers(1, 2),
    "seed": st.integers(0, 3), "max_tokens": st.sampled_from([None, 7, 2000]),
    "extra_params": st.sampled_from([{}, {"max_tokens": 50}]),
})


@pytest.mark.parametrize("name", list_rubrics())
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_estimate_equals_the_reference_for_every_builtin_rubric(name: str, data: Any) -> None:
    items = data.draw(_items(name))
    model = data.draw(st.sampled_from(MODELS))
    options = data.draw(_options)
    got = _outcome(judgelab.estimate, items, name, model, cache=False, **options)
    want = _outcome(_reference, items, name, model, **options)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert isinstance(got, runner.RunEstimate) and _same(got, want), (got, want)


def test_estimate_counts_cached_requests_like_the_reference(tmp_path: Any) -> None:
    """With a cache holding some answers (one of them unscored), cached counts and the rest's tokens and cost
    equal the reference's, with and without retry_unscored."""
    items = [{"item_id": f"i{k}", "prompt": f"question {k}", "response": "answer " * k} for k in range(1, 7)]
    config = RunConfig()
    engine, _, jobs, _ = runner._prepare(items, "direct_score", "gpt-4o-mini", config, False)
    cache = RequestCache(tmp_path / "c.sqlite")
    good = json.dumps({"scores": [{"criterion": c, "evidence": ["e"], "justification": "j", "score": 3,
                                   "improvement": "i"} for c in ("factual_accuracy", "instruction_following")],
                       "summary": "s"})
    for job, text in zip(jobs[:3], (good, good, "no json here"), strict=True):
        params = config.request_params(engine.rubric, job.request, job.repeat)
        cache.put(engine.key(list(job.request.messages), params, job.repeat), {"text": text})
    for retry in (False, True):
        got = judgelab.estimate(items, "direct_score", "gpt-4o-mini", cache=cache, retry_unscored=retry)
        want = _reference(items, "direct_score", "gpt-4o-mini", cache=cache, retry_unscored=retry)
        assert _same(got, want) and got.cached == (2 if retry else 3), (got, want)
    cache.close()


_roles = st.sampled_from(["system", "user", "assistant", "tool", "développeur"])
_message = st.one_of(
    st.builds(lambda r, c: {"role": r, "content": c}, _roles, _text),
    st.builds(lambda r, c, n: {"role": r, "content": c, "name": n}, _roles, _text, st.text(max_size=8)),
)
_messages = st.lists(st.one_of(st.just({"role": "system", "content": "You are a judge."}), _message), max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(requests=st.lists(_messages, min_size=1, max_size=5), model=st.sampled_from(MODELS),
       max_tokens=st.sampled_from([None, 1, 300, 10**6]))
def test_call_cost_estimator_equals_estimate_call_cost(requests: list[list[dict[str, str]]], model: str,
                                                       max_tokens: int | None) -> None:
    cost_of = CallCostEstimator(model)
    for messages in requests:
        got = cost_of(messages, max_tokens)
        want = estimate_call_cost(model, messages, max_tokens)
        assert got[0] == want[0] and (got[1] == want[1] or (math.isnan(got[1]) and math.isnan(want[1])))
        assert got[0] == litellm.token_counter(model=model, messages=messages)


def test_direct_score_schema_is_the_tightened_schema_and_stays_unchanged() -> None:
    """The schema shared by every request equals a fresh rubric's first one, and a run's requests do not change
    it (the fast path shares one dict where each request had a copy)."""
    rubric = load_rubric("direct_score")
    first = json.dumps(load_rubric("direct_score").response_schema(), sort_keys=True)
    items = [{"item_id": f"i{k}", "prompt": "p", "response": "r"} for k in range(3)]
    formats = [r.response_format for k in range(3) for r in rubric.requests(items[k])]
    assert all(json.dumps(f["json_schema"]["schema"], sort_keys=True) == first for f in formats)
    assert json.dumps(rubric.response_schema(), sort_keys=True) == first
    assert '"enum": ["factual_accuracy", "instruction_following"]' in first  # tightened, not the spec's


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data(), chunk=st.integers(1, 4))
def test_estimate_in_chunks_of_items_equals_the_reference(monkeypatch: Any, data: Any, chunk: int) -> None:
    """The dry run turns items into dicts a chunk at a time: with chunks of 1-4 items over 1-9 items (mixed
    optional fields, a blank required field somewhere), the estimate -- or the refusal naming the first bad
    item -- equals the reference's, which makes every dict at once."""
    monkeypatch.setattr(rows, "_RECORDS_CHUNK", chunk)
    n = data.draw(st.integers(1, 9))
    items = [{"item_id": f"i{k}", "prompt": data.draw(_filled), "response": data.draw(st.one_of(_filled, _text)),
              **({"extra": data.draw(_text)} if data.draw(st.booleans()) else {})} for k in range(n)]
    model = data.draw(st.sampled_from(MODELS))
    got = _outcome(judgelab.estimate, items, "direct_score", model, cache=False)
    want = _outcome(_reference, items, "direct_score", model)
    if isinstance(want, tuple):
        assert got == want
    else:
        assert isinstance(got, runner.RunEstimate) and _same(got, want), (got, want)
