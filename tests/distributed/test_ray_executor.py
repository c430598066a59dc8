"""judgelab.run(..., executor=RayExecutor(...)) on a real local Ray cluster (started once for the module, on
127.0.0.1, 2 CPUs, a small object store) against the OpenAI-compatible stub server: no provider is reachable
here, the HTTP path through litellm is real. The expected table is a single-process run of the same items
against the same stub, whose answers are a pure function of the request (so equal requests, equal rows).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import judgelab
from judgelab import judgments
from judgelab.engine.cache import RequestCache
from tests.support.fault_server import direct_score_answer
from tests.support.openai_stub import StubServer

ray = pytest.importorskip("ray")

MODEL = "openai/gpt-4o-mini"  # priced by litellm's bundled map (LITELLM_LOCAL_MODEL_COST_MAP), in every worker too
KEY_ENV = "JUDGELAB_RAY_TEST_KEY"
SECRET = "sk-ray-test-9f3c1e7a55d04b2b8e61"
VOLATILE = ("created_at", "latency_s", "cached")  # when and how fast, not what: differ between any two runs
REPO = Path(__file__).resolve().parents[2]


def _answer(body):
    return direct_score_answer(body, json.dumps(body["messages"]))


def _items(n: int, prefix: str = "q") -> list[dict[str, str]]:
    return [{"item_id": f"{prefix}{i}", "prompt": f"Question {i}: what is {i} + {i}?", "response": f"It is {2 * i}."}
            for i in range(n)]


@pytest.fixture(scope="module")
def cluster():
    os.environ[KEY_ENV] = SECRET  # before ray.init: the workers inherit it, no task argument carries it
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 * 1024 * 1024,
             _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        os.environ.pop(KEY_ENV, None)


def _single(items, srv, **kw):
    return judgelab.run(items, "direct_score", MODEL, api_base=srv.base_url, cache=False, progress=False, **kw)


def _distributed(items, srv, executor, **kw):
    kw.setdefault("cache", False)
    return judgelab.run(items, "direct_score", MODEL, api_base=srv.base_url, progress=False, return_stats=True,
                        executor=executor, **kw)


def _same_rows(a: pd.DataFrame, b: pd.DataFrame, *, resumed: bool = False) -> None:
    """Equal rows in equal order; a resumed run's cache hits made no call (attempts 0) and are compared on the rest."""
    cols = [c for c in a.columns if c not in VOLATILE and not (resumed and c == "attempts")]
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))


def _files_hold(folder: Path, needle: bytes) -> list[Path]:
    hits = []
    for path in folder.rglob("*"):
        try:
            if path.is_file() and needle in path.read_bytes():
                hits.append(path)
        except OSError:
            pass
    return hits


