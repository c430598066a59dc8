"""RayExecutor: one judge run over a Ray cluster, with one budget, one table and resumable partitions.

``judgelab.run(items, rubric, model, executor=RayExecutor(...))`` plans every request on the driver
exactly as a single process does (same request keys, ``call_id``s, seeds, run id and row order), cuts
the items into blocks of ``block_size`` consecutive items, and hands the blocks to ``workers`` Ray
actors, each running judgelab's own engine with the run's ``concurrency``. The driver writes each
finished block as a Parquet partition under ``out`` (:mod:`judgelab.distributed.partitions`), merges
the answers the block paid for into the run's cache, and shows one progress bar. A rerun with the same
``out`` judges only the blocks not written yet; the answers a killed worker or driver had already
received are in the workers' caches, so they are not paid again.

The cache: each worker uses a SQLite request cache on its own machine (``worker_cache``; by default its
machine's default judgelab cache, shared by the actors of that machine through the cache's claims),
never a SQLite file on a network filesystem. The answers each block paid for travel back with its rows
and are stored in the run's cache (``cache=``) on the driver, so after the run the driver's cache holds
every answer. The partitions, not the caches, say what is done. Failure modes: a worker restarted on
another machine does not see the first machine's cache (the calls of its unfinished block are made
again); a driver killed between a partition and its cache merge leaves those answers only in the
workers' caches (the partition is written, so nothing is asked again).

The budget: one ledger actor (:mod:`judgelab.distributed.ledger`) that every call reserves from and
settles with, deciding in the single-process order. Credentials: the API key is never sent to a worker
(Ray records task arguments and runtime_env variables); the workers read it from their own environment
(``api_key_env``, else the provider's usual variable that litellm reads, e.g. ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from judgelab import judgments
from judgelab.errors import ConfigError, JudgelabError

__all__ = ["BlocksLostError", "RayExecutor", "RayNotInstalledError"]

_NAMESPACE = "judgelab"


class RayNotInstalledError(JudgelabError, ImportError):
    """Ray is not installed in this environment."""


class BlocksLostError(JudgelabError, RuntimeError):
    """Some blocks lost their worker (killed, or its machine went away); the others are written.

    ``result`` holds the rows of every block that finished; rerunning with the same ``out`` judges only the
    blocks not written."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayNotInstalledError("RayExecutor needs Ray, which is not installed here: pip install "
                                   "'judgelab[ray]'") from None
    return ray


@dataclasses.dataclass
class _Plan:
    jobs: list[Any]
    blocks: list[list[Any]]  # the jobs of each block, in order
    run_id: str
    estimates: list[float]


