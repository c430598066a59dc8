"""The async judge engine: items x conditions x repeats -> model calls -> the judgments table.

``arun`` is the core; ``run`` is its sync twin that also works inside Jupyter's running event
loop (it runs the coroutine on a private loop in a worker thread instead of nesting loops);
``estimate`` says what a run would cost without calling anything. Requests are planned and
replies turned into rows by :mod:`judgelab.engine.rows`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import random
import sys
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from judgelab import judgments
from judgelab.backends.call import (
    ModelCallError,
    ModelReply,
    acall,
    classify,
    ensure_provider,
    prepare_calls,
    timed_out,
)
from judgelab.backends.pricing import CallCostEstimator, UnknownPriceError, estimate_call_cost
from judgelab.backends.redaction import install_log_redaction, redact
from judgelab.backends.retry import RetryPolicy, call_with_retries
from judgelab.engine.budget import BudgetGuard
from judgelab.engine.cache import CacheIOError, RequestCache, request_key
from judgelab.engine.config import RunConfig
from judgelab.engine.items import read_items
from judgelab.engine.logprobs import expected_score
from judgelab.engine.recovery import RecoveryFile
from judgelab.engine.rows import (
    Job,
    UnreadableReply,
    item_order_seed,
    iter_jobs,
    plan_jobs,
    read_model_reply,
    reply_detail,
    scored_rows,
    unscored_rows,
)
from judgelab.engine.sync import sync_twin
from judgelab.errors import ConfigError, JudgelabError
from judgelab.judgments import API_ERROR, OK, PARSE_ERROR, SKIPPED_BUDGET
from judgelab.rubrics.base import JudgeRequest, ParsedRow, ParseFailure, RowKey, Rubric

__all__ = ["REASK_TEMPLATE", "JudgeObjectError", "Reply", "RunAborted", "RunEstimate", "RunResult", "RunStats",
           "aestimate", "arun", "engine_for", "estimate", "item_order_seed", "open_cache", "resolve_model", "run",
           "run_cells", "check_budget_prices", "finish_stats"]

REASK_TEMPLATE = (
    "Your previous reply could not be used: {reason}. Reply again with only the answer, "
    "in exactly the output format the instructions ask for."
)


class JudgeObjectError(ConfigError, TypeError):
    """``model`` is neither a model name nor a judge object (``model_name`` + async ``acall``)."""


class RunAborted(JudgelabError, RuntimeError):
    """The run stopped early (bad credentials, unknown model, unreachable server, a cache that cannot be written).

    ``result`` holds every row: judged ones, the failed call, and one unscored row per
    request that was never attempted.
    """

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(redact(message))
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
    retried_unscored: int | None = None  # requests re-asked because their cached answer was unscored; None: not asked
    shared_waits: int = 0  # requests another process (or task) was calling: waited for its answer instead
    cost_usd: float = 0.0
    wall_s: float = 0.0
    engine_cpu_s: float = 0.0
    status_counts: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    aborted: str | None = None

    def summary(self) -> dict[str, Any]:
        """The one-line JSON summary printed by the CLI (``retried_unscored`` only when retries were asked for)."""
        line = {
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
        if self.retried_unscored is not None:
            line["retried_unscored"] = self.retried_unscored
        return line


@dataclass
class RunResult:
    """The judgments table of a run and its :class:`RunStats`."""

    table: pd.DataFrame
    stats: RunStats

    def _repr_html_(self) -> str:  # the notebook view: summary line and the table's head
        from judgelab.viz.notebook_views import result_html

        return result_html("judge run", self.table, stats=vars(self.stats))


@dataclass(frozen=True)
class Reply:
    """What asking the model (or the cache) for one request gave: a reply, or why there is none."""

    reply: ModelReply | None
    cached: bool
    attempts: int  # model calls made for this ask (0 for a cache hit or a call never sent)
    call_id: str  # the request's cache key
    failure_status: str = ""  # api_error / skipped_budget when there is no reply
    failure_reason: str = ""
    failed_attempts: tuple[str, ...] = ()  # why each failed attempt of this ask failed (retried or final)


@dataclass(frozen=True)
class RunEstimate:
    """What a run would do, computed without any call (:func:`estimate`)."""

    items: int
    requests: int
    cached: int  # requests already answered in the cache (they would cost nothing)
    estimated_prompt_tokens: int
    estimated_max_cost_usd: float  # upper bound (full max_tokens outputs); NaN when the price is unknown

    def summary(self) -> dict[str, Any]:
        cost = self.estimated_max_cost_usd
        return {"items": self.items, "requests": self.requests, "cached": self.cached,
                "estimated_prompt_tokens": self.estimated_prompt_tokens,
                "estimated_max_cost_usd": None if math.isnan(cost) else round(cost, 6)}


class _Engine:
    def __init__(self, rubric: Rubric, model: str, config: RunConfig, cache: RequestCache | None,
                 caller: Any = None, *, budget: BudgetGuard | None = None, stats: RunStats | None = None,
                 faults: Counter[str] | None = None, health: dict[str, Any] | None = None) -> None:
        # budget, stats and faults may be shared by the engines of one grid (one budget over the whole grid),
        # health by the engines of one model (a bad key stops every rubric and condition of that model)
        self.rubric, self.model, self.config, self.cache = rubric, model, config, cache
        self.caller = caller  # a judge object (e.g. a RouterJudge) that makes the calls, else litellm
        self.judge = config.judge_name(model)
        self.rubric_label = rubric.name  # the table's rubric column (a grid may name a rubric by its key)
        self.run_id = ""
        self.stats = stats if stats is not None else RunStats()
        self.rng = random.Random(config.seed)
        self.budget = budget if budget is not None else BudgetGuard(config.max_cost_usd)
        self.policy = RetryPolicy(max_retries=config.max_retries, base_s=config.retry_base_s)
        self.health: dict[str, Any] = health if health is not None else {}
        self.faults: Counter[str] = faults if faults is not None else Counter()
        if config.retry_unscored:
            self.stats.retried_unscored = 0
        # a claim outlives the longest wait between two attempts of one call (it is renewed at each attempt)
        self.claim_ttl_s = config.timeout + max(self.policy.cap_s, self.policy.max_retry_after_s) + 10.0
        self._key_constants: tuple[Any, str] | None = None  # (redacted api base, rubric fingerprint), see key()
        install_log_redaction()

    # -- request plumbing -------------------------------------------------------------------------
    def key(self, messages: list[dict[str, str]], params: dict[str, Any], repeat: int) -> str:
        # the api base and parameters are hashed with any key masked: a rotated key still hits the cache
        if self._key_constants is None:  # the same for every request of this engine: computed at its first
            self._key_constants = (redact(self.config.api_base), self.rubric.fingerprint())
        api_base, fingerprint = self._key_constants
        return request_key(
            {
                "model": self.model,
                "api_base": api_base,
                "messages": messages,
                "params": redact(params),
                "rubric": fingerprint,
                "repeat": repeat,
            }
        )

    async def ask(self, messages: list[dict[str, str]], params: dict[str, Any], repeat: int, *,
                  read_cache: bool = True) -> Reply:
        """The cached reply, or one call with retries (within the budget, unless the run has stopped).

        ``read_cache=False`` asks the model even when the cache holds an answer (a retry of an unscored
        one) and stores the new answer over it. While this process calls, the request is claimed in
        the cache: another process (or task) sharing the cache waits for the answer instead of calling.
        """
        key = self.key(messages, params, repeat)
        token = None
        try:
            if self.cache is not None and read_cache:
                hit = self.cache.get(key)
                if hit is not None:
                    return self.cache_hit(hit, key)
            if self.abort_reason is not None:
                return Reply(None, False, 0, key, API_ERROR, f"not attempted: run stopped ({self.abort_reason})")
            if self.cache is not None:
                hit, token = await self.claim(key, read_cache)
                if hit is not None:
                    return self.cache_hit(hit, key)
        except CacheIOError as exc:  # the cache broke before any call: nothing was paid, the run stops
            self.cache_failed(exc)
            return Reply(None, False, 0, key, API_ERROR, f"not attempted: run stopped ({self.abort_reason})")
        stored = False
        try:
            if self.abort_reason is not None:  # the run stopped while this request waited for its claim
                return Reply(None, False, 0, key, API_ERROR, f"not attempted: run stopped ({self.abort_reason})")
            answer = await self.call(key, messages, params, token)
            stored = answer.reply is not None  # call() stored it (ending the claim) or kept it in the recovery file
            return answer
        finally:
            if token is not None and self.cache is not None and not stored:
                try:
                    self.cache.release(key, token)  # no answer stored: end the claim so that another may call
                except CacheIOError as exc:  # the claim ends anyway when this process does
                    self.cache_failed(exc)

    @property
    def abort_reason(self) -> str | None:
        """Why this model's calls stopped (a fatal error, or a server never reached), else None."""
        return self.health.get("abort_reason")

    @property
    def any_success(self) -> bool:
        return bool(self.health.get("any_success"))

    def cache_failed(self, exc: CacheIOError, key: str | None = None, reply: ModelReply | None = None) -> None:
        """The cache cannot be used any more: stop this model's calls; keep a paid ``reply`` in the recovery file."""
        recovery: RecoveryFile = self.health.setdefault(
            "recovery", RecoveryFile(self.cache.path if self.cache is not None else None))
        if key is not None and reply is not None:
            recovery.keep(key, reply.to_json())
        if recovery.path is not None:
            where = (f"the answers it could not store are in the recovery file {recovery.path} (put them back with "
                     "RequestCache(...).restore(that file) once there is room)")
        elif recovery.lost:
            where = "the answers it could not store could not be saved anywhere else either: they are only in the table"
        else:
            where = "no paid answer was lost"
        self.health["abort_reason"] = f"{exc}; the run stopped, and {where}"

    def cache_hit(self, hit: dict[str, Any], key: str) -> Reply:
        self.stats.cache_hits += 1
        return Reply(ModelReply.from_json(hit), True, 0, key)

    async def claim(self, key: str, read_cache: bool) -> tuple[dict[str, Any] | None, str | None]:
        """(the answer another process stored while we waited, None) or (None, our claim token)."""
        assert self.cache is not None
        pause, waited = 0.02, False
        while True:
            found = self.cache.claim(key, self.claim_ttl_s, read_cache=read_cache)
            if not found.busy:
                if waited and found.value is not None:
                    self.stats.shared_waits += 1
                return found.value, found.token
            waited = True
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, 0.5)

    async def call(self, key: str, messages: list[dict[str, str]], params: dict[str, Any],
                   token: str | None) -> Reply:
        """One call with retries, within the budget; a reply is stored in the cache (ending the claim)."""
        estimate = 0.0
        if self.config.max_cost_usd is not None:  # token counting costs CPU: only when a budget needs it
            _, estimate = estimate_call_cost(self.model, messages, params.get("max_tokens"))
        granted = self.budget.try_reserve(estimate)
        if inspect.isawaitable(granted):  # a budget held elsewhere (judgelab.distributed's ledger actor)
            granted = await granted
        if not granted:
            return Reply(None, False, 0, key, SKIPPED_BUDGET,
                         f"budget of {self.config.max_cost_usd} USD reached before this call")

        def count_retry(err: ModelCallError) -> None:
            self.stats.retries += 1

        attempts = 0

        async def one_call() -> ModelReply:
            nonlocal attempts
            attempts += 1
            self.stats.api_calls += 1
            if attempts > 1 and token is not None and self.cache is not None:
                # a retry: the claim taken just before the first attempt may be close to its end
                with contextlib.suppress(CacheIOError):  # a cache that broke fails again when the answer is stored
                    self.cache.renew(key, token, self.claim_ttl_s)
            limit = self.config.timeout  # wall clock for the whole call, body included
            try:
                if self.caller is None:
                    return await acall(self.model, messages, params=params, api_base=self.config.api_base,
                                       api_key=self.config.api_key, timeout=limit, deadline=limit)
                async with asyncio.timeout(limit):
                    return await self.caller.acall(self.model, messages, params=params, timeout=limit)
            except TimeoutError:
                raise timed_out(limit) from None
            except ModelCallError:
                raise
            except Exception as exc:  # noqa: BLE001 - a judge object's own failure, classified like litellm's
                raise classify(exc, secrets=(self.config.api_key or "",)) from None

        if self.caller is None and not self.health.get("prepared"):
            self.health["prepared"] = True
            prepare_calls(self.model, self.config.api_base, self.config.api_key, params)
        outcome = await call_with_retries(one_call, self.policy, self.rng, count_retry)
        self.faults.update(outcome.faults)
        reply = outcome.reply
        self.budget.settle(estimate, reply.cost_usd if reply else 0.0)
        if reply is None:
            err = outcome.error
            assert err is not None
            if err.kind == "fatal" or (err.unreachable and not self.any_success):
                where = redact(self.config.api_base) or "the provider"
                self.health.setdefault("abort_reason", f"model {self.model!r} at {where}: {err}")
            return Reply(None, False, outcome.attempts, key, API_ERROR, f"{err} after {outcome.attempts} attempt(s)",
                         tuple(outcome.failures))
        self.health["any_success"] = True
        if self.cache is not None:
            try:
                self.cache.put(key, reply.to_json(), token)
            except CacheIOError as exc:  # paid and not stored: into the recovery file, and the run stops
                self.cache_failed(exc, key, reply)
        return Reply(reply, False, outcome.attempts, key, failed_attempts=tuple(outcome.failures))

    # -- one request -> rows ----------------------------------------------------------------------
    async def process(self, job: Job) -> list[dict[str, Any]]:
        request = job.request
        params = self.config.request_params(self.rubric, request, job.repeat)
        messages = list(request.messages)
        attempts_total, reask, earlier_raw = 0, 0, []
        failed: list[str] = []  # why each failed attempt of this request failed (the retries' reasons)
        spent: list[ModelReply] = []  # every reply of this request, for exact cost and tokens
        read_cache = True
        while True:
            answer = await self.ask(messages, params, job.repeat, read_cache=read_cache)
            attempts_total += answer.attempts
            failed.extend(answer.failed_attempts)
            if answer.reply is not None:
                spent.append(answer.reply)
            base = self.call_fields(job, answer, attempts_total, params, spent)
            detail: dict[str, Any] = {"swapped": job.swapped}
            if earlier_raw:
                detail["earlier_raw_outputs"] = list(earlier_raw)
            if failed:
                detail["failed_attempts"] = list(failed)
            reply = answer.reply
            if reply is None:
                return unscored_rows(base, request, answer.failure_status, answer.failure_reason, detail)
            detail.update(reply_detail(reply))
            try:
                parsed = read_model_reply(self.rubric, reply, request)
                rows = scored_rows(base, request, parsed, detail, self.logprob_columns(request, reply))
            except ParseFailure as failure:
                if (failure.status == PARSE_ERROR and reask < self.config.max_reasks
                        and not isinstance(failure, UnreadableReply)):
                    earlier_raw.append(_said(reply))
                    self.stats.reasks += 1
                    reask += 1
                    messages = list(request.messages) + [
                        {"role": "assistant", "content": reply.text},
                        {"role": "user", "content": REASK_TEMPLATE.format(reason=failure.reason)},
                    ]
                    continue
                rows = unscored_rows(base, request, failure.status, failure.reason, detail)
            if not (self.config.retry_unscored and read_cache and answer.cached
                    and any(r["status"] != OK for r in rows)):
                return rows
            # the cached answer ended unscored and the run asks to retry those: ask again from the start,
            # bypassing the cache, keeping what the judge said before in detail
            earlier_raw.append(_said(reply))
            assert self.stats.retried_unscored is not None
            self.stats.retried_unscored += 1
            read_cache, reask, messages = False, 0, list(request.messages)

    def logprob_columns(self, request: JudgeRequest, reply: ModelReply) -> Any:
        """The logprob-weighted score of the request's logprob criterion, when logprobs were asked for."""
        target = request.logprob_criterion
        if not self.config.logprobs or target is None or not self.rubric.scale:
            return None
        scale = self.rubric.scale

        def columns(parsed: ParsedRow) -> dict[str, Any]:
            if parsed.key != RowKey(target):
                return {}
            try:
                est = expected_score(reply.logprobs, scale)
            except Exception as exc:  # noqa: BLE001 - malformed logprobs leave the row scored, with no estimate
                return {"detail": {"logprob_note": f"the logprobs could not be read ({type(exc).__name__})"}}
            if not all(v is None or math.isfinite(v) for v in (est.expected, est.valid_mass)):
                return {"detail": {"logprob_note": f"the logprobs give no finite estimate ({est.note})"}}
            return {"logprob_score": est.expected, "valid_prob_mass": est.valid_mass,
                    "detail": {"logprob_note": est.note}}

        return columns

    def call_fields(self, job: Job, answer: Reply, attempts: int, params: dict[str, Any],
                    spent: list[ModelReply]) -> dict[str, Any]:
        """Row fields shared by every row of one request. Tokens, cost and latency are per REQUEST (re-asks
        and retries included) and repeated on each of its rows: sum them over unique call_id. A cached reply
        carries the cost and latency its original call had (``cached`` says no new call was made), so a
        cached rerun reports what the first run did; failed calls cost 0 (providers do not bill failed
        requests); an unknown price is NaN."""

        def total(attr: str, ints: bool) -> Any:
            if not spent:
                return None if ints else 0.0
            vals = [getattr(r, attr) for r in spent]
            if ints:
                return None if any(v is None for v in vals) else sum(vals)
            return float(sum(vals))

        reply = answer.reply
        return {
            "run_id": self.run_id,
            "item_id": job.item["item_id"],
            "rubric": self.rubric_label,
            "rubric_version": self.rubric.version,
            "judge": self.judge,
            "condition": job.condition,
            "repeat": job.repeat,
            "temperature": params["temperature"],
            "seed": params.get("seed"),
            "prompt_hash": job.request.prompt_hash(),
            "call_id": answer.call_id,
            "raw_output": reply.text if reply else None,
            "reasoning": reply.reasoning if reply else None,
            "input_tokens": total("input_tokens", True),
            "output_tokens": total("output_tokens", True),
            "reasoning_tokens": total("reasoning_tokens", True),
            "cost_usd": total("cost_usd", False),
            "latency_s": total("latency_s", False),
            "cached": answer.cached,
            "attempts": attempts,
            "system_fingerprint": reply.system_fingerprint if reply else None,
            "created_at": pd.Timestamp.now(tz="UTC"),
            "_order": job.order,
        }


