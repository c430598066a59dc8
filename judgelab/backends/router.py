"""A judge spread over several deployments of ONE model: a litellm Router behind the judge's name.

``router_judge([...])`` builds a :class:`RouterJudge` from deployments (several vLLM / llama.cpp
servers, or several API keys or regions of one provider model). Pass it wherever a model name goes::

    judge = judgelab.router_judge([{"api_base": "http://gpu1:8000/v1"}, {"api_base": "http://gpu2:8000/v1"}],
                                  model="openai/qwen2.5-7b-instruct", max_parallel_requests=8)
    table = judgelab.run(items, "pairwise", judge, concurrency=16)

What the judge does, and what the Router adds:

* load balancing: each call goes to the least-loaded healthy deployment with a free slot (in flight
  relative to its ``max_parallel_requests``), chosen by the judge itself;
* per-deployment limits: ``rpm`` and ``max_parallel_requests`` in each deployment. A deployment whose
  slots are full makes the call WAIT for a slot instead of failing, so the run's ``concurrency`` can
  exceed the sum of the caps without errors;
* fallbacks: each deployment is its own Router group; a call that fails on one is retried by the
  Router on the others, and the failing deployment is avoided for ``cooldown_time`` seconds, so a
  server dying mid-run loses no judgment.

judgelab's own retries, cache and budget still wrap every call. The cache key uses the judge's
``model_name`` ("router:<model>" by default), not the deployment, because every deployment serves the
same model: an answer from one is an answer from any.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judgelab.backends.call import (  # shared reply/cost/error handling
    _KEYLESS_PLACEHOLDER,
    ModelReply,
    _provider_key_in_env,
    classify,
    reply_from_response,
)
from judgelab.backends.pricing import offline_litellm
from judgelab.backends.redaction import install_log_redaction, redact, register_credentials

Router = offline_litellm().Router

__all__ = ["RouterJudge", "router_judge"]


@dataclass
class _Deployment:
    """judgelab's view of one deployment: its limits and what is in flight on it."""

    group: str  # the Router model group holding just this deployment
    api_base: str  # redacted: it names the deployment in counts and rows, never with a key in it
    max_parallel_requests: int | None
    rpm: int | None
    in_flight: int = 0
    down_until: float = 0.0  # monotonic time before which new calls avoid it (it failed recently)
    next_start: float = 0.0  # rpm pacing: earliest monotonic time of the next call

    def free(self, now: float) -> bool:
        return (self.max_parallel_requests is None or self.in_flight < self.max_parallel_requests) and (
            self.next_start <= now)

    def load(self) -> float:
        return self.in_flight / self.max_parallel_requests if self.max_parallel_requests else float(self.in_flight)


@dataclass
class RouterJudge:
    """A judge whose calls go through a litellm Router over several deployments of one model.

    ``calls_by_deployment`` counts answers per deployment ``api_base`` (with any key in it masked);
    ``fallbacks`` counts calls that a failing deployment handed to another one.
    """

    router: Router
    model_name: str
    deployments: list[_Deployment]
    cooldown_time: float
    calls_by_deployment: Counter[str] = field(default_factory=Counter)
    fallbacks: int = 0
    _conditions: dict[int, asyncio.Condition] = field(default_factory=dict, repr=False)

    def _condition(self) -> asyncio.Condition:
        # asyncio primitives belong to one event loop; each judgelab.run may run on its own loop
        loop = asyncio.get_running_loop()
        cond = self._conditions.get(id(loop))
        if cond is None:
            self._conditions.clear()
            cond = self._conditions[id(loop)] = asyncio.Condition()
        return cond

    async def _acquire(self) -> _Deployment:
        """The least-loaded healthy deployment with a free slot; wait while none has one."""
        cond = self._condition()
        async with cond:
            while True:
                now = time.monotonic()
                healthy = [d for d in self.deployments if d.down_until <= now] or self.deployments
                free = [d for d in healthy if d.free(now)]
                if free:
                    chosen = min(free, key=lambda d: (d.load(), self.calls_by_deployment[d.api_base]))
                    chosen.in_flight += 1
                    if chosen.rpm:
                        chosen.next_start = max(now, chosen.next_start) + 60.0 / chosen.rpm
                    return chosen
                paced = [d.next_start - now for d in healthy if d.next_start > now]
                try:  # woken by a release, or when the earliest rpm pacing slot opens
                    await asyncio.wait_for(cond.wait(), timeout=min(paced) if paced else 1.0)
                except TimeoutError:
                    pass

    async def _release(self, deployment: _Deployment, failed: bool) -> None:
        cond = self._condition()
        async with cond:
            deployment.in_flight -= 1
            if failed:
                deployment.down_until = time.monotonic() + self.cooldown_time
            cond.notify_all()

    async def acall(self, model: str, messages: list[dict[str, str]], *, params: dict[str, Any],
                    timeout: float = 120.0) -> ModelReply:
        """One completion through the Router; raises judgelab's classified ModelCallError on failure."""
        deployment = await self._acquire()
        start = time.perf_counter()
        try:
            response = await self.router.acompletion(model=deployment.group, messages=messages, timeout=timeout,
                                                     drop_params=True, **params)
        except Exception as exc:  # noqa: BLE001 - classified, nothing swallowed
            error = classify(exc, secrets=self._secrets())
            await self._release(deployment, failed=error.unreachable or error.kind == "retryable")
            raise error from None
        except BaseException:  # cancelled: give the slot back, and do not blame the deployment
            await self._release(deployment, failed=False)
            raise
        served = _served_by(response)
        fell_back = served is not None and served != deployment.api_base  # the Router moved the call elsewhere
        if fell_back:
            self.fallbacks += 1
        await self._release(deployment, failed=fell_back)
        where = served or deployment.api_base
        self.calls_by_deployment[where] += 1
        return reply_from_response(response, time.perf_counter() - start, extra={"deployment": where})

    def _secrets(self) -> tuple[str, ...]:
        return tuple(str(d["litellm_params"].get("api_key") or "") for d in self.router.model_list)


