"""Engine throughput against a local OpenAI-compatible server that answers every request after 100 ms.

Measured side by side in one run:
  1. judgelab.run in process: N judgments at concurrency C (target: <= 1.25 x the ideal N x 0.1 / C s);
  2. a plain sequential litellm loop over the same N requests (what users write by hand);
  3. bare litellm.acompletion at the same concurrency (litellm's floor), and judgelab.run over it;
  4. a fully cached rerun of the N (target: under 1 s);
  5. the CLI path: ``judgelab run`` as a fresh subprocess against a bare-litellm subprocess making the same
     calls at the same concurrency (both cold: a new interpreter each, so start-up and imports count on
     both sides), alternated ``--rounds`` times; the start-up share (imports only) is timed separately;
     each round also runs the bare script with the garbage-collector settings ``judgelab run`` uses (imports
     frozen, see judgelab.cli._preload), so the CLI's gain from them is shown apart from the engine's own work;
and the client's CPU time per call (the server runs in its own process).

Run: python benchmarks/bench_engine.py [--n 400] [--concurrency 32] [--rounds 3] [--skip-cli | --cli-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DELAY = 0.1
CLI_RUBRIC = "direct_score"
# what the stub answers the CLI's direct_score requests: a well-formed verdict, so every judgment is scored
CLI_REPLY = json.dumps({"scores": [{"criterion": c, "evidence": ["e"], "justification": "j", "score": 4,
                                    "improvement": "i"} for c in ("factual_accuracy", "instruction_following")],
                        "summary": "fine"})

# The bare side of the CLI comparison: a script that imports litellm only and makes the same calls.
BARE_SCRIPT = """
import asyncio, json, sys, time
import litellm
imported = time.time()
spec = json.load(open(sys.argv[1]))

async def main():
    gate = asyncio.Semaphore(spec["concurrency"])

    async def one(req):
        async with gate:
            await litellm.acompletion(model=spec["model"], api_base=spec["api_base"], api_key="no-key-needed",
                                      max_retries=0, drop_params=True, **req)

    await asyncio.gather(*(one(req) for req in spec["requests"]))

asyncio.run(main())
print(json.dumps({"imported": imported, "calls": len(spec["requests"])}))
"""

# The same script with the garbage-collector settings `judgelab run` uses (judgelab.cli._preload): imports with the
# collector off, then frozen, and frozen again at exit. Not the target (users' scripts do not do this): it shows
# how much of the CLI's time is the engine's work once both sides collect garbage alike.
BARE_SCRIPT_GC = ("import gc\ngc.disable()\n"
                  + BARE_SCRIPT.replace("imported = time.time()\n", "imported = time.time()\ngc.freeze()\ngc.enable()\n")
                  + "gc.freeze()\n")
assert BARE_SCRIPT_GC.count("gc.freeze()") == 2

# the modules `judgelab run` loads before its first call (its start-up), imported as `judgelab run` imports them
# (judgelab.cli._preload: the collector off, then the imports frozen) and nothing else
CLI_IMPORTS = "from judgelab.cli import _preload; _preload(['run'])"


class _ServerProcess:
    """The stub server in its own process, so its CPU and GIL are not charged to the client."""

    def __init__(self, reply: str | None = None) -> None:
        self.reply = reply

    def __enter__(self) -> _ServerProcess:
        extra = ["--reply", self.reply] if self.reply is not None else []
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.support.openai_stub", "--delay", str(DELAY), *extra],
                                     stdout=subprocess.PIPE, text=True, cwd=str(REPO))
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def _timed(cmd: list[str], env: dict[str, str], cpu: list[float] | None = None
           ) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(start wall clock, elapsed s, the finished process); fails loudly when the command fails. The process's
    CPU time (user + system) is appended to ``cpu`` when given."""
    start = time.time()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(REPO))
    elapsed = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    if cpu is not None:
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return start, elapsed, proc