def test_distributed_table_equals_the_single_process_table(cluster, tmp_path):
    """Invariant (seeded generator of item counts and block sizes): the table assembled from the partitions has
    the single-process rows in the single-process order (same call_ids, seeds, run id), judgelab.load(folder)
    reads the same table, the run's cache ends with every answer, and the API key (read by the workers from
    their environment) reaches the server but no partition, cache, run folder or Ray session log."""
    rng = random.Random(27)
    n, block = rng.randint(9, 17), rng.randint(2, 5)
    items = _items(n)
    out, run_cache, worker_cache = tmp_path / "out", tmp_path / "run.sqlite", tmp_path / "worker.sqlite"
    with StubServer(_answer) as srv:
        expected = _single(items, srv, concurrency=4)
        single_calls = srv.count
        res = _distributed(items, srv, judgelab.distributed.RayExecutor(
            workers=2, block_size=block, out=out, worker_cache=worker_cache, api_key_env=KEY_ENV),
            cache=run_cache, concurrency=3)
        assert srv.count - single_calls == n  # each request once
        assert set(srv.auth_headers[single_calls:]) == {f"Bearer {SECRET}"}
    _same_rows(expected, res.table)
    assert res.stats.api_calls == n and res.stats.items == n and res.stats.judgments == len(expected)
    _same_rows(expected, judgelab.load(out))
    assert len(list((out / "partitions").glob("block-*.parquet"))) == -(-n // block)
    with RequestCache(run_cache) as merged:
        assert all(merged.get(k) is not None for k in res.table["call_id"].unique())
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    for folder in (out, tmp_path, session):
        assert _files_hold(folder, SECRET.encode()) == [], folder


def test_a_killed_worker_loses_nothing_and_a_rerun_makes_only_the_missing_calls(cluster, tmp_path):
    """A worker actor killed mid-run (ray.kill): the run ends with BlocksLostError after writing the other
    blocks; the rerun judges only the missing blocks, and the calls it makes are exactly the requests whose
    answer no cache held at the kill (answers the dead worker had received are cache hits): 0 rows lost,
    0 duplicated, and the table equals the single-process one."""
    items = _items(24)
    out, worker_cache = tmp_path / "out", tmp_path / "worker.sqlite"

    def make():
        return judgelab.distributed.RayExecutor(workers=2, block_size=4, out=out, worker_cache=worker_cache,
                                                api_key_env=KEY_ENV)

    with StubServer(_answer, delay_s=0.05) as srv:
        expected = _single(items, srv, concurrency=8)
        base = srv.count
        executor = make()
        killed: list[object] = []

        def kill_one() -> None:
            deadline = time.monotonic() + 60
            while srv.count < base + 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            victim = executor.actors[1]
            ray.kill(victim)
            killed.append(victim)

        killer = threading.Thread(target=kill_one)
        killer.start()
        with pytest.raises(judgelab.distributed.BlocksLostError) as lost:
            _distributed(items, srv, executor, cache=tmp_path / "run.sqlite", concurrency=2)
        killer.join()
        assert killed
        with RequestCache(worker_cache) as wc:
            answered = len(wc)
        written = len(list((out / "partitions").glob("block-*.parquet")))
        assert 0 < written < 6 and len(lost.value.result.table) < len(expected)
        before = srv.count
        again = _distributed(items, srv, make(), cache=tmp_path / "run.sqlite", concurrency=2)
        rerun_calls = srv.count - before
    print(f"worker killed: {written} of 6 blocks written, {answered} answers cached, {before - base} requests "
          f"sent before the rerun, rerun calls {rerun_calls}")  # the counts for the report (pytest -s)
    assert rerun_calls == 24 - answered  # only the requests no cache held
    assert again.stats.api_calls == rerun_calls and again.stats.cache_hits == answered - written * 4
    judgments.validate(again.table)  # unique keys: nothing duplicated
    _same_rows(expected, again.table, resumed=True)


def test_one_budget_gives_the_single_process_skipped_rows(cluster, tmp_path):
    """Invariant: with max_cost_usd set, the calls made across 2 workers (3 concurrent calls each, blocks of 2)
    are those of a single process judging one request after the other: the same rows ok, the same rows
    skipped_budget, the same spend, never past the cap."""
    from judgelab.backends.pricing import estimate_call_cost

    items = _items(14)
    rubric = judgelab.load_rubric("direct_score")
    first = rubric.requests(items[0])[0]
    est = estimate_call_cost(MODEL, list(first.messages), first.max_tokens or None)[1]
    actual = 50 * 0.15e-6 + 10 * 0.6e-6  # the stub bills 50 prompt + 10 completion tokens at gpt-4o-mini's price
    cap = est + 5.5 * actual  # about six calls of fourteen
    with StubServer(_answer) as srv:
        serial = _single(items, srv, concurrency=1, max_cost_usd=cap)
        base = srv.count
        res = _distributed(items, srv, judgelab.distributed.RayExecutor(workers=2, block_size=2, out=tmp_path / "o",
                                                                        api_key_env=KEY_ENV),
                           concurrency=3, max_cost_usd=cap)
        calls = srv.count - base
    ok = serial.drop_duplicates("call_id")["status"].eq("ok").sum()
    assert 0 < ok < 14 and calls == ok == base
    _same_rows(serial, res.table)
    assert res.stats.cost_usd <= cap
    # blocks holding skipped_budget rows are not final: they are not written, so a rerun judges them again
    written = {int(p.stem.split("-")[1]) for p in (tmp_path / "o" / "partitions").glob("block-*.parquet")}
    skipped_blocks = {int(i[1:]) // 2 for i in res.table.loc[res.table["status"] == "skipped_budget", "item_id"]}
    assert written and not written & skipped_blocks


DRIVER = """
import sys, judgelab
from judgelab.distributed import RayExecutor
items = [{"item_id": f"q{i}", "prompt": f"Question {i}: what is {i} + {i}?", "response": f"It is {2 * i}."}
         for i in range(int(sys.argv[3]))]
judgelab.run(items, "direct_score", "openai/gpt-4o-mini", api_base=sys.argv[2], cache=sys.argv[6], progress=False,
             concurrency=2, executor=RayExecutor(sys.argv[1], workers=2, block_size=3, out=sys.argv[4],
             worker_cache=sys.argv[5], api_key_env="JUDGELAB_RAY_TEST_KEY",
             init_options={"_node_ip_address": "127.0.0.1"}))
"""


@pytest.mark.long
def test_a_killed_driver_resumes_from_its_partitions(cluster, tmp_path):
    """The driver (a subprocess joined to the cluster) killed after its first partitions: a rerun leaves the
    written partitions untouched, calls only the requests no cache held, and gives the single-process table."""
    n = 18
    items = _items(n)
    out, worker_cache = tmp_path / "out", tmp_path / "worker.sqlite"
    with StubServer(_answer, delay_s=0.05) as srv:
        expected = _single(items, srv, concurrency=8)
        env = {**os.environ, "PYTHONPATH": str(REPO), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        driver = subprocess.Popen([sys.executable, "-c", DRIVER, cluster, srv.base_url, str(n), str(out),
                                   str(worker_cache), str(tmp_path / "run.sqlite")], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        parts = out / "partitions"
        while time.monotonic() < deadline and driver.poll() is None and \
                len(list(parts.glob("block-*.parquet")) if parts.is_dir() else []) < 2:
            time.sleep(0.02)
        assert driver.poll() is None, driver.stderr.read().decode()[-2000:] if driver.stderr else ""
        driver.kill()
        driver.wait()
        time.sleep(1.0)  # the cluster ends the dead driver's actors
        before = {p.name: p.stat().st_mtime_ns for p in parts.glob("block-*.parquet")}
        assert 2 <= len(before) < 6
        with RequestCache(worker_cache) as wc:
            answered = len(wc)
        calls_before = srv.count
        again = _distributed(items, srv, judgelab.distributed.RayExecutor(
            workers=2, block_size=3, out=out, worker_cache=worker_cache, api_key_env=KEY_ENV), concurrency=2,
            cache=tmp_path / "run.sqlite")
        rerun_calls = srv.count - calls_before
    print(f"driver killed: {len(before)} of 6 blocks written, {answered} answers cached, {calls_before} requests "
          f"sent before the rerun (18 single-process), rerun calls {rerun_calls}")  # for the report (pytest -s)
    assert rerun_calls == n - answered
    assert {p.name: p.stat().st_mtime_ns for p in parts.glob("block-*.parquet") if p.name in before} == before
    _same_rows(expected, again.table, resumed=True)


def test_cli_run_with_ray_writes_partitions_and_the_run_folder(cluster, tmp_path):
    """`judgelab run --ray ADDRESS --workers N` (in this process, through typer's runner, joined to the module's
    cluster): one JSON summary line, the run folder's table equal to the single-process one, its partitions
    readable as the same table, and the key named by --api-key-env used by the workers but written nowhere."""
    from typer.testing import CliRunner

    from judgelab.cli import app

    items = _items(7)
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    out = tmp_path / "out"
    with StubServer(_answer) as srv:
        expected = _single(items, srv)
        base = srv.count
        ran = CliRunner().invoke(app, ["run", "--rubric", "direct_score", "--data", str(data), "--model", MODEL,
                                       "--api-base", srv.base_url, "--api-key-env", KEY_ENV, "--no-cache",
                                       "--ray", cluster, "--workers", "2", "--block-size", "3", "--out", str(out)])
        assert srv.count - base == 7 and set(srv.auth_headers[base:]) == {f"Bearer {SECRET}"}
    assert ran.exit_code == 0, ran.output
    summary = json.loads(ran.stdout.strip().splitlines()[-1])
    assert summary["api_calls"] == 7 and summary["judgments"] == len(expected)
    _same_rows(expected, judgelab.load(out / "judgments.parquet"))
    _same_rows(expected, judgments.load(out / "partitions" / ".."))
    assert len(list((out / "partitions").glob("block-*.parquet"))) == 3
    assert _files_hold(out, SECRET.encode()) == []


def _call_endpoint(batch: pd.DataFrame, url: str) -> pd.DataFrame:
    """The recipe's call step: POST each payload to the OpenAI-compatible endpoint, keep the body as text."""
    import urllib.request

    bodies = []
    for payload in batch["payload"]:
        req = urllib.request.Request(f"{url}/chat/completions", data=payload.encode(), method="POST",
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as reply:
            bodies.append(reply.read().decode())
    return batch.assign(response=bodies)


def test_ray_data_recipe_gives_the_judgments_table(cluster):
    """The docs' Ray Data recipe (request_rows -> the endpoint -> judgment_rows -> assemble, each a map_batches
    step over batches of 4 items): the same rows as judgelab.run against the same endpoint with the same run id
    and no re-ask, except latency, attempts and creation time (how the answer was obtained), in the same order;
    every 5th answer is not JSON, so parse_error rows go through the recipe too."""
    from judgelab.distributed.data import assemble, judgment_rows, request_rows

    def answer(body):
        text = _answer(body)
        return "I cannot say." if "Question 5" in json.dumps(body["messages"]) or "Question 10" in \
            json.dumps(body["messages"]) else text

    items = _items(11)
    with StubServer(answer) as srv:
        options = {"rubric": "direct_score", "model": MODEL, "api_base": srv.base_url, "run_id": "recipe"}
        expected = judgelab.run(items, "direct_score", MODEL, api_base=srv.base_url, run_id="recipe", max_reasks=0,
                                cache=False, progress=False)
        frame = pd.DataFrame(items).assign(item_position=range(len(items)))
        ds = ray.data.from_pandas(frame)
        ds = ds.map_batches(request_rows, batch_format="pandas", batch_size=4, fn_kwargs=options)
        ds = ds.map_batches(_call_endpoint, batch_format="pandas", batch_size=4, fn_kwargs={"url": srv.base_url})
        ds = ds.map_batches(judgment_rows, batch_format="pandas", batch_size=4, fn_kwargs=options)
        table = assemble(ds.to_pandas())
    assert (expected["status"] == "parse_error").sum() > 0
    cols = [c for c in expected.columns if c not in (*VOLATILE, "attempts")]
    pd.testing.assert_frame_equal(expected[cols].reset_index(drop=True), table[cols].reset_index(drop=True))


def test_a_price_the_workers_do_not_know_is_one_sentence(cluster, tmp_path):
    """A model priced only on the driver (litellm.register_model in this process) with a budget: the workers
    cannot reserve, and the run stops before any call with the workers' UnknownPriceError, not Ray's traceback."""
    import litellm

    from judgelab.backends.pricing import UnknownPriceError

    litellm.register_model({"openai/driver-only-price": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                                         "litellm_provider": "openai", "mode": "chat"}})
    with StubServer(_answer) as srv:
        with pytest.raises(UnknownPriceError, match="does not reach them") as err:
            judgelab.run(_items(3), "direct_score", "openai/driver-only-price", api_base=srv.base_url, cache=False,
                         progress=False, max_cost_usd=1.0,
                         executor=judgelab.distributed.RayExecutor(workers=1, out=tmp_path / "o"))
        assert srv.count == 0
    assert "Traceback" not in str(err.value)
