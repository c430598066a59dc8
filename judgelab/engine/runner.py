"""The async judge engine: items x conditions x repeats -> model calls -> the judgments table.

``arun`` is the core; ``run`` is a sync wrapper that also works inside Jupyter's running event
loop (it runs the coroutine on a private loop in a worker thread instead of nesting loops).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from judgelab import judgments
from judgelab.backends.call import ModelCallError, ModelReply, acall, ensure_provider
from judgelab.backends.pricing import UnknownPriceError, estimate_call_cost
from judgelab.backends.retry import RetryPolicy, call_with_retries
from judgelab.engine.budget import BudgetGuard
from judgelab.engine.cache import RequestCache, request_key
from judgelab.engine.items import read_items
from judgelab.engine.logprobs import expected_score
from judgelab.engine.sync import run_sync
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, Rubric, check_fields

REASK_TEMPLATE = (
    "Your previous reply could not be used: {reason}. Reply again with only the answer, "
    "in exactly the output format the instructions ask for."
)


class RunAborted(RuntimeError):
    """The run stopped early (bad credentials, unknown model, unreachable server).

    ``result`` holds every row: judged ones, the failed call, and one unscored row per
    request that was never attempted.
    """

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class RunStats:
    items: int = 0
    requests: int = 0
    judgments: int = 0
    ok: int = 0
    unscored: int = 0
    api_calls: int = 0  # model calls actually sent (first attempts, retries and re-asks)
    cache_hits: int = 0
    retries: int = 0
    reasks: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    engine_cpu_s: float = 0.0
    status_counts: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    aborted: str | None = None
    estimated_cost_usd: float | None = None
    estimated_prompt_tokens: int | None = None

    def summary(self) -> dict[str, Any]:
        """The one-line JSON summary printed by the CLI."""
        return {
            "items": self.items,
            "judgments": self.judgments,
            "ok": self.ok,
            "unscored": self.unscored,
            "api_calls": self.api_calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "cost_usd": None if math.isnan(self.cost_usd) else round(self.cost_usd, 8),
            "wall_s": round(self.wall_s, 3),
        }


@dataclass
class RunResult:
    table: pd.DataFrame
    stats: RunStats


@dataclass
class _Job:
    order: int
    item: dict[str, Any]
    condition: str
    swapped: bool
    repeat: int
    request: JudgeRequest


def item_order_seed(seed: int, item_id: str) -> bool:
    """Seeded per-item coin: True means 'show the candidates swapped' (stable across runs and machines)."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return bool(digest[0] & 1)