class RayExecutor:
    """Run a judge run's requests on Ray actors (see the module's description).

    address: None (a Ray already initialised in this process, else a new local one), "auto" (the cluster this
    machine belongs to) or a cluster address ("ray://host:10001", "host:6379"). workers: how many actors.
    block_size: items per block (a block is the unit of resume: a killed block is judged again, its paid
    answers read from the worker's cache). out: the folder of the partitions (None: a temporary folder, no
    resume). worker_cache: the request cache file on each worker's machine (None: that machine's default;
    ignored when the run has ``cache=False``). api_key_env: the variable holding the key on every worker.
    init_options: more keyword arguments for ``ray.init`` when this executor starts or joins the cluster.
    """

    def __init__(self, address: str | None = None, *, workers: int = 2, block_size: int = 256,
                 out: str | Path | None = None, worker_cache: str | Path | None = None,
                 api_key_env: str | None = None, init_options: dict[str, Any] | None = None) -> None:
        _ray()
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ConfigError(f"workers must be a whole number of at least 1, not {workers!r}")
        if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
            raise ConfigError(f"block_size must be a whole number of at least 1, not {block_size!r}")
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ConfigError(f"address must be None, 'auto' or a Ray cluster address, not {address!r}")
        if api_key_env is not None and (not isinstance(api_key_env, str) or not api_key_env.isidentifier()):
            raise ConfigError(f"api_key_env must name an environment variable, not {api_key_env!r}")
        if out is not None and not isinstance(out, str | Path):
            raise ConfigError(f"out must be a folder path or None, not {type(out).__name__}")
        if worker_cache is not None and not isinstance(worker_cache, str | Path):
            raise ConfigError(f"worker_cache must be a file path or None, not {type(worker_cache).__name__}")
        if init_options is not None and not (isinstance(init_options, dict) and all(isinstance(k, str)
                                                                                  for k in init_options)):
            raise ConfigError("init_options must be a dict of ray.init keyword arguments, not "
                              f"{type(init_options).__name__}")
        self.address, self.workers, self.block_size = address, workers, block_size
        self.out = Path(out) if out is not None else None
        self.worker_cache = worker_cache
        self.api_key_env = api_key_env
        self.init_options = dict(init_options or {})
        self.actors: list[Any] = []  # the worker actors of the current (or last) run
        self._stop = threading.Event()

    def __repr__(self) -> str:
        return (f"RayExecutor(address={self.address!r}, workers={self.workers}, block_size={self.block_size}, "
                f"out={str(self.out) if self.out else None!r})")

    # -- planning ------------------------------------------------------------------------------------------
    def _plan(self, item_df: pd.DataFrame, rubric: Any, model_name: str, config: Any) -> _Plan:
        from judgelab.backends.pricing import estimate_call_cost
        from judgelab.engine.rows import plan_jobs

        jobs = plan_jobs(item_df, rubric, condition=config.condition, swap=config.swap, order=config.order,
                         seed=config.seed, repeats=config.repeats)
        position = {str(item_id): i for i, item_id in enumerate(item_df["item_id"])}
        n_blocks = (len(item_df) + self.block_size - 1) // self.block_size
        blocks: list[list[Any]] = [[] for _ in range(n_blocks)]
        for job in jobs:
            blocks[position[str(job.item["item_id"])] // self.block_size].append(job)
        estimates = [0.0] * len(jobs)
        if config.max_cost_usd is not None:
            for job in jobs:
                params = config.request_params(rubric, job.request, job.repeat)
                estimates[job.order] = estimate_call_cost(model_name, list(job.request.messages),
                                                          params.get("max_tokens"))[1]
        run_id = config.run_id_for(rubric, model_name, list(item_df["item_id"]))
        return _Plan(jobs, blocks, run_id, estimates)

    @staticmethod
    def _check_secrets(config: Any) -> None:
        from judgelab.backends.redaction import redact

        if config.api_key:
            raise ConfigError("RayExecutor never sends an API key to its workers (Ray records task arguments): set "
                              "the key in every worker's environment and name it with RayExecutor(api_key_env=...) "
                              "instead of api_key=")
        if config.api_base and redact(config.api_base) != config.api_base:
            raise ConfigError("api_base holds a credential, which RayExecutor would send to its workers; put the key "
                              "in the workers' environment (RayExecutor(api_key_env=...))")
        if redact(dict(config.extra_params)) != dict(config.extra_params):
            raise ConfigError("extra_params hold a credential (a header value or a key), which RayExecutor would send "
                              "to its workers; put the key in the workers' environment (RayExecutor(api_key_env=...))")

    # -- the run -------------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the run in progress (its actors are killed; written partitions stay): judgelab.arun calls it when
        its task is cancelled."""
        self._stop.set()

    def execute(self, items: Any, rubric: Any, model: Any, config: Any, cache: Any, *, t0: float,
                cpu0: float) -> Any:
        """Judge the run on the cluster; the :class:`judgelab.RunResult` of the whole run (blocks written by an
        earlier run read back from their partitions)."""
        from judgelab.distributed.partitions import check_manifest, items_hash, written_blocks
        from judgelab.engine.items import read_items
        from judgelab.engine.runner import check_budget_prices, open_cache, resolve_model
        from judgelab.rubrics import load_rubric

        ray = _ray()
        self._stop.clear()
        self._check_secrets(config)
        if isinstance(rubric, str | Path):
            rubric = load_rubric(rubric)
        model_name, caller = resolve_model(model)
        item_df = read_items(items)
        plan = self._plan(item_df, rubric, model_name, config)
        show = config.progress
        config = dataclasses.replace(config, run_id=plan.run_id, progress=False)
        if config.max_cost_usd is not None and plan.jobs:
            check_budget_prices([(_PriceProbe(model_name), plan.jobs)], config.max_cost_usd)
        scratch = None
        if self.out is None:
            scratch = tempfile.TemporaryDirectory(prefix="judgelab-ray-")
            out = Path(scratch.name)
        else:
            out = self.out
        try:
            check_manifest(out, {"run_id": plan.run_id, "block_size": self.block_size,
                                 "items": items_hash(list(item_df["item_id"])), "requests": len(plan.jobs),
                                 "blocks": len(plan.blocks)})
            done = [i for i in written_blocks(out) if i < len(plan.blocks)]
            cache_obj, own_cache = open_cache(cache)
            started = False
            if not ray.is_initialized():
                ray.init(address=self.address, **{"log_to_driver": False, **self.init_options})
                started = True
            try:
                return self._drive(ray, plan, done, out, rubric, model_name, caller, config, cache_obj, cache,
                                   show=show, t0=t0, cpu0=cpu0)
            finally:
                if own_cache and cache_obj is not None:
                    cache_obj.close()
                if started:
                    ray.shutdown()
        finally:
            if scratch is not None:
                scratch.cleanup()

    def _drive(self, ray: Any, plan: _Plan, done: list[int], out: Path, rubric: Any, model_name: str, caller: Any,
               config: Any, cache_obj: Any, cache: Any, *, show: bool, t0: float, cpu0: float) -> Any:
        from judgelab.distributed.ledger import Ledger
        from judgelab.distributed.partitions import block_path, write_block
        from judgelab.distributed.worker import BlockJudge
        from judgelab.engine.runner import RunAborted, RunResult, RunStats, finish_stats

        done_set = set(done)
        done_orders = [job.order for i in done for job in plan.blocks[i]]
        pool = _pool(ray)
        ledger = pool.ledgers.pop() if pool.ledgers else \
            ray.remote(Ledger).options(num_cpus=0, namespace=_NAMESPACE).remote()
        worker_cache: str | bool | None = False if cache is False or cache is None else (
            str(self.worker_cache) if self.worker_cache is not None else None)
        actor = ray.remote(BlockJudge)
        workers = [pool.workers.pop() if pool.workers else
                   actor.options(num_cpus=0, namespace=_NAMESPACE, max_restarts=0, max_concurrency=4).remote()
                   for _ in range(self.workers)]
        self.actors = list(workers)
        ready = [ledger.reset.remote(config.max_cost_usd, plan.estimates, done_orders),
                 *(w.configure.remote(rubric, model_name, caller, config, worker_cache, self.api_key_env, ledger)
                   for w in workers)]
        try:
            _get(ray, ready)
        except ray.exceptions.RayActorError:  # an idle actor went away with its machine: start afresh
            _POOLS.clear()
            return self._drive(ray, plan, done, out, rubric, model_name, caller, config, cache_obj, cache, show=show,
                               t0=t0, cpu0=cpu0)
        except JudgelabError:  # refused before any call (an unknown price, a missing key variable): the actors stay
            pool.ledgers.append(ledger)
            pool.workers.extend(workers)
            raise
        healthy = set(range(len(workers)))
        todo = [i for i in range(len(plan.blocks)) if i not in done_set and plan.blocks[i]]
        todo.reverse()
        running: dict[Any, tuple[int, Any]] = {}  # ref -> (block, worker)
        idle = list(workers)
        tables: dict[int, pd.DataFrame] = {}
        stats, faults = RunStats(), Counter[str]()
        aborted: list[str] = []
        lost: list[int] = []
        bar = tqdm(total=len(plan.jobs), initial=len(done_orders), desc=f"judging with {config.judge_name(model_name)}"
                   f" on {self.workers} Ray worker(s)", unit="call", file=sys.stderr, disable=not show,
                   leave=True)
        try:
            while todo or running:
                if self._stop.is_set():  # the caller was interrupted (Ctrl-C, a cancelled task)
                    raise KeyboardInterrupt
                while todo and idle:
                    index, worker = todo.pop(), idle.pop()
                    running[worker.judge.remote(index, plan.blocks[index])] = (index, worker)
                ready, _ = ray.wait(list(running), num_returns=1, timeout=0.25)
                for ref in ready:
                    index, worker = running.pop(ref)
                    try:
                        block = _get(ray, ref)
                    except ray.exceptions.RayActorError:  # the actor died (killed, its node lost): the block is lost
                        lost.append(index)
                        healthy.discard(next(i for i, w in enumerate(workers) if w is worker))
                        if not idle and not running and todo:  # no worker left for the rest
                            lost.extend(reversed(todo))
                            todo.clear()
                        continue
                    idle.append(worker)
                    self._merge(block, stats, faults, aborted)
                    tables[index] = block.table
                    if block.aborted is None and not (block.table["status"] == judgments.SKIPPED_BUDGET).any():
                        write_block(out, index, block.table)
                    if cache_obj is not None:
                        for key, value in block.entries.items():
                            cache_obj.put(key, value)
                bar.n = ray.get(ledger.progress.remote())[0]
                bar.refresh()
        except BaseException:  # interrupted (Ctrl-C): stop the workers' calls now
            for handle in [*workers, ledger]:
                ray.kill(handle)
            raise
        finally:
            bar.close()
        # the actors serve this driver's next run (starting one takes seconds); ray.shutdown() ends them
        pool.ledgers.append(ledger)
        for i in sorted(healthy):
            workers[i].close.remote()
            pool.workers.append(workers[i])
        frames = [tables[i] if i in tables else pd.read_parquet(block_path(out, i))
                  for i in range(len(plan.blocks)) if i in tables or i in done_set]
        table = judgments.make_table(pd.concat(frames, ignore_index=True)) if frames else judgments.make_table([])
        stats.items, stats.requests = len({str(j.item["item_id"]) for j in plan.jobs}), len(plan.jobs)
        reason = "; ".join(dict.fromkeys(aborted)) or None
        result = RunResult(table, finish_stats(stats, table, faults, reason, t0, cpu0))
        if lost:
            raise BlocksLostError(f"{len(lost)} block(s) lost their Ray worker (blocks {sorted(lost)[:10]}); the "
                                  f"other blocks are written in {out / 'partitions'}: run again with the same out "
                                  "to judge only the missing ones", result)
        if reason is not None:
            raise RunAborted(f"run stopped early: {reason}", result)
        return result

    @staticmethod
    def _merge(block: Any, stats: Any, faults: Counter[str], aborted: list[str]) -> None:
        for name, value in block.counters.items():
            if name == "retried_unscored":
                stats.retried_unscored = (stats.retried_unscored or 0) + value
            else:
                setattr(stats, name, getattr(stats, name) + value)
        faults.update(block.faults)
        if block.aborted is not None:
            aborted.append(block.aborted)


def _get(ray: Any, refs: Any) -> Any:
    """ray.get, with a judgelab error raised in an actor (an unknown price, a missing key variable) re-raised as
    itself: one sentence, not Ray's wrapped traceback."""
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, JudgelabError):
            raise exc.cause from None
        raise


@dataclasses.dataclass
class _Pool:
    job: str
    workers: list[Any] = dataclasses.field(default_factory=list)
    ledgers: list[Any] = dataclasses.field(default_factory=list)


_POOLS: list[_Pool] = []


def _pool(ray: Any) -> _Pool:
    """The idle actors of this driver's Ray session (a new ``ray.init`` starts an empty pool)."""
    job = str(ray.get_runtime_context().get_job_id())
    if not _POOLS or _POOLS[0].job != job:
        _POOLS[:] = [_Pool(job)]
    return _POOLS[0]


class _PriceProbe:
    """What the runner's up-front price check reads of an engine: its model."""

    def __init__(self, model: str) -> None:
        self.model = model