def in_process(n: int, concurrency: int) -> None:
    import litellm

    import judgelab
    from judgelab.engine.config import RunConfig
    from tests.support.toy_rubrics import ToyDirect

    items = [{"item_id": f"b{i}", "answer": f"answer {i}"} for i in range(n)]
    ideal = n * DELAY / concurrency
    with _ServerProcess() as srv, tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "bench.sqlite"
        kw = dict(api_base=srv.base_url, progress=False, return_stats=True, cache=cache, concurrency=concurrency)
        # warm-up: imports, connection pool, tokenizer (not timed; separate items so nothing is cached for the run)
        judgelab.run(items[:8], ToyDirect(), "openai/bench-warmup", **kw)

        t0 = time.perf_counter()
        res = judgelab.run(items, ToyDirect(), "openai/bench", **kw)
        engine_s = time.perf_counter() - t0
        assert res.stats.ok == n and res.stats.api_calls == n, res.stats
        assert res.stats.retries == 0, "the server refused connections: the ratio would measure retries"
        cpu_per_call_ms = 1000 * res.stats.engine_cpu_s / n

        t0 = time.perf_counter()
        cached = judgelab.run(items, ToyDirect(), "openai/bench", **kw)
        cached_s = time.perf_counter() - t0
        assert cached.stats.api_calls == 0 and cached.stats.cache_hits == n

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
            # the floor: litellm alone, same requests (the parameters judgelab sends: temperature, seed, max_tokens,
            # response_format), same number in flight, nothing else (no cache, no parsing)
            gate = asyncio.Semaphore(concurrency)

            async def one(item: dict) -> None:
                request = rubric.requests(item)[0]
                async with gate:
                    await litellm.acompletion(model="openai/bench-bare", messages=request.messages,
                                              api_base=srv.base_url, api_key="no-key-needed", max_retries=0,
                                              **RunConfig().request_params(rubric, request, 0))

            await asyncio.gather(*(one(item) for item in items))

        cpu0, t0 = time.process_time(), time.perf_counter()
        asyncio.run(bare_concurrent())
        bare_s, bare_cpu_ms = time.perf_counter() - t0, 1000 * (time.process_time() - cpu0) / n

    print(f"== in process: server delay {DELAY * 1000:.0f} ms, {n} judgments, concurrency {concurrency}")
    print(f"ideal (N x delay / concurrency):      {ideal:7.3f} s")
    print(f"judgelab.run:                         {engine_s:7.3f} s  = {engine_s / ideal:.2f} x ideal (target <= 1.25)")
    print(f"plain sequential litellm loop:        {seq_s:7.3f} s  = {seq_s / engine_s:.1f} x slower than judgelab.run")
    print(f"bare litellm, same concurrency:       {bare_s:7.3f} s  = {bare_s / ideal:.2f} x ideal (litellm's floor here)")
    print(f"judgelab.run over the bare floor:     {engine_s / bare_s:7.2f} x")
    print(f"fully cached rerun:                   {cached_s:7.3f} s  (target < 1 s)")
    print(f"client CPU time per call:             {cpu_per_call_ms:7.2f} ms (judgelab + litellm + openai client)")
    print(f"  of which bare litellm per call:     {bare_cpu_ms:7.2f} ms")