class _Engine:
    def __init__(self, rubric: Rubric, model: str, cfg: dict[str, Any]) -> None:
        self.rubric, self.model, self.cfg = rubric, model, cfg
        self.stats = RunStats()
        self.rng = random.Random(cfg["seed"])
        self.budget = BudgetGuard(cfg["max_cost_usd"])
        self.policy = RetryPolicy(max_retries=cfg["max_retries"], base_s=cfg["retry_base_s"])
        self.cache: RequestCache | None = cfg["cache"]
        self.abort_reason: str | None = None
        self.any_success = False
        self.faults: Counter[str] = Counter()
        self._lock = threading.Lock()

    # -- request plumbing -------------------------------------------------------------------------
    def params(self, request: JudgeRequest, repeat: int) -> dict[str, Any]:
        cfg = self.cfg
        temperature = cfg["temperature"]
        if temperature is None:
            temperature = self.rubric.default_temperature if self.rubric.default_temperature is not None else 0.0
        p: dict[str, Any] = {"temperature": float(temperature)}
        if cfg["seed"] is not None:
            p["seed"] = int(cfg["seed"]) + repeat
        max_tokens = cfg["max_tokens"] or request.max_tokens
        if max_tokens:
            p["max_tokens"] = int(max_tokens)
        if cfg["json_mode"] and request.response_format is not None:
            p["response_format"] = request.response_format
        if cfg["logprobs"]:
            p["logprobs"] = True
            p["top_logprobs"] = int(cfg["top_logprobs"])
        p.update(cfg["extra_params"] or {})
        return p

    def key(self, messages: list[dict[str, str]], params: dict[str, Any], repeat: int) -> str:
        return request_key(
            {
                "model": self.model,
                "api_base": self.cfg["api_base"],
                "messages": messages,
                "params": params,
                "rubric": self.rubric.fingerprint(),
                "repeat": repeat,
            }
        )

    async def reply_for(self, messages: list[dict[str, str]], params: dict[str, Any], repeat: int) -> tuple[
        ModelReply | None, bool, int, str, str | None, str
    ]:
        """(reply, cached, attempts, call_id, failure reason, failure status)."""
        key = self.key(messages, params, repeat)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return ModelReply.from_json(hit), True, 0, key, None, ""
        if self.abort_reason is not None:
            return None, False, 0, key, f"not attempted: run stopped ({self.abort_reason})", "api_error"
        estimate = 0.0
        if self.cfg["max_cost_usd"] is not None:  # token counting costs CPU: only when a budget needs it
            _, estimate = estimate_call_cost(self.model, messages, params.get("max_tokens"))
        if not self.budget.try_reserve(estimate):
            return None, False, 0, key, f"budget of {self.cfg['max_cost_usd']} USD reached before this call", (
                "skipped_budget"
            )

        def count_retry(err: ModelCallError) -> None:
            self.stats.retries += 1

        async def one_call() -> ModelReply:
            self.stats.api_calls += 1
            if self.cfg.get("model_object") is not None:  # a judge object (e.g. a RouterJudge) makes the call
                return await self.cfg["model_object"].acall(self.model, messages, params=params,
                                                            timeout=self.cfg["timeout"])
            return await acall(
                self.model,
                messages,
                params=params,
                api_base=self.cfg["api_base"],
                api_key=self.cfg["api_key"],
                timeout=self.cfg["timeout"],
            )

        outcome = await call_with_retries(one_call, self.policy, self.rng, count_retry)
        self.faults.update(outcome.faults)
        reply = outcome.reply
        self.budget.settle(estimate, reply.cost_usd if reply else 0.0)
        if reply is None:
            err = outcome.error
            assert err is not None
            if err.kind == "fatal" or (err.unreachable and not self.any_success):
                where = self.cfg["api_base"] or "the provider"
                self.abort_reason = f"model {self.model!r} at {where}: {err}"
            reason = f"{err} after {outcome.attempts} attempt(s)"
            return None, False, outcome.attempts, key, reason, "api_error"
        self.any_success = True
        if self.cache is not None:
            self.cache.put(key, reply.to_json())
        return reply, False, outcome.attempts, key, None, ""

    # -- one request -> rows ----------------------------------------------------------------------
    async def process(self, job: _Job) -> list[dict[str, Any]]:
        req = job.request
        messages = list(req.messages)
        params = self.params(req, job.repeat)
        attempts_total, earlier_raw = 0, []
        spent: list[tuple[ModelReply, bool]] = []  # every reply of this request, for exact cost and tokens
        for reask in range(self.cfg["max_reasks"] + 1):
            reply, cached, attempts, call_id, fail, fail_status = await self.reply_for(messages, params, job.repeat)
            attempts_total += attempts
            if reply is not None:
                spent.append((reply, cached))
            base = self.base_row(job, call_id, cached, attempts_total, reply, params, spent)
            if reply is None:
                return self.unscored(job, base, fail_status, fail or "call failed", earlier_raw)
            if reply.finish_reason == "content_filter":
                return self.unscored(job, base, "refusal", "provider content filter stopped the answer", earlier_raw)
            try:
                if not reply.text.strip():
                    raise ParseFailure("empty output")
                parsed = self.rubric.parse(reply.text, req)
            except ParseFailure as failure:
                reason = failure.reason
                if reply.finish_reason == "length":
                    reason += " (output truncated at max_tokens)"
                if failure.status == "parse_error" and reask < self.cfg["max_reasks"]:
                    earlier_raw.append(reply.text)
                    self.stats.reasks += 1
                    messages = list(req.messages) + [
                        {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": REASK_TEMPLATE.format(reason=reason)},
                    ]
                    continue
                return self.unscored(job, base, failure.status, reason, earlier_raw)
            return self.scored(job, base, parsed, reply, earlier_raw)
        raise AssertionError("unreachable")

    def base_row(self, job: _Job, call_id: str, cached: bool, attempts: int, reply: ModelReply | None,
                 params: dict[str, Any], spent: list[tuple[ModelReply, bool]]) -> dict[str, Any]:
        """Row fields shared by every row of one request. Tokens, cost and latency are per REQUEST (re-asks
        included) and repeated on each of its rows: sum them over unique call_id. Cached replies and failed
        calls cost 0 (providers do not bill failed requests); an unknown price is NaN."""

        def total(attr: str, ints: bool) -> Any:
            vals = [getattr(r, attr) for r, c in spent if not (c and attr in ("cost_usd", "latency_s"))]
            if not spent:
                return None if ints else 0.0
            if ints:
                return None if any(v is None for v in vals) else sum(vals)
            return float(sum(vals)) if vals else 0.0

        return {
            "run_id": self.cfg["run_id"],
            "item_id": job.item["item_id"],
            "rubric": self.rubric.name,
            "rubric_version": self.rubric.version,
            "judge": self.cfg["judge"],
            "condition": job.condition,
            "repeat": job.repeat,
            "temperature": params["temperature"],
            "seed": params.get("seed"),
            "prompt_hash": job.request.prompt_hash(),
            "call_id": call_id,
            "raw_output": reply.text if reply else None,
            "input_tokens": total("input_tokens", True),
            "output_tokens": total("output_tokens", True),
            "cost_usd": total("cost_usd", False),
            "latency_s": total("latency_s", False),
            "cached": cached,
            "attempts": attempts,
            "system_fingerprint": reply.system_fingerprint if reply else None,
            "created_at": pd.Timestamp.now(tz="UTC"),
            "_order": job.order,
        }

    def unscored(self, job: _Job, base: dict[str, Any], status: str, reason: str, earlier: list[str]) -> list[dict]:
        detail = {"swapped": job.swapped, "earlier_raw_outputs": earlier} if earlier else {"swapped": job.swapped}
        return [
            {**base, "criterion": k.criterion, "side": k.side, "status": status, "unscored_reason": reason,
             "detail": detail}
            for k in job.request.expected_rows
        ]

    def scored(self, job: _Job, base: dict[str, Any], parsed: list[ParsedRow], reply: ModelReply,
               earlier: list[str]) -> list[dict[str, Any]]:
        rows, seen = [], set()
        lp_key = job.request.logprob_criterion
        for p in parsed:
            seen.add(p.key)
            detail = {"swapped": job.swapped, **p.detail}
            if earlier:
                detail["earlier_raw_outputs"] = earlier
            row = {**base, "criterion": p.key.criterion, "side": p.key.side, "status": "ok", "score": p.score,
                   "winner": p.winner, "verdict": p.verdict, "confidence": p.confidence}
            if self.cfg["logprobs"] and lp_key is not None and p.key == RowKey(lp_key) and self.rubric.scale:
                est = expected_score(reply.logprobs, self.rubric.scale)
                row["logprob_score"], row["valid_prob_mass"] = est.expected, est.valid_mass
                detail["logprob_note"] = est.note
            row["detail"] = detail
            rows.append(row)
        for k in job.request.expected_rows:
            if k not in seen:  # a rubric that forgot a row still yields a visible, unscored row
                rows.append({**base, "criterion": k.criterion, "side": k.side, "status": "parse_error",
                             "unscored_reason": f"the parser returned no value for {k.criterion}"
                             + (f" (side {k.side})" if k.side else ""), "detail": {"swapped": job.swapped}})
        return rows


def _conditions(condition: str, swap: bool, order: str, seed: int, item_id: str) -> list[tuple[str, bool]]:
    swapped_label = "swapped" if condition == "original" else f"{condition}+swapped"
    if swap:
        return [(condition, False), (swapped_label, True)]
    if order == "random" and item_order_seed(seed, item_id):
        return [(swapped_label, True)]
    return [(condition, False)]


def _jobs(items: pd.DataFrame, rubric: Rubric, cfg: dict[str, Any]) -> list[_Job]:
    jobs: list[_Job] = []
    for item in items.to_dict(orient="records"):
        check_fields(item, rubric)
    exclude = getattr(rubric, "exclude_judged_items", None)
    if callable(exclude):  # e.g. few-shot pools must never contain an item being judged: refuse up front
        exclude(list(items["item_id"]))
    for item in items.to_dict(orient="records"):
        for condition, swapped in _conditions(cfg["condition"], cfg["swap"], cfg["order"], cfg["seed"] or 0,
                                              item["item_id"]):
            requests = rubric.requests(item, swapped=swapped)
            for repeat in range(cfg["repeats"]):
                for req in requests:
                    jobs.append(_Job(len(jobs), item, condition, swapped, repeat, req))
    return jobs


def _run_id(rubric: Rubric, model: str, judge: str, items: pd.DataFrame, cfg: dict[str, Any]) -> str:
    desc = {k: cfg[k] for k in ("condition", "swap", "order", "repeats", "temperature", "seed", "max_tokens",
                                "logprobs", "extra_params", "api_base")}
    desc.update(rubric=rubric.fingerprint(), model=model, judge=judge, items=list(items["item_id"]))
    return "run-" + hashlib.sha256(json.dumps(desc, sort_keys=True, default=str).encode()).hexdigest()[:12]


async def _execute(jobs: list[_Job], engine: _Engine, concurrency: int, progress: bool) -> list[dict[str, Any]]:
    queue: asyncio.Queue[_Job] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(jobs), desc=f"judging with {engine.cfg['judge']}", unit="call", file=sys.stderr,
               disable=not progress, leave=False)

    async def worker() -> None:
        while True:
            try:
                job = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            rows.extend(await engine.process(job))
            bar.update(1)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(jobs))))))
    finally:
        bar.close()
    return rows


