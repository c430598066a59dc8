"""Engine throughput against a local OpenAI-compatible server that answers every request after 100 ms.

Measured side by side in one run:
  1. judgelab.run: 400 judgments at concurrency 32 (target: <= 1.25 x the ideal 400 x 0.1 / 32 s);
  2. a plain sequential litellm loop over the same 400 requests (what users write by hand);
  3. a fully cached rerun of the 400 (target: under 1 s);
and the client's CPU time per call (the server runs in its own process). Run: python benchmarks/bench_engine.py
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm  # noqa: E402

import judgelab  # noqa: E402
from tests.support.toy_rubrics import ToyDirect  # noqa: E402

N, CONCURRENCY, DELAY = 400, 32, 0.1


class _ServerProcess:
    """The stub server in its own process, so its CPU and GIL are not charged to the client."""

    def __enter__(self) -> _ServerProcess:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.openai_stub", "--delay", str(DELAY)],
                                     stdout=subprocess.PIPE, text=True, cwd=str(REPO))
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def main() -> None:
    items = [{"item_id": f"b{i}", "answer": f"answer {i}"} for i in range(N)]
    ideal = N * DELAY / CONCURRENCY
    with _ServerProcess() as srv, tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "bench.sqlite"
        kw = dict(api_base=srv.base_url, progress=False, return_stats=True, cache=cache, concurrency=CONCURRENCY)
        # warm-up: imports, connection pool, tokenizer (not timed; separate items so nothing is cached for the run)
        judgelab.run(items[:8], ToyDirect(), "openai/bench-warmup", **kw)

        t0 = time.perf_counter()
        res = judgelab.run(items, ToyDirect(), "openai/bench", **kw)
        engine_s = time.perf_counter() - t0
        assert res.stats.ok == N and res.stats.api_calls == N, res.stats
        assert res.stats.retries == 0, "the server refused connections: the ratio would measure retries"
        cpu_per_call_ms = 1000 * res.stats.engine_cpu_s / N

        t0 = time.perf_counter()
        cached = judgelab.run(items, ToyDirect(), "openai/bench", **kw)
        cached_s = time.perf_counter() - t0
        assert cached.stats.api_calls == 0 and cached.stats.cache_hits == N

        rubric = ToyDirect()

        async def sequential() -> None:
            for item in items:
                msgs = rubric.requests(item)[0].messages
                await litellm.acompletion(model="openai/bench-seq", messages=msgs, api_base=srv.base_url,
                                          api_key="no-key-needed", temperature=0.0, max_tokens=20)

        t0 = time.perf_counter()
        asyncio.run(sequential())
        seq_s = time.perf_counter() - t0

        async def bare_concurrent() -> None:
            # the floor: litellm alone, same 400 requests, 32 in flight, nothing else (no cache, no parsing)
            gate = asyncio.Semaphore(CONCURRENCY)

            async def one(item: dict) -> None:
                async with gate:
                    await litellm.acompletion(model="openai/bench-bare", messages=rubric.requests(item)[0].messages,
                                              api_base=srv.base_url, api_key="no-key-needed", temperature=0.0,
                                              max_tokens=20, max_retries=0)

            await asyncio.gather(*(one(item) for item in items))

        cpu0, t0 = time.process_time(), time.perf_counter()
        asyncio.run(bare_concurrent())
        bare_s, bare_cpu_ms = time.perf_counter() - t0, 1000 * (time.process_time() - cpu0) / N

    print(f"server delay {DELAY * 1000:.0f} ms, {N} judgments, concurrency {CONCURRENCY}")
    print(f"ideal (N x delay / concurrency):      {ideal:7.3f} s")
    print(f"judgelab.run:                         {engine_s:7.3f} s  = {engine_s / ideal:.2f} x ideal (target <= 1.25)")
    print(f"plain sequential litellm loop:        {seq_s:7.3f} s  = {seq_s / engine_s:.1f} x slower than judgelab.run")
    print(f"bare litellm, same concurrency:       {bare_s:7.3f} s  = {bare_s / ideal:.2f} x ideal (litellm's floor here)")
    print(f"judgelab.run over the bare floor:     {engine_s / bare_s:7.2f} x")
    print(f"fully cached rerun:                   {cached_s:7.3f} s  (target < 1 s)")
    print(f"client CPU time per call:             {cpu_per_call_ms:7.2f} ms (judgelab + litellm + openai client)")
    print(f"  of which bare litellm per call:     {bare_cpu_ms:7.2f} ms")


if __name__ == "__main__":
    main()
