"""Embedded-judge throughput: judgments/minute at concurrency 1 vs 4, and raw llama.cpp tokens/s for comparison.

The judgments are the demo's (judgelab.studies.demo: its items, its short pairwise rubric, max 64 output
tokens), judged by SmolLM2-135M through

  * ``server``: ``judgelab serve``'s llama.cpp HTTP server (judgelab.backends.server.start_server), once with
    its default ``logprobs=True`` (llama-cpp's logits_all) and once with ``logprobs=False``;
  * ``inprocess``: the in-process provider ``local/smollm2`` (judgelab.backends.local), in a fresh process per
    ``--parallel K`` (``$JUDGELAB_LOCAL_PARALLEL``: K model instances of 2 // K threads each);

with the request cache off, so every judgment is computed. The raw figure is ``Llama.create_completion`` on
the first item's rendered prompt, from a reset context (full prompt evaluation, as every judgment does), at
temperature 0, timed once with max_tokens=1 (prompt evaluation) and once with the judgment's token cap.

The server runs one request at a time whatever the concurrency (llama-cpp-python's server holds a lock per
request: see judgelab.backends.server.start_server), and one Llama context decodes one sequence; the
in-process provider serves up to K requests at once from K instances.

Default run (a few judgments, under 3 minutes on 2 cores): python benchmarks/bench_local.py
Longer: python benchmarks/bench_local.py --judgments 12 --parallel 1 2 --no-logprobs-server --raw-repeats 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # judgelab.backends.local.OMP_WAIT_POLICY, for the raw Llama

import judgelab  # noqa: E402
from judgelab.backends import local  # noqa: E402
from judgelab.backends.server import start_server  # noqa: E402
from judgelab.rubrics import load_rubric  # noqa: E402
from judgelab.studies.demo import DEMO_RUBRIC_FILE, demo_items  # noqa: E402


class ServerFormat:
    """The rubric with its response_format in the form llama-cpp-python's server accepts.

    Its /v1/chat/completions validates ``response_format.type`` as 'text' or 'json_object' only (a json_schema
    request is answered 500), and takes a JSON schema as ``{"type": "json_object", "schema": ...}``; the
    grammar it builds from the schema is the one the in-process provider builds from json_schema.
    """

    def __init__(self, rubric: Any) -> None:
        self.rubric = rubric

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rubric, name)

    def requests(self, item: Any, **kw: Any) -> list[Any]:
        out = []
        for req in self.rubric.requests(item, **kw):
            fmt = req.response_format
            if fmt and fmt.get("type") == "json_schema":
                fmt = {"type": "json_object", "schema": (fmt.get("json_schema") or {}).get("schema")}
            out.append(dataclasses.replace(req, response_format=fmt))
        return out


def judge(items: list[dict[str, Any]], rubric: Any, model: str, concurrency: int, **kw: Any) -> dict[str, float]:
    """Judge ``items`` once (cache off); judgments/minute and the tokens the judge processed per second."""
    t0 = time.perf_counter()
    res = judgelab.run(items, rubric, model, cache=False, concurrency=concurrency, progress=False,
                       return_stats=True, **kw)
    wall = time.perf_counter() - t0
    calls = res.table.drop_duplicates("call_id")
    if res.stats.api_calls != len(items):
        raise SystemExit(f"expected {len(items)} calls, the run made {res.stats.api_calls}: {res.stats.summary()}")
    tokens_in, tokens_out = float(calls["input_tokens"].sum()), float(calls["output_tokens"].sum())
    return {"wall_s": wall, "per_min": 60 * len(items) / wall, "tok_s": (tokens_in + tokens_out) / wall,
            "in": tokens_in / len(items), "out": tokens_out / len(items), "ok": res.stats.ok}


def raw_llama(messages: list[dict[str, str]], max_tokens: int, repeats: int) -> dict[str, float]:
    """Llama.create_completion on the rendered prompt, from a reset context each time (median of ``repeats``)."""
    import llama_cpp  # loaded under OMP_WAIT_POLICY=PASSIVE (set at the top), as the embedded judge does
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    llm = llama_cpp.Llama(model_path=str(local.gguf_path()), n_ctx=local.N_CTX, n_threads=local.N_THREADS,
                          n_threads_batch=local.N_THREADS, logits_all=False, verbose=False)
    try:
        formatter = Jinja2ChatFormatter(
            template=llm.metadata["tokenizer.chat_template"],
            eos_token=llm.detokenize([llm.token_eos()], special=True).decode("utf-8", "replace"),
            bos_token=llm.detokenize([llm.token_bos()], special=True).decode("utf-8", "replace"))
        prompt = formatter(messages=messages).prompt

        def once(cap: int) -> tuple[float, dict[str, int]]:
            llm.reset()
            t0 = time.perf_counter()
            out = llm.create_completion(prompt, max_tokens=cap, temperature=0.0, top_k=0, min_p=0.0,
                                        repeat_penalty=1.0)
            return time.perf_counter() - t0, out["usage"]

        once(1)  # warm-up
        prefill = statistics.median(once(1)[0] for _ in range(repeats))
        runs = [once(max_tokens) for _ in range(repeats)]
    finally:
        llm.close()
    wall = statistics.median(w for w, _ in runs)
    usage = runs[0][1]
    generated = usage["completion_tokens"]
    return {"prompt_tokens": usage["prompt_tokens"], "completion_tokens": generated, "wall_s": wall,
            "prefill_s": prefill, "tok_s": usage["total_tokens"] / wall,
            "prompt_tok_s": usage["prompt_tokens"] / prefill,
            "gen_tok_s": (generated - 1) / max(wall - prefill, 1e-9) if generated > 1 else float("nan"),
            "per_min": 60 / wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgments", type=int, default=4, help="judgments per measurement (default 4)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4], help="concurrencies (default 1 4)")
    parser.add_argument("--paths", nargs="+", choices=["server", "inprocess"], default=["server", "inprocess"],
                        help="how the judge is reached (default: both)")
    parser.add_argument("--parallel", type=int, nargs="+", default=[1, 2],
                        help="in-process model instances, one fresh process each (default 1 2)")
    parser.add_argument("--child-parallel", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-logprobs-server", action="store_true",
                        help="also measure the server started with logprobs=False (llama-cpp logits_all off)")
    parser.add_argument("--raw-repeats", type=int, default=1, help="timed raw create_completion calls (default 1)")
    args = parser.parse_args()
    if not local.is_available():
        raise SystemExit(f"the embedded judge is not installed; {local.INSTALL_HINT}")

    rubric = load_rubric(DEMO_RUBRIC_FILE)
    items = demo_items()
    if args.judgments > len(items):
        items = [{**items[i % len(items)], "item_id": f"{items[i % len(items)]['item_id']}-{i}"}
                 for i in range(args.judgments)]
    items = items[:args.judgments]
    results: list[tuple[str, int, dict[str, float]]] = []

    def measure(label: str, model: str, rubric: Any = rubric, warm: int = 1, **kw: Any) -> None:
        # warm-up (not timed): model load(s), first connection
        judge([{**items[0], "item_id": f"warm{i}"} for i in range(warm)], rubric, model, warm, **kw)
        for c in args.concurrency:
            results.append((label, c, judge(items, rubric, model, c, **kw)))

    if args.child_parallel:  # one in-process measurement, in its own process (the pool is sized at first use)
        measure(f"in-process, {args.child_parallel} instance(s)", "local/smollm2", warm=args.child_parallel)
        print(json.dumps(results))
        return

    t_start = time.perf_counter()
    if "server" in args.paths:
        variants = [("server (logprobs on)", True)] + ([("server (logprobs off)", False)]
                                                       if args.no_logprobs_server else [])
        for label, logprobs in variants:
            with start_server(logprobs=logprobs) as server:
                measure(label, server.model_name, rubric=ServerFormat(rubric), api_base=server.base_url)
    if "inprocess" in args.paths:
        for k in args.parallel:
            env = {**os.environ, local.PARALLEL_ENV_VAR: str(k)}
            cmd = [sys.executable, __file__, "--child-parallel", str(k), "--judgments", str(args.judgments),
                   "--concurrency", *map(str, args.concurrency)]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                raise SystemExit(f"the in-process measurement with {k} instance(s) failed:\n{proc.stderr[-2000:]}")
            results.extend(tuple(row) for row in json.loads(proc.stdout.splitlines()[-1]))
    first = rubric.requests(items[0])[0]
    raw = raw_llama(first.messages, first.max_tokens or 64, args.raw_repeats)

    print(f"SmolLM2-135M Q4_1, {local.N_THREADS} threads, {os.cpu_count()} cores; demo pairwise rubric, "
          f"{len(items)} judgments per row, cache off")
    print(f"{'path':28s} {'conc':>4s} {'wall s':>8s} {'judg/min':>9s} {'tok/s':>7s} {'in tok':>7s} {'out tok':>7s}")
    for label, c, r in results:
        print(f"{label:28s} {c:4d} {r['wall_s']:8.1f} {r['per_min']:9.1f} {r['tok_s']:7.0f} {r['in']:7.0f} "
              f"{r['out']:7.0f}")
    for label in dict.fromkeys(label for label, _, _ in results):
        rows = {c: r for lab, c, r in results if lab == label}
        if 1 in rows and len(rows) > 1:
            top = max(rows)
            print(f"{label}: concurrency {top} / 1 = {rows[top]['per_min'] / rows[1]['per_min']:.2f} x judgments/min")
    print(f"raw Llama.create_completion, same first prompt ({raw['prompt_tokens']} prompt + "
          f"{raw['completion_tokens']} generated tokens): {raw['wall_s']:.2f} s = {raw['per_min']:.1f} completions/min, "
          f"{raw['tok_s']:.0f} tok/s overall; prompt evaluation {raw['prompt_tok_s']:.0f} tok/s, "
          f"generation {raw['gen_tok_s']:.1f} tok/s")
    print(f"total benchmark time {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
