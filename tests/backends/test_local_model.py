"""End-to-end tests of the embedded SmolLM2 judge through litellm, in-process (real model, no mocks).

The model is a plumbing/demo judge: these tests check mechanics (determinism, JSON constraints, logprobs,
token counts, zero cost), never the quality of what it says.
"""

from __future__ import annotations

import asyncio
import json
import math

import litellm
import pytest

from judgelab.backends import local

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(not local.is_available(), reason="embedded judge not installed (" + local.INSTALL_HINT + ")"),
]

QUESTION = [{"role": "user", "content": "Is the sky blue on a clear day? Answer in one short sentence."}]
SCORE_SCHEMA = {
    "type": "object",
    "properties": {"verdict": {"enum": ["good", "bad"]}, "score": {"enum": [1, 2, 3, 4, 5]}},
    "required": ["verdict", "score"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    local.register()


def _ask(**params: object) -> litellm.ModelResponse:
    params = {"model": "local/smollm2", "messages": QUESTION, "temperature": 0, "max_tokens": 24, **params}
    return litellm.completion(**params)


def test_sync_and_async_calls_are_deterministic_at_temperature_zero() -> None:
    first, second = _ask(seed=1), _ask(seed=2)  # the seed must not matter when sampling is greedy

    async def both() -> list[litellm.ModelResponse]:
        return list(await asyncio.gather(
            litellm.acompletion(model="local/smollm2", messages=QUESTION, temperature=0, max_tokens=24),
            litellm.acompletion(model="local/smollm2-135m", messages=QUESTION, temperature=0, max_tokens=24),
        ))

    concurrent = asyncio.run(both())  # two at once: the lock must serialise them without mixing state
    text = first.choices[0].message.content
    assert text.strip()
    assert [r.choices[0].message.content for r in (second, *concurrent)] == [text] * 3
    assert concurrent[1].model == "local/smollm2-135m"


def test_sampling_is_reproducible_with_a_seed() -> None:
    story = [{"role": "user", "content": "Tell me a one-line story."}]
    texts = [_ask(messages=story, temperature=1.0, seed=seed, max_tokens=16).choices[0].message.content
             for seed in (7, 7, 8, 9)]
    assert texts[0] == texts[1]
    assert len(set(texts[1:])) > 1  # and the seed does steer sampling (three seeds, not all identical)


def test_async_calls_leave_the_event_loop_free() -> None:
    """While the model generates, other coroutines (a notebook's widgets, progress bars) keep running."""

    async def call_while_ticking() -> tuple[int, str]:
        call = asyncio.ensure_future(
            litellm.acompletion(model="local/smollm2", messages=QUESTION, temperature=0, max_tokens=8))
        ticks_while_generating = 0
        while not call.done():
            await asyncio.sleep(0.005)
            ticks_while_generating += local._CALL_LOCK.locked()  # the model is busy right now
        return ticks_while_generating, (await call).choices[0].message.content

    ticks, text = asyncio.run(call_while_ticking())
    assert text.strip()
    assert ticks >= 3  # generating on the loop's own thread would leave no chance to tick meanwhile


def test_usage_is_counted_and_costs_nothing() -> None:
    response = _ask(max_tokens=8)
    usage = response.usage
    assert usage.prompt_tokens > 10  # the chat template alone is longer than that
    assert 1 <= usage.completion_tokens <= 8
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert response.choices[0].finish_reason in {"stop", "length"}
    assert litellm.completion_cost(completion_response=response) == 0.0


def test_json_schema_output_parses_and_matches_the_schema() -> None:
    messages = [{"role": "user", "content": "Judge the answer 'Paris is the capital of France.' "
                 "Reply in JSON with a verdict (good or bad) and a score from 1 to 5."}]
    response_format = {"type": "json_schema", "json_schema": {"name": "judgment", "schema": SCORE_SCHEMA}}
    response = _ask(messages=messages, max_tokens=64, response_format=response_format)
    parsed = json.loads(response.choices[0].message.content)
    assert set(parsed) == {"verdict", "score"}
    assert parsed["verdict"] in {"good", "bad"} and parsed["score"] in {1, 2, 3, 4, 5}
    assert response.choices[0].finish_reason == "stop"  # the grammar ended it, not max_tokens


def test_json_object_mode_yields_a_json_object() -> None:
    # A prompt that asks for JSON: unprompted, this 135M model can nest objects until max_tokens runs out.
    messages = [{"role": "user", "content": 'Is the sky blue on a clear day? Reply as JSON: {"answer": "yes" or "no"}.'}]
    response = _ask(messages=messages, max_tokens=64, response_format={"type": "json_object"})
    assert response.choices[0].finish_reason == "stop"
    assert isinstance(json.loads(response.choices[0].message.content), dict)


def test_logprobs_have_the_openai_shape() -> None:
    response = _ask(max_tokens=12, logprobs=True, top_logprobs=5)
    content = response.choices[0].logprobs.content
    assert len(content) == response.usage.completion_tokens
    assert "".join(entry.token for entry in content) == response.choices[0].message.content
    for entry in content:
        assert entry.logprob <= 0.0 and entry.bytes == list(entry.token.encode("utf-8"))
        top = [alt.logprob for alt in entry.top_logprobs]
        assert len(top) == 5 and top == sorted(top, reverse=True)
        assert sum(math.exp(lp) for lp in top) <= 1.0 + 1e-6
        # greedy decoding picks the most likely token, so it heads its own top list
        assert entry.top_logprobs[0].token == entry.token
        assert entry.top_logprobs[0].logprob == pytest.approx(entry.logprob)


def test_logprobs_agree_with_llama_cpps_own_computation() -> None:
    """Our logits-processor logprobs vs. llama-cpp's logits_all path on a second, throwaway instance."""
    from llama_cpp import Llama

    ours = _ask(max_tokens=3, logprobs=True, top_logprobs=3).choices[0].logprobs.content
    reference_model = Llama(model_path=str(local.gguf_path()), n_ctx=512, n_threads=local.N_THREADS,
                            logits_all=True, verbose=False)
    try:
        reference = reference_model.create_chat_completion(
            QUESTION, temperature=0, max_tokens=3, logprobs=True, top_logprobs=3, repeat_penalty=1.0,
        )["choices"][0]["logprobs"]["content"]
    finally:
        reference_model.close()
    assert [entry.token for entry in ours] == [entry["token"] for entry in reference]
    for mine, theirs in zip(ours, reference, strict=True):
        assert mine.logprob == pytest.approx(float(theirs["logprob"]), abs=1e-3)
        expected = {alt["token"]: float(alt["logprob"]) for alt in theirs["top_logprobs"]}
        for alt in mine.top_logprobs:
            assert alt.logprob == pytest.approx(expected[alt.token], abs=1e-3)


def test_stop_sequences_cut_the_text() -> None:
    response = _ask(stop=[" "], max_tokens=16)
    assert " " not in response.choices[0].message.content.strip()
    assert response.choices[0].finish_reason == "stop"


def test_a_prompt_longer_than_the_context_is_a_context_window_error() -> None:
    too_long = [{"role": "user", "content": "word " * (local.N_CTX + 100)}]
    with pytest.raises(litellm.ContextWindowExceededError, match="context holds"):
        litellm.completion(model="local/smollm2", messages=too_long, max_tokens=4)


def test_two_instances_serve_concurrent_requests_with_the_same_answers(tmp_path) -> None:
    """JUDGELAB_LOCAL_PARALLEL=2 (in a fresh process: the pool is sized at first use): two requests run at the
    same time, on two different instances, and give the text one instance gives alone (temperature 0)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = """
import asyncio, json, threading, litellm
from judgelab.backends import local
local.register()
seen, busy, peak, lock = set(), [0], [0], threading.Lock()
original = local._generate
def spy(messages, settings, index=0):
    with lock:
        seen.add(index); busy[0] += 1; peak[0] = max(peak[0], busy[0])
    try:
        return original(messages, settings, index)
    finally:
        with lock:
            busy[0] -= 1
local._generate = spy
Q = QUESTION_HERE
async def ask(n):
    return await asyncio.gather(*(litellm.acompletion(model="local/smollm2", messages=Q, temperature=0, max_tokens=12)
                                  for _ in range(n)))
alone = asyncio.run(ask(1))[0].choices[0].message.content
both = [r.choices[0].message.content for r in asyncio.run(ask(2))]
print(json.dumps({"alone": alone, "both": both, "instances": sorted(seen), "peak": peak[0]}))
""".replace("QUESTION_HERE", repr(QUESTION))
    env = {**os.environ, local.PARALLEL_ENV_VAR: "2", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["alone"].strip() and out["both"] == [out["alone"], out["alone"]]
    assert out["instances"] == [0, 1] and out["peak"] == 2