async def arun(
    items: Any,
    rubric: Rubric | str,
    model: str | Any = "local/smollm2",
    *,
    judge: str | None = None,
    api_base: str | None = None,
    api_key: str | None = None,
    concurrency: int = 8,
    repeats: int = 1,
    temperature: float | None = None,
    seed: int | None = 0,
    swap: bool = False,
    order: str = "given",
    condition: str = "original",
    max_cost_usd: float | None = None,
    cache: bool | str | Path | RequestCache = True,
    max_retries: int = 5,
    retry_base_s: float = 0.5,
    max_reasks: int = 1,
    timeout: float = 120.0,
    logprobs: bool = False,
    top_logprobs: int = 5,
    json_mode: bool = True,
    max_tokens: int | None = None,
    extra_params: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    progress: bool = True,
    dry_run: bool = False,
    return_stats: bool = False,
) -> pd.DataFrame | RunResult:
    """Judge ``items`` with ``rubric`` on ``model``; return the judgments table (or a RunResult).

    items: a DataFrame, a list of dicts or a JSONL/CSV/Parquet path (``item_id`` generated if absent).
    model: a litellm model string, or a judge object with ``model_name`` and an async ``acall`` (e.g.
    :func:`judgelab.backends.router.router_judge`, a litellm Router over several deployments).
    swap: run both candidate orders (conditions "original" and "swapped"); order="random" instead shows
    each item once, in a seeded per-item order. repeats: samples per request (cache-distinct).
    cache: True (the default cache file), False, a path, or a RequestCache. max_cost_usd: no call is
    issued once spent + reserved estimates would pass it; those rows are "skipped_budget".
    dry_run: make no calls; return an estimate of calls, tokens and cost in the stats.
    max_retries / retry_base_s: retries per call and the base (seconds) of their jittered exponential backoff.
    """
    from judgelab.rubrics import load_rubric

    t0, cpu0 = time.perf_counter(), time.process_time()
    if isinstance(rubric, str | Path):
        rubric = load_rubric(rubric)
    if order not in ("given", "random"):
        raise ValueError(f"order must be 'given' or 'random', not {order!r}")
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    model_object = None
    if not isinstance(model, str):  # engine hook: an object with .model_name and async .acall(...) is the judge
        if not (hasattr(model, "model_name") and hasattr(model, "acall")):
            raise TypeError(f"model must be a model name or a judge object with model_name and acall, "
                            f"not {type(model).__name__}")
        model_object, model = model, model.model_name
    ensure_provider(model)
    item_df = read_items(items)
    own_cache = False
    if cache is True:
        cache_obj: RequestCache | None = RequestCache()
        own_cache = True
    elif cache is False or cache is None:
        cache_obj = None
    elif isinstance(cache, RequestCache):
        cache_obj = cache
    else:
        cache_obj, own_cache = RequestCache(cache), True
    judge_name = judge or model
    cfg: dict[str, Any] = dict(
        api_base=api_base, api_key=api_key, repeats=repeats, temperature=temperature, seed=seed, swap=swap,
        order=order, condition=condition, max_cost_usd=max_cost_usd, cache=cache_obj, max_retries=max_retries,
        retry_base_s=retry_base_s,
        max_reasks=max_reasks, timeout=timeout, logprobs=logprobs, top_logprobs=top_logprobs, json_mode=json_mode,
        max_tokens=max_tokens, extra_params=dict(extra_params or {}), judge=judge_name, model_object=model_object,
    )
    cfg["run_id"] = run_id or _run_id(rubric, model, judge_name, item_df, cfg)
    engine = _Engine(rubric, model, cfg)
    try:
        jobs = _jobs(item_df, rubric, cfg)
        engine.stats.items, engine.stats.requests = len(item_df), len(jobs)
        if dry_run:
            _estimate(engine, jobs)
            result = RunResult(judgments.empty_table(), engine.stats)
            return result if return_stats else result.table
        if max_cost_usd is not None:
            _, probe = estimate_call_cost(model, jobs[0].request.messages, None) if jobs else (0, 0.0)
            if math.isnan(probe):
                raise UnknownPriceError(
                    f"max_cost_usd is set but litellm knows no price for model {model!r}; register one with "
                    "litellm.register_model(...) or run without a budget"
                )
        rows = await _execute(jobs, engine, concurrency, progress)
    finally:
        if own_cache and cache_obj is not None:
            cache_obj.close()
    rows.sort(key=lambda r: r["_order"])
    for r in rows:
        r.pop("_order")
    table = judgments.make_table(rows)
    st = engine.stats
    st.judgments = len(table)
    st.status_counts = judgments.status_counts(table)
    st.ok = st.status_counts["ok"]
    st.unscored = st.judgments - st.ok
    costs = table.drop_duplicates("call_id")["cost_usd"] if len(table) else pd.Series(dtype=float)
    st.cost_usd = float(costs.to_numpy(dtype=float, na_value=math.nan).sum()) if len(costs) else 0.0
    st.faults = dict(engine.faults)
    st.aborted = engine.abort_reason
    st.wall_s = time.perf_counter() - t0
    st.engine_cpu_s = time.process_time() - cpu0
    result = RunResult(table, st)
    if engine.abort_reason is not None:
        raise RunAborted(f"run stopped early: {engine.abort_reason}", result)
    return result if return_stats else table


def _estimate(engine: _Engine, jobs: Iterable[_Job]) -> None:
    total_tokens, total_cost, cached = 0, 0.0, 0
    for job in jobs:
        params = engine.params(job.request, job.repeat)
        if engine.cache is not None and engine.cache.get(engine.key(list(job.request.messages), params, job.repeat)):
            cached += 1
            continue
        tokens, cost = estimate_call_cost(engine.model, job.request.messages, params.get("max_tokens"))
        total_tokens += tokens
        total_cost += cost
    engine.stats.cache_hits = cached
    engine.stats.estimated_prompt_tokens = total_tokens
    engine.stats.estimated_cost_usd = total_cost


def run(*args: Any, **kwargs: Any) -> pd.DataFrame | RunResult:
    """Synchronous :func:`arun`; safe inside a running event loop (Jupyter), and Ctrl-C stops the run."""
    return run_sync(lambda: arun(*args, **kwargs), name="judgelab-run")
