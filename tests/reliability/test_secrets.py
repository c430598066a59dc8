"""A planted API key never reaches a file, stdout/stderr, a DEBUG log or an error message, whichever way it was
passed and whichever command wrote.

The planted-key matrix: a DISTINCT key in each place a user can pass one — the provider's environment
variable (``OPENAI_API_KEY``), ``--api-key-env``, ``api_key=``, inside ``api_base`` as user-info and as an
``api-key`` query parameter, and an ``api-key`` header in ``extra_params`` — for ``run`` (Python and CLI),
``probe`` (Python and CLI), ``batch_run``, ``report`` and a panel over two judges. Each scenario searches
for EVERY planted key (the key, most of it, its URL-encoded and Basic-auth forms) in every file under the
test's folder (raw bytes, and Parquet cell by cell since its pages may be compressed), captured
stdout/stderr, every log record at DEBUG (judgelab's, litellm's and the HTTP clients' loggers), and the
text and traceback of any exception.

The server (tests/reliability/leak_server.py; no provider is reachable here) quotes back every
credential it receives in its error messages, bare and inside headers and paths, so the keys come
back through litellm's exceptions and logs; each scenario also checks that its keys did reach the
server (except user-info, which litellm's aiohttp transport refuses before sending: that run stops with
a connection error, whose message and files are searched all the same).
"""

from __future__ import annotations

import base64
import json
import logging
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd
import pytest
from typer.testing import CliRunner

import judgelab
from judgelab.backends import redaction
from judgelab.cli import app
from judgelab.engine.batch import BatchAPIError
from judgelab.engine.config import RunConfig
from judgelab.engine.runner import RunAborted
from judgelab.probes import run_probe
from tests.engine.batch_standin import BatchStandIn
from tests.reliability.helpers import REPO, cli_env, direct_items, write_jsonl
from tests.reliability.leak_server import LeakServer
from tests.support.fault_server import direct_score_answer
from tests.support.toy_rubrics import ToyDirect

MODEL = "openai/leak-judge"
KEYS = {place: f"sk-PLANTED-{place}-{i}f3a9c1e5b2d4f60a8c7e9b1d3f5a7c9" for i, place in enumerate(
    ("env", "flag", "arg", "userinfo", "query", "header", "panel_second", "batch"))}
USER = "judge"  # the user-info name: too short to be a secret, not searched
PLAN = {"q1": "bad_request", "q2": "server_error"}  # q0 answers, q1 is refused (quoted), q2 fails once then answers
TOY_ITEMS = [{"item_id": f"i{i}", "answer": f"answer {i}"} for i in range(3)]  # for the batch runs (ToyDirect)
PAIRS = [{"item_id": f"p{k}", "prompt": f"Question {k}?", "response_a": f"[item:p{k}] Answer {k}.",
          "response_b": f"Reply {k}."} for k in range(4)]  # for the position probe (pairwise)