def cli(n: int, concurrency: int, rounds: int) -> None:
    from judgelab.rubrics import load_rubric

    rubric = load_rubric(CLI_RUBRIC)
    items = [{"item_id": f"c{i}", "prompt": f"question {i}?", "response": f"answer {i}"} for i in range(n)]
    requests = []
    for item in items:
        req = rubric.requests(item)[0]
        requests.append({"messages": req.messages, "temperature": 0.0, "max_tokens": req.max_tokens,
                         "response_format": req.response_format})
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(REPO)}
    env.pop("JUDGELAB_CACHE", None)
    cli_s: list[float] = []
    bare_s: list[float] = []
    bare_gc_s: list[float] = []
    bare_start_s: list[float] = []
    cpu: dict[str, list[float]] = {"bare": [], "cli": [], "bare_gc": []}
    with _ServerProcess(CLI_REPLY) as srv, tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "items.jsonl"
        data.write_text("".join(json.dumps(item) + "\n" for item in items))
        spec = Path(tmp) / "requests.json"
        spec.write_text(json.dumps({"model": "openai/bench-bare", "api_base": srv.base_url,
                                    "concurrency": concurrency, "requests": requests}))
        script = Path(tmp) / "bare_litellm.py"
        script.write_text(BARE_SCRIPT)
        script_gc = Path(tmp) / "bare_litellm_gc.py"
        script_gc.write_text(BARE_SCRIPT_GC)
        for r in range(rounds):
            start, elapsed, proc = _timed([sys.executable, str(script), str(spec)], env, cpu["bare"])
            bare_s.append(elapsed)
            bare_start_s.append(json.loads(proc.stdout.splitlines()[-1])["imported"] - start)
            # a new cache file each round: every call goes to the server, as on the bare side
            out = Path(tmp) / f"out{r}"
            _, elapsed, proc = _timed([sys.executable, "-m", "judgelab.cli", "run", "--rubric", CLI_RUBRIC,
                                       "--data", str(data), "--model", "openai/bench-cli", "--api-base", srv.base_url,
                                       "--concurrency", str(concurrency), "--out", str(out),
                                       "--cache", str(Path(tmp) / f"cache{r}.sqlite")], env, cpu["cli"])
            summary = json.loads(proc.stdout.splitlines()[-1])
            assert summary["unscored"] == 0 and summary["api_calls"] == n and summary["retries"] == 0, summary
            cli_s.append(elapsed)
            bare_gc_s.append(_timed([sys.executable, str(script_gc), str(spec)], env, cpu["bare_gc"])[1])
        # start-up alone: a fresh interpreter importing what each side loads before its first call
        imports_bare = [_timed([sys.executable, "-c", "import litellm"], env)[1] for _ in range(rounds)]
        imports_cli = [_timed([sys.executable, "-c", CLI_IMPORTS], env)[1] for _ in range(rounds)]

    med = statistics.median
    ideal = n * DELAY / concurrency
    print(f"== CLI path: fresh subprocesses, {n} judgments ({CLI_RUBRIC}), concurrency {concurrency}, "
          f"{rounds} alternated rounds (medians; per round in brackets)")
    print(f"ideal calls alone (N x delay / C):    {ideal:7.3f} s")
    print(f"bare litellm script (python x.py):    {med(bare_s):7.3f} s  {[round(x, 2) for x in bare_s]}")
    print(f"judgelab run (python -m judgelab.cli): {med(cli_s):6.3f} s  {[round(x, 2) for x in cli_s]}")
    print(f"judgelab run over bare litellm:       {med(cli_s) / med(bare_s):7.2f} x  (target <= 1.10); per round "
          f"{[round(c / b, 2) for c, b in zip(cli_s, bare_s, strict=True)]}")
    print(f"client CPU (user + system), bare / judgelab run:       {med(cpu['bare']):6.3f} s / {med(cpu['cli']):.3f} s")
    print(f"bare script with judgelab run's GC settings (not the target: imports frozen, as judgelab.cli does): "
          f"{med(bare_gc_s):.3f} s {[round(x, 2) for x in bare_gc_s]}, CPU {med(cpu['bare_gc']):.3f} s;")
    print(f"  judgelab run over it (the engine's own work, garbage collected alike): "
          f"{med(cli_s) / med(bare_gc_s):.2f} x; per round "
          f"{[round(c / b, 2) for c, b in zip(cli_s, bare_gc_s, strict=True)]}")
    print(f"start-up, bare (until litellm is imported, inside the run): {med(bare_start_s):6.3f} s "
          f"= {med(bare_start_s) / med(bare_s):.0%} of the bare run")
    print(f"start-up alone, python -c 'import litellm':                 {med(imports_bare):6.3f} s")
    print(f"start-up alone, judgelab run's imports:                     {med(imports_cli):6.3f} s "
          f"= {med(imports_cli) / med(cli_s):.0%} of the CLI run")
    print(f"  so after start-up: CLI {med(cli_s) - med(imports_cli):.3f} s vs bare "
          f"{med(bare_s) - med(imports_bare):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=400, help="judgments (default 400)")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight (default 32)")
    parser.add_argument("--rounds", type=int, default=3, help="alternated CLI/bare subprocess rounds (default 3)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--skip-cli", action="store_true", help="only the in-process measurements")
    which.add_argument("--cli-only", action="store_true", help="only the CLI-path measurements")
    args = parser.parse_args()
    if not args.cli_only:
        in_process(args.n, args.concurrency)
    if not args.skip_cli:
        cli(args.n, args.concurrency, args.rounds)


if __name__ == "__main__":
    main()