def _said(reply: ModelReply) -> str:
    """What a reply said, for ``earlier_raw_outputs``: its text, or the provider's refusal when it has no text."""
    return reply.text if reply.text.strip() or not reply.refusal else reply.refusal


def _finish(stats: RunStats, table: pd.DataFrame, faults: Counter[str], aborted: str | None, t0: float,
            cpu0: float) -> RunStats:
    """The run's statistics, once every row is in."""
    st = stats
    st.judgments = len(table)
    st.status_counts = judgments.status_counts(table)
    st.ok = st.status_counts[judgments.OK]
    st.unscored = st.judgments - st.ok
    costs = table.drop_duplicates("call_id")["cost_usd"] if len(table) else pd.Series(dtype=float)
    st.cost_usd = float(costs.to_numpy(dtype=float, na_value=math.nan).sum()) if len(costs) else 0.0
    st.faults = dict(faults)
    st.aborted = aborted
    st.wall_s = time.perf_counter() - t0
    st.engine_cpu_s = time.process_time() - cpu0
    return st


async def _execute(work: list[tuple[_Engine, Job]], concurrency: int, progress: bool, desc: str) -> list[dict[str, Any]]:
    """Every (engine, job) in one pass of ``concurrency`` workers and one progress bar; rows in work order."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(work)):
        queue.put_nowait(i)
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(work), desc=desc, unit="call", file=sys.stderr, disable=not progress, leave=True)

    async def worker() -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            engine, job = work[i]
            done = await engine.process(job)
            for row in done:
                row["_order"] = i
            rows.extend(done)
            bar.update(1)
            # a request answered from the cache never waits, so a worker could run through hundreds of them
            # without letting the calls in flight read their replies while their deadlines run: yield once
            await asyncio.sleep(0)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(work))))))
    finally:
        bar.close()
    return rows


def _check_budget_prices(cells: list[tuple[_Engine, list[Job]]], max_cost_usd: float | None) -> None:
    """A budget needs a price: refuse up front when litellm cannot price a model of the run."""
    if max_cost_usd is None:
        return
    for engine, jobs in cells:
        if not jobs:
            continue
        _, probe = estimate_call_cost(engine.model, jobs[0].request.messages, None)
        if math.isnan(probe):
            raise UnknownPriceError(
                f"max_cost_usd is set but litellm knows no price for model {engine.model!r}; register one with "
                "litellm.register_model(...) or run without a budget"
            )


async def run_cells(cells: list[tuple[_Engine, list[Job]]], *, concurrency: int, progress: bool, desc: str,
                    max_cost_usd: float | None, t0: float, cpu0: float) -> RunResult:
    """Run the planned jobs of one or more engines in one pass; the engines share what they were built with
    (a grid's engines share one cache, budget, stats and faults). Raises RunAborted when an engine stopped."""
    _check_budget_prices(cells, max_cost_usd)
    rows = await _execute([(engine, job) for engine, jobs in cells for job in jobs], concurrency, progress, desc)
    table = _table(rows)
    lead = cells[0][0]
    aborted = "; ".join(dict.fromkeys(e.abort_reason for e, _ in cells if e.abort_reason is not None)) or None
    result = RunResult(table, _finish(lead.stats, table, lead.faults, aborted, t0, cpu0))
    if aborted is not None:
        raise RunAborted(f"run stopped early: {aborted}", result)
    return result


def open_cache(cache: bool | str | Path | RequestCache | None) -> tuple[RequestCache | None, bool]:
    """(the cache to use, whether this run opened it and must close it)."""
    if cache is True:
        return RequestCache(), True
    if cache is False or cache is None:
        return None, False
    if isinstance(cache, RequestCache):
        return cache, False
    return RequestCache(cache), True


def resolve_model(model: str | Any) -> tuple[str, Any]:
    """(model name, judge object or None): a judge object has ``model_name`` and an async ``acall``."""
    if isinstance(model, str):
        ensure_provider(model)
        return model, None
    if not (hasattr(model, "model_name") and hasattr(model, "acall")):
        raise JudgeObjectError(f"model must be a model name or a judge object with model_name and acall, "
                               f"not {type(model).__name__}")
    ensure_provider(model.model_name)
    return model.model_name, model


def _prepare(items: Any, rubric: Rubric | str | Path, model: str | Any, config: RunConfig,
             cache: bool | str | Path | RequestCache | None) -> tuple[_Engine, pd.DataFrame, list[Job], bool]:
    engine, item_df, jobs, own_cache = _prepare_lazy(items, rubric, model, config, cache, plan=plan_jobs)
    assert isinstance(jobs, list)
    engine.stats.items, engine.stats.requests = len(item_df), len(jobs)
    return engine, item_df, jobs, own_cache


def _prepare_lazy(items: Any, rubric: Rubric | str | Path, model: str | Any, config: RunConfig,
                  cache: bool | str | Path | RequestCache | None, *,
                  plan: Any = iter_jobs) -> tuple[_Engine, pd.DataFrame, list[Job] | Iterator[Job], bool]:
    """The engine, the items and the jobs of a run; ``plan`` is plan_jobs (a list) or iter_jobs (one job at a
    time, for a dry run that needs each request once). Either checks the items before the cache opens."""
    from judgelab.rubrics import load_rubric

    if isinstance(rubric, str | Path):
        rubric = load_rubric(rubric)
    model_name, caller = resolve_model(model)
    item_df = read_items(items)
    jobs = plan(item_df, rubric, condition=config.condition, swap=config.swap, order=config.order,
                seed=config.seed, repeats=config.repeats)
    cache_obj, own_cache = open_cache(cache)
    engine = engine_for(item_df, rubric, model_name, config, cache_obj, caller)
    return engine, item_df, jobs, own_cache


def engine_for(item_df: pd.DataFrame, rubric: Rubric, model_name: str, config: RunConfig,
               cache: RequestCache | None, caller: Any = None, **shared: Any) -> _Engine:
    """The engine judging ``item_df`` with ``rubric`` on one model, its run id set (``shared``: the budget,
    stats and faults a grid's engines share)."""
    engine = _Engine(rubric, model_name, config, cache, caller, **shared)
    engine.run_id = config.run_id_for(rubric, model_name, list(item_df["item_id"]))
    return engine


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
    retry_unscored: bool = False,
    reasoning_effort: str | None = None,
    progress: bool = True,
    return_stats: bool = False,
    dry_run: bool = False,
    executor: Any = None,
) -> pd.DataFrame | RunResult:
    """Judge ``items`` with ``rubric`` on ``model``; return the judgments table (or a RunResult).

    items: a DataFrame, a list of dicts or a JSONL/CSV/Parquet path (``item_id`` generated if absent).
    rubric: a rubric object, a built-in rubric name or a YAML path.
    model: a litellm model string, or a judge object with ``model_name`` and an async ``acall`` (e.g.
    :func:`judgelab.router_judge`, a litellm Router over several deployments).
    judge: the name written in the table's ``judge`` column (default: the model).
    swap: run both candidate orders (conditions "original" and "swapped"); order="random" instead shows
    each item once, in a seeded per-item order. condition: the name of the unswapped condition.
    repeats: samples per request (cache-distinct). seed: per-item randomisation and the provider's seed.
    cache: True (the default cache file), False, a path, or a RequestCache. A rerun makes no call for a
    cached request; processes sharing one cache never send the same request at the same time (one waits
    for the other's answer). retry_unscored: ask again exactly the requests whose cached answer ended
    unscored (parse error, refusal, empty), keeping the earlier raw outputs in ``detail``; counted in
    ``RunStats.retried_unscored``. max_cost_usd: no call is issued once spent + reserved estimates would
    pass it; those rows are "skipped_budget".
    max_retries / retry_base_s: retries per call and the base (seconds) of their jittered exponential backoff.
    timeout: the wall-clock limit in seconds of one call, the reply's body included (a server that trickles
    its answer byte by byte is cut off then); a timed-out call is retried like any timeout, and ends as an
    ``api_error`` row whose reason starts with "timed out" when the retries run out.
    Every reply that arrives is kept: stored in the cache before it is parsed, and turned into rows whatever
    it holds (a reply with no answer in it is a ``parse_error`` whose reason starts with "unreadable reply";
    an exception raised by the parser is a ``parse_error`` naming its class). When the cache cannot store an
    answer (disk full, I/O error) the run stops with :class:`RunAborted`, whose message names the recovery
    file holding the answers the cache refused.
    max_reasks: how often an unparseable answer is asked again, with the parse error.
    logprobs / top_logprobs: also compute a logprob-weighted score (G-Eval style).
    json_mode: send the rubric's response format. extra_params: more litellm parameters, sent as given.
    reasoning_effort: "none" | "minimal" | "low" | "medium" | "high", litellm's reasoning parameter for
    reasoning models (part of the cache key). A reasoning model's thinking is kept out of parsing and stored
    in the ``reasoning`` column, its token count in ``reasoning_tokens`` (inside ``output_tokens`` and the
    cost already); an answer cut off because the thinking used the token budget is a parse error whose
    reason starts with "thinking only".
    return_stats: return a :class:`RunResult` (table + :class:`RunStats`) instead of the table.
    executor: where the requests are judged; None (this process) or a
    :class:`judgelab.distributed.RayExecutor` (Ray actors over a cluster: the same table, one budget, finished
    blocks written as partitions so that a rerun judges only what is missing).
    To see calls, tokens and cost before spending, use :func:`estimate` (same arguments).
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    config = RunConfig(judge=judge, api_base=api_base, api_key=api_key, concurrency=concurrency, repeats=repeats,
                       temperature=temperature, seed=seed, swap=swap, order=order, condition=condition,
                       max_cost_usd=max_cost_usd, max_retries=max_retries, retry_base_s=retry_base_s,
                       max_reasks=max_reasks, timeout=timeout, logprobs=logprobs, top_logprobs=top_logprobs,
                       json_mode=json_mode, max_tokens=max_tokens, extra_params=extra_params or {}, run_id=run_id,
                       progress=progress, retry_unscored=retry_unscored, reasoning_effort=reasoning_effort)
    if dry_run:
        warnings.warn("run(..., dry_run=True) is replaced by judgelab.estimate(...), which takes the same "
                      "arguments; this returns its RunEstimate", FutureWarning, stacklevel=3)
        return await _estimate_with(items, rubric, model, config, cache)  # type: ignore[return-value]
    if executor is not None:
        if not callable(getattr(executor, "execute", None)):
            raise ConfigError(f"executor must be None or a judgelab.distributed.RayExecutor, not "
                              f"{type(executor).__name__}")
        # the driver waits on the cluster in a thread: a notebook's event loop stays free
        try:
            result = await asyncio.to_thread(executor.execute, items, rubric, model, config, cache, t0=t0, cpu0=cpu0)
        except asyncio.CancelledError:  # Ctrl-C in a notebook: the driver's thread stops and kills its actors
            executor.stop()
            raise
        return result if return_stats else result.table
    engine, _, jobs, own_cache = _prepare(items, rubric, model, config, cache)
    try:
        result = await run_cells([(engine, jobs)], concurrency=concurrency, progress=progress,
                                 desc=f"judging with {engine.judge}", max_cost_usd=max_cost_usd, t0=t0, cpu0=cpu0)
    finally:
        if own_cache and engine.cache is not None:
            engine.cache.close()
    return result if return_stats else result.table


def _table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    rows.sort(key=lambda r: r["_order"])
    for r in rows:
        r.pop("_order")
    return judgments.make_table(rows)


async def _estimate_with(items: Any, rubric: Rubric | str | Path, model: str | Any, config: RunConfig,
                         cache: bool | str | Path | RequestCache | None) -> RunEstimate:
    # the requests are made one at a time and dropped once counted: a dry run holds one rendered prompt, not
    # every one (6.7 KB each: 8.4 GB at 10^6 items); the cache key is computed only when there is a cache
    engine, item_df, jobs, own_cache = _prepare_lazy(items, rubric, model, config, cache)
    total_tokens, total_cost, cached, requests = 0, 0.0, 0, 0
    cost_of = CallCostEstimator(engine.model)  # the numbers of estimate_call_cost, fixed work done once
    try:
        for job in jobs:
            requests += 1
            params = config.request_params(engine.rubric, job.request, job.repeat)
            hit = engine.cache.get(engine.key(list(job.request.messages), params, job.repeat)) \
                if engine.cache is not None else None
            if hit is not None and not (config.retry_unscored and _unscored(engine.rubric, job, hit)):
                cached += 1
                continue
            tokens, cost = cost_of(job.request.messages, params.get("max_tokens"))
            total_tokens += tokens
            total_cost += cost
    finally:
        if own_cache and engine.cache is not None:
            engine.cache.close()
    return RunEstimate(len(item_df), requests, cached, total_tokens, total_cost)


def _unscored(rubric: Rubric, job: Job, hit: dict[str, Any]) -> bool:
    """Whether a cached first answer is unscored, so that a run with retry_unscored may ask it again (an
    upper bound: a cached re-ask that parsed would spare the call)."""
    reply = ModelReply.from_json(hit)
    try:
        parsed = read_model_reply(rubric, reply, job.request)
    except ParseFailure:
        return True
    return not set(job.request.expected_rows) <= {p.key for p in parsed}


async def aestimate(items: Any, rubric: Rubric | str, model: str | Any = "local/smollm2", *,
                    cache: bool | str | Path | RequestCache = True, **options: Any) -> RunEstimate:
    """What :func:`arun` with the same arguments would do (requests, cached, prompt tokens, cost), with no call."""
    unknown = sorted(set(options) - set(RunConfig.__dataclass_fields__))
    if unknown:
        raise ConfigError(f"estimate() got unknown option(s) {unknown}; it takes the options of run()")
    return await _estimate_with(items, rubric, model, RunConfig(**options), cache)


# estimate takes what run takes (shift-tab shows the same options), except the flags about what run returns
aestimate.__signature__ = inspect.signature(arun).replace(  # type: ignore[attr-defined]
    parameters=[p for p in inspect.signature(arun).parameters.values()
                if p.name not in ("return_stats", "dry_run", "progress", "executor")],
    return_annotation=RunEstimate)
# what an executor running the planned requests elsewhere (judgelab.distributed) shares with this runner
check_budget_prices, finish_stats = _check_budget_prices, _finish
run = sync_twin(arun, "run")
estimate = sync_twin(aestimate, "estimate")