PROBE_PLAN = {"p1": "bad_request"}  # both orders of p1 are refused, quoting the credentials
FLAG_VAR = "PLANTED_VAR"  # --api-key-env names it; a name that does not look secret, so only the CLI can register it
DEBUG_LOGGERS = ("judgelab", "LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "httpcore", "openai")


def _forms(key: str) -> tuple[str, ...]:
    """The key, enough of it to be a leak, and the encodings it travels in."""
    basic = base64.b64encode(f"{USER}:{key}".encode()).decode()
    return key, key[3:], key[-16:], quote(key, safe=""), basic[:-4]


TELLTALES = {form: place for place, key in KEYS.items() for form in _forms(key)}


def leaks(text: str) -> set[str]:
    """The places whose key shows in ``text``."""
    return {place for form, place in TELLTALES.items() if form in text}


def file_leaks(root: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (p for p in root.rglob("*") if p.is_file()):
        blob = path.read_bytes().decode("utf-8", "replace")
        hits = leaks(blob)
        if path.suffix == ".parquet":  # compressed pages: search the decoded cells too
            hits |= leaks(" ".join(str(v) for v in pd.read_parquet(path).to_numpy().ravel()))
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def error_text(exc: BaseException) -> str:
    return str(exc) + "".join(traceback.format_exception(exc))


def _items(n: int = 3, prefix: str = "q") -> list[dict[str, Any]]:
    return direct_items(n, prefix)


def _answer(body: dict[str, Any]) -> str:
    prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    if '"winner"' in prompt or "response_a" in prompt.lower() or "Response A" in prompt:
        comparison = [{"criterion": c, "analysis": "compared", "winner": "A"} for c in ("helpfulness", "accuracy")]
        return json.dumps({"comparison": comparison, "reasoning": "first", "winner": "A", "confidence": 0.9})
    return direct_score_answer(body, "leak")


@pytest.fixture
def debug_logs(caplog) -> Iterator[Any]:
    """Every logger that could see a key at DEBUG; the registry of keys judgelab was given starts empty."""
    levels = {name: logging.getLogger(name).level for name in DEBUG_LOGGERS}
    for name in DEBUG_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    try:
        yield caplog
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch) -> None:
    # each scenario must mask its keys by itself, not thanks to keys an earlier test registered
    monkeypatch.setattr(redaction, "_REGISTERED", set())


def _log_text(caplog) -> str:
    handler = logging.Formatter()
    return "\n".join(handler.format(r) for r in caplog.records)


# ------------------------------------------------------------------ scenarios (one row of the matrix each)
# A scenario runs judgelab against a server, writes what a user would write under ``out``, and returns the
# texts it printed or raised plus the places whose key the server must have received.

Scenario = Callable[[Path, Any], tuple[list[str], set[str]]]


def _with_query(base: str, key: str) -> str:
    return f"{base}?api-key={key}"


def _with_userinfo(base: str, key: str) -> str:
    return base.replace("http://", f"http://{USER}:{key}@")


def _save(table: pd.DataFrame, out: Path, name: str) -> None:
    judgelab.save(table, out / f"{name}.parquet")
    judgelab.save(table, out / f"{name}.jsonl")


def run_arg_query_header(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """judgelab.run: api_key=, a key in the api base's query, an api-key header in extra_params; a 401 ends it."""
    texts = []
    with LeakServer(_answer, PLAN) as srv:
        kw = dict(api_base=_with_query(srv.base_url, KEYS["query"]), api_key=KEYS["arg"],
                  extra_params={"extra_headers": {"api-key": KEYS["header"]}}, cache=out / "cache.sqlite",
                  retry_base_s=0.01, return_stats=True)
        res = judgelab.run(_items(), "direct_score", MODEL, **kw)
        config = RunConfig(api_base=kw["api_base"], api_key=KEYS["arg"], extra_params=kw["extra_params"])
        texts += [repr(res.stats), repr(config), res.table.to_csv()]
        srv.plan = {f"z{i}": "unauthorized" for i in range(2)}
        with pytest.raises(RunAborted) as aborted:
            judgelab.run(_items(2, "z"), "direct_score", MODEL, concurrency=1, **kw)
        received = srv.received()
    _save(res.table, out, "judgments")
    _save(aborted.value.result.table, out, "aborted")
    assert (res.table["status"] == "api_error").sum() == 3  # q1's three criteria: the quoted refusal is in there
    reasons = res.table["unscored_reason"].dropna()
    assert reasons.str.contains("the credentials ***, ***, *** are not valid", regex=False).all()
    return texts + [error_text(aborted.value)], received


def run_env(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """judgelab.run with the provider's key in OPENAI_API_KEY (no api_key=): litellm sends it."""
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["env"])
    with LeakServer(_answer, PLAN) as srv:
        res = judgelab.run(_items(), "direct_score", MODEL, api_base=srv.base_url, cache=out / "cache.sqlite",
                           retry_base_s=0.01, return_stats=True)
        received = srv.received()
    _save(res.table, out, "judgments")
    return [repr(res.stats), res.table.to_csv()], received


def run_userinfo(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """judgelab.run with the key as the api base's user-info password (litellm refuses to send it)."""
    with LeakServer(_answer, PLAN) as srv:
        with pytest.raises(RunAborted) as aborted:
            judgelab.run(_items(), "direct_score", MODEL, api_base=_with_userinfo(srv.base_url, KEYS["userinfo"]),
                         cache=out / "cache.sqlite", max_retries=0, return_stats=True)
        assert srv.requests == []
    _save(aborted.value.result.table, out, "aborted")
    assert "http://***@127.0.0.1" in str(aborted.value)  # the URL is still named, its user-info masked
    return [error_text(aborted.value)], set()


def panel_two_judges(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """A panel over two judges, each with its own key (one also in its api base's query)."""
    with LeakServer(_answer, PLAN) as srv:
        members = [{"model": MODEL, "name": "first", "api_base": srv.base_url, "api_key": KEYS["arg"]},
                   {"model": MODEL, "name": "second", "api_base": _with_query(srv.base_url, KEYS["query"]),
                    "api_key": KEYS["panel_second"]}]
        res = judgelab.panel(members).run(_items(), "direct_score", cache=out / "cache.sqlite", retry_base_s=0.01,
                                          progress=False, return_stats=True)
        received = srv.received()
    _save(res.table, out, "panel")
    return [repr(res.stats), repr(res.aborted), res.table.to_csv()], received


def probe_python(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """probes.run_probe('position') with api_key= and a key in the api base's query."""
    with LeakServer(_answer, PROBE_PLAN) as srv:
        result = run_probe("position", PAIRS, "pairwise", MODEL, api_base=_with_query(srv.base_url, KEYS["query"]),
                           api_key=KEYS["arg"], cache=out / "cache.sqlite", progress=False)
        received = srv.received()
    _save(result.table, out, "probe")
    return [result.summary_json(), repr(result.meta), result.table.to_csv()], received


def batch(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """batch_run with api_key= and OPENAI_API_KEY set, then a provider that refuses the upload and quotes it."""
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["env"])
    with BatchStandIn(lambda body: '{"score": 3}') as standin:
        res = judgelab.batch_run(TOY_ITEMS, ToyDirect(), "openai/batch-judge", state_path=out / "batch.state.json",
                                 api_base=standin.base_url, api_key=KEYS["batch"], poll_interval=0.01)
    assert res.status == "completed"
    _save(res.table, out, "batch")
    with LeakServer(_answer) as srv:
        with pytest.raises(BatchAPIError) as refused:
            judgelab.batch_run(TOY_ITEMS, ToyDirect(), "openai/batch-judge", state_path=out / "refused.state.json",
                               api_base=_with_query(srv.base_url, KEYS["query"]), api_key=KEYS["batch"])
        received = srv.received()
    assert "batch upload failed" in str(refused.value) and "the credentials ***" in str(refused.value)
    return [repr(res.state), error_text(refused.value)], received


def _cli(args: list[str]) -> str:
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    return result.output + result.stderr


def cli_run_flag_query(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """`judgelab run --api-key-env VAR --api-base ...?api-key=KEY`, then the same with a 401; the report of it."""
    monkeypatch.setenv(FLAG_VAR, KEYS["flag"])
    data = write_jsonl(out / "items.jsonl", _items())
    with LeakServer(_answer, PLAN) as srv:
        common = ["--rubric", "direct_score", "--model", MODEL, "--api-key-env", FLAG_VAR, "--api-base",
                  _with_query(srv.base_url, KEYS["query"]), "--cache", str(out / "cache.sqlite"), "--retry-base", "0"]
        texts = [_cli(["run", "--data", str(data), "--out", str(out / "run"), *common])]
        srv.plan = {"z0": "unauthorized"}
        data401 = write_jsonl(out / "z.jsonl", _items(1, "z"))
        texts.append(_cli(["run", "--data", str(data401), "--out", str(out / "run401"), *common]))
        received = srv.received()
    assert json.loads((out / "run" / "run.json").read_text())["api_base"].endswith("?api-key=***")
    texts += _report(out)
    return texts, received


def cli_run_userinfo_env(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """`judgelab run --api-base http://user:KEY@host/v1` with OPENAI_API_KEY set too."""
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["env"])
    data = write_jsonl(out / "items.jsonl", _items())
    with LeakServer(_answer, PLAN) as srv:
        texts = [_cli(["run", "--rubric", "direct_score", "--model", MODEL, "--data", str(data), "--api-base",
                       _with_userinfo(srv.base_url, KEYS["userinfo"]), "--out", str(out / "run"), "--cache",
                       str(out / "cache.sqlite"), "--max-retries", "0"])]
    assert json.loads((out / "run" / "run.json").read_text())["aborted"]
    return texts, set()


def cli_probe(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """`judgelab probe position --api-key-env VAR --api-base ...?api-key=KEY`."""
    monkeypatch.setenv(FLAG_VAR, KEYS["flag"])
    monkeypatch.setenv("JUDGELAB_CACHE", str(out / "cache.sqlite"))
    data = write_jsonl(out / "pairs.jsonl", PAIRS)
    with LeakServer(_answer, PROBE_PLAN) as srv:
        text = _cli(["probe", "position", "--rubric", "pairwise", "--data", str(data), "--model", MODEL,
                     "--api-base", _with_query(srv.base_url, KEYS["query"]), "--api-key-env", FLAG_VAR])
        received = srv.received()
    assert '"summary"' in text
    return [text], received


def _report(out: Path) -> list[str]:
    """The HTML report of the run folder, when judgelab has a report (the report's author fills this hook)."""
    try:
        from judgelab.viz.report import report
    except ImportError:
        return []
    path = report(out / "run", out / "report.html")
    return [path.read_text(encoding="utf-8")]


SCENARIOS: dict[str, tuple[Scenario, set[str]]] = {  # scenario -> (how, the places whose key it plants)
    "run: api_key= + query + header": (run_arg_query_header, {"arg", "query", "header"}),
    "run: environment": (run_env, {"env"}),
    "run: user-info": (run_userinfo, {"userinfo"}),
    "panel of two judges": (panel_two_judges, {"arg", "query", "panel_second"}),
    "probe: api_key= + query": (probe_python, {"arg", "query"}),
    "batch_run: api_key= + environment + query": (batch, {"batch", "env", "query"}),
    "cli run + report: --api-key-env + query": (cli_run_flag_query, {"flag", "query"}),
    "cli run: user-info + environment": (cli_run_userinfo_env, {"userinfo", "env"}),
    "cli probe: --api-key-env + query": (cli_probe, {"flag", "query"}),
}
# planted keys that cannot reach the (leak) server: user-info (litellm's aiohttp transport refuses a URL with
# credentials before sending), the environment's key when user-info or api_key= is given too, and the batch key
# sent to the batch stand-in (which records nothing) ... except on the refused upload, where it is sent
UNSENT = {"cli run: user-info + environment": {"userinfo", "env"}, "run: user-info": {"userinfo"},
          "batch_run: api_key= + environment + query": {"env"}}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_no_planted_key_in_any_file_output_log_or_error(name, tmp_path, monkeypatch, capfd, debug_logs):
    scenario, planted = SCENARIOS[name]
    out = tmp_path / "out"
    out.mkdir()
    texts, received = scenario(out, monkeypatch)
    # the keys were really in play: each reached the server (bare, in a header or in the path)
    sent = {place for place, key in KEYS.items() if key in received}
    assert sent == planted - UNSENT.get(name, set()), (sent, planted)
    written = file_leaks(tmp_path)
    assert written == {}, written
    assert any(p.name.startswith("cache.sqlite") or p.suffix == ".json" for p in tmp_path.rglob("*"))
    printed = capfd.readouterr()
    assert leaks(printed.out + printed.err) == set()
    assert leaks("\n".join(texts)) == set()
    logs = _log_text(debug_logs)
    assert debug_logs.records, "no DEBUG records: the log search would prove nothing"
    assert leaks(logs) == set()


def test_a_rotated_key_still_hits_the_cache(tmp_path):
    """The cache key hashes the api base and parameters with keys masked: a new key reuses every answer."""
    with LeakServer(_answer) as srv:
        for i, key in enumerate((KEYS["query"], KEYS["query"].replace("query", "rotated"))):
            res = judgelab.run(_items(), "direct_score", MODEL, api_base=_with_query(srv.base_url, key),
                               api_key=f"sk-arg-{i}-abcdefgh", extra_params={"extra_headers": {"api-key": f"h-{i}-xyzzy1"}},
                               cache=tmp_path / "cache.sqlite", progress=False, return_stats=True)
            assert res.stats.api_calls == (3 if i == 0 else 0) and res.stats.cache_hits == (0 if i == 0 else 3)
            if i == 0:
                first = res
        assert len(srv.requests) == 3
    assert res.table["run_id"].iloc[0] == first.table["run_id"].iloc[0]
    # a different server is a different request
    with LeakServer(_answer) as other:
        moved = judgelab.run(_items(), "direct_score", MODEL, api_base=other.base_url, cache=tmp_path / "cache.sqlite",
                             progress=False, return_stats=True)
    assert moved.stats.api_calls == 3


# the command line's own entry point (judgelab.cli.main), with every logger at DEBUG writing to stderr
DEBUG_CLI = ("import logging, sys; logging.basicConfig(level=logging.DEBUG, stream=sys.stderr); "
             "from judgelab.cli import main; sys.argv = ['judgelab', *sys.argv[1:]]; main()")


def _debug_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", DEBUG_CLI, *args], capture_output=True, text=True, env=env,
                          timeout=120, cwd=REPO)


@pytest.mark.slow
def test_cli_subprocess_with_debug_logs_writes_and_prints_no_key(tmp_path):
    """The real command line in its own process, every log at DEBUG on stderr: --api-key-env plus a key in
    the api base's query, OPENAI_API_KEY set too; a run, then a 401 run that stops."""
    data = write_jsonl(tmp_path / "items.jsonl", _items())
    env = cli_env(**{FLAG_VAR: KEYS["flag"], "OPENAI_API_KEY": KEYS["env"]})
    with LeakServer(_answer, PLAN) as srv:
        common = ["--rubric", "direct_score", "--model", MODEL, "--api-key-env", FLAG_VAR, "--api-base",
                  _with_query(srv.base_url, KEYS["query"]), "--cache", str(tmp_path / "cache.sqlite"),
                  "--retry-base", "0"]
        ok = _debug_cli("run", "--data", str(data), "--out", str(tmp_path / "out"), *common, env=env)
        srv.plan = {"z0": "unauthorized"}
        bad = _debug_cli("run", "--data", str(write_jsonl(tmp_path / "z.jsonl", _items(1, "z"))), "--out",
                         str(tmp_path / "out401"), *common, env=env)
        received = srv.received()
    assert KEYS["flag"] in received and KEYS["query"] in received
    assert ok.returncode == 0, ok.stderr
    # litellm's own log handler writes its DEBUG lines to stdout too: find the summary among them
    summary = next(json.loads(line) for line in ok.stdout.splitlines() if line.startswith('{"items"'))
    assert summary["judgments"] == 9
    assert "DEBUG:openai" in ok.stderr and "LiteLLM:DEBUG" in ok.stdout + ok.stderr  # the debug logs were on
    # (DEBUG logs carry the HTTP clients' tracebacks: searched for keys like everything else)
    assert bad.returncode == 1 and "error: run stopped early" in bad.stderr and "authentication failed" in bad.stderr
    for proc in (ok, bad):
        assert leaks(proc.stdout + proc.stderr) == set()
    assert file_leaks(tmp_path) == {}
    t = judgelab.load(tmp_path / "out" / "judgments.parquet")
    assert t["unscored_reason"].dropna().str.contains("Bearer \\*\\*\\*").any()  # masked, not dropped