def _served_by(response: Any) -> str | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    base = hidden.get("api_base")
    return redact(str(base)) if base else None


def router_judge(
    deployments: Sequence[Mapping[str, Any] | str],
    *,
    model: str | None = None,
    name: str | None = None,
    max_parallel_requests: int | None = None,
    rpm: int | None = None,
    allowed_fails: int = 1,
    cooldown_time: float = 30.0,
    timeout: float | None = None,
) -> RouterJudge:
    """Build a :class:`RouterJudge` over ``deployments`` of one model.

    Each deployment is an ``api_base`` string or a mapping with ``api_base`` and optionally
    ``model`` (litellm model string), ``api_key``, ``rpm``, ``max_parallel_requests``. ``model``,
    ``max_parallel_requests`` and ``rpm`` here are defaults for deployments that do not set them.
    A call that fails on a deployment falls back to the others (in order); a failed deployment is
    avoided for ``cooldown_time`` seconds (after ``allowed_fails`` failures, in the Router too).
    ``name`` is the judge's name in the table and the cache key (default ``"router:<model>"``); a
    run's ``max_cost_usd`` prices calls by this name, so name the judge after a model litellm can
    price to use a budget.
    """
    if not deployments:
        raise ValueError("router_judge needs at least one deployment")
    entries: list[tuple[dict[str, Any], int | None, int | None]] = []
    models: set[str] = set()
    for i, dep in enumerate(deployments):
        spec: dict[str, Any] = {"api_base": dep} if isinstance(dep, str) else dict(dep)
        unknown = set(spec) - {"api_base", "model", "api_key", "rpm", "max_parallel_requests"}
        if unknown:
            raise ValueError(f"deployment {i} has unknown keys {sorted(unknown)}")
        dep_model = spec.get("model") or model
        if not dep_model:
            raise ValueError(f"deployment {i} names no model; pass model= or give each deployment a 'model'")
        models.add(dep_model)
        params: dict[str, Any] = {"model": dep_model, "max_retries": 0}  # the Router and judgelab retry
        if spec.get("api_base"):
            params["api_base"] = spec["api_base"]
        key = spec.get("api_key")
        register_credentials(key, spec.get("api_base"))  # refuses a key too short to be masked
        if key is None and spec.get("api_base") and not _provider_key_in_env(dep_model):
            key = _KEYLESS_PLACEHOLDER  # local OpenAI-compatible servers need no key; the openai client wants one
        if key is not None:
            params["api_key"] = key
        limits = []
        for limit, default in (("max_parallel_requests", max_parallel_requests), ("rpm", rpm)):
            value = spec.get(limit, default)
            if value is not None and int(value) < 1:
                raise ValueError(f"deployment {i}: {limit} must be at least 1, got {value}")
            limits.append(None if value is None else int(value))
        entries.append((params, limits[0], limits[1]))
    if len(models) > 1:
        raise ValueError(f"a router judge serves ONE model; deployments name {sorted(models)}")
    judge_name = name or f"router:{models.pop()}"
    # One Router group per deployment: judgelab picks the deployment (least loaded with a free slot, so
    # limits make calls WAIT rather than fail), the Router falls back to the other groups when it fails.
    groups = [f"{judge_name}#{i}" for i in range(len(entries))]
    model_list = [{"model_name": g, "litellm_params": p} for g, (p, _, _) in zip(groups, entries, strict=True)]
    fallbacks = [{g: [o for o in groups if o != g]} for g in groups] if len(groups) > 1 else []
    router = Router(
        model_list=model_list,
        num_retries=0,
        fallbacks=fallbacks,
        allowed_fails=allowed_fails,
        cooldown_time=cooldown_time,
        retry_after=0,  # judgelab's engine owns backoff
        timeout=timeout,
    )
    install_log_redaction()
    state = [
        _Deployment(group=g, api_base=redact(str(p.get("api_base") or g)), max_parallel_requests=cap, rpm=per_minute)
        for g, (p, cap, per_minute) in zip(groups, entries, strict=True)
    ]
    return RouterJudge(router=router, model_name=judge_name, deployments=state, cooldown_time=cooldown_time)
