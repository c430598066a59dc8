"""A planted API key never reaches a file, stdout/stderr, a DEBUG log or an error message, whichever way it was
passed and whichever command wrote.

The planted-key matrix: a DISTINCT key in each place a user can pass one — the provider's environment
variable (``OPENAI_API_KEY``), ``--api-key-env``, ``api_key=``, inside ``api_base`` as user-info and as an
``api-key`` query parameter, an ``api-key`` header in ``extra_params``, and CUSTOM headers with generated
names (``extra_params={"extra_headers": {NAME: KEY, NAME2: "Bearer " + KEY2}, "headers": {NAME3: KEY3}}``,
whatever the name) — for ``run`` (Python and CLI), ``probe`` (Python and CLI), ``batch_run``, ``report`` and a
panel over two judges. The generated keys (seeded) hold regular-expression metacharacters, quotes, ``<>&`` and
``%``. Each scenario searches for EVERY planted key (the key, most of it, its URL-encoded and Basic-auth
forms) in every file under the test's folder (raw bytes, and Parquet cell by cell since its pages may be
compressed; the cache's SQLite file and its WAL included), captured stdout/stderr, every log record at DEBUG
(judgelab's, litellm's and the HTTP clients' loggers), and the text and traceback of any exception.

Two servers stand in for providers: the leak server below quotes credentials in its errors; the echo server
(tests/reliability/echo_server.py) quotes every request header and the Authorization value back inside its
ANSWERS (content, reasoning, system fingerprint, response id) and its error bodies, so the keys come back as
part of what judgelab stores. A credential shorter than 8 characters is refused in one sentence (it could not
be masked by value), which the last tests check for every place a credential can be given.

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
import random
import string
import subprocess
import sys
import traceback
import warnings
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
from tests.reliability.echo_server import EchoServer
from tests.reliability.helpers import REPO, cli_env, direct_items, write_jsonl
from tests.reliability.leak_server import LeakServer
from tests.support.fault_server import direct_score_answer
from tests.support.toy_rubrics import ToyDirect

MODEL = "openai/leak-judge"
KEYS = {place: f"sk-PLANTED-{place}-{i}f3a9c1e5b2d4f60a8c7e9b1d3f5a7c9" for i, place in enumerate(
    ("env", "flag", "arg", "userinfo", "query", "header", "panel_second", "batch"))}
# generated (seeded): header names a fixed list of secret names would never hold, and keys full of characters that
# mean something to a regular expression, a URL, JSON, a Python repr or HTML
_RNG = random.Random(2021)
_META = ".*+?()[]{}|^$\\'\"<>&%#=;,/:@!~"


def _generated_key(place: str) -> str:
    return f"gk-{place}-" + "".join(_RNG.choice(string.ascii_letters + string.digits + _META) for _ in range(28))


HEADER_NAMES = ["X-" + "".join(_RNG.choice(string.ascii_letters) for _ in range(_RNG.randint(4, 12))) + "-"
                + "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(_RNG.randint(2, 8)))
                for _ in range(4)]
KEYS.update({place: _generated_key(place) for place in ("custom", "custom_bearer", "headers_param", "meta",
                                                           "custom_probe")})
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


def _custom_headers() -> dict[str, Any]:
    return {"extra_headers": {HEADER_NAMES[0]: KEYS["custom"], HEADER_NAMES[1]: "Bearer " + KEYS["custom_bearer"]},
            "headers": {HEADER_NAMES[2]: KEYS["headers_param"]}}


def run_custom_headers_echoed(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """judgelab.run with api_key= (metacharacters), a query key and custom headers against the echo server: answers,
    reasoning, system fingerprint and error bodies quote every header; then a cached rerun and the HTML report."""
    items = _items(4)
    with EchoServer(_answer, {"q1": "bad_request", "q2": "server_error"}) as srv:
        kw = dict(api_base=_with_query(srv.base_url, KEYS["query"]), api_key=KEYS["meta"], extra_params=_custom_headers(),
                  cache=out / "cache.sqlite", retry_base_s=0.01, return_stats=True, progress=False)
        res = judgelab.run(items, "direct_score", MODEL, **kw)
        again = judgelab.run(items, "direct_score", MODEL, **kw)  # from the cache
        estimate = judgelab.estimate(items, "direct_score", MODEL, **{k: v for k, v in kw.items()
                                                                      if k not in ("return_stats", "progress")})
        received = srv.received()
    assert again.stats.api_calls == 1 and again.stats.cache_hits == 3  # q1's refusal is asked again, not cached
    ok = res.table[res.table["status"] == "ok"]
    assert ok["raw_output"].str.contains('"echo": "you sent', regex=False).all()  # the echo is kept, masked
    assert ok["reasoning"].str.startswith("thinking about you sent").all()
    assert ok["system_fingerprint"].str.contains("you sent /v1?api-key=*** with", regex=False).all()
    assert res.table.loc[res.table["status"] != "ok", "unscored_reason"].str.contains("you sent").all()
    _save(res.table, out, "judgments")
    _save(again.table, out, "rerun")
    judgelab.report(res, out / "report.html", items=items, rubric="direct_score")
    config = RunConfig(api_base=kw["api_base"], api_key=KEYS["meta"], extra_params=kw["extra_params"])
    return [repr(res.stats), repr(config), res.table.to_csv(), again.table.to_csv(), repr(estimate)], received


def run_verbose_litellm(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """litellm.set_verbose = True (its deprecated mode prints every request with plain print()): judgelab turns it
    off with a warning, so nothing unmasked reaches stdout; litellm's DEBUG logs stay on and masked."""
    import litellm

    monkeypatch.setattr(litellm, "set_verbose", True)
    with EchoServer(_answer) as srv, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = judgelab.run(_items(), "direct_score", MODEL, api_base=srv.base_url, api_key=KEYS["meta"],
                           extra_params=_custom_headers(), cache=out / "cache.sqlite", progress=False)
        received = srv.received()
    assert litellm.set_verbose is False
    assert any("litellm.set_verbose prints every request" in str(w.message) for w in caught)
    _save(res, out, "judgments")
    return [res.to_csv()], received


def probe_custom_headers(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """probes.run_probe('position') with a custom header, against the echo server (both orders echoed)."""
    with EchoServer(_answer, PROBE_PLAN) as srv:
        result = run_probe("position", PAIRS, "pairwise", MODEL, api_base=srv.base_url,
                           extra_params={"extra_headers": {HEADER_NAMES[3]: KEYS["custom_probe"]}},
                           cache=out / "cache.sqlite", progress=False)
        received = srv.received()
    _save(result.table, out, "probe")
    judgelab.report(result, out / "probe.html")
    return [result.summary_json(), repr(result.meta), result.table.to_csv()], received


def cli_run_echo_metacharacters(out: Path, monkeypatch: Any) -> tuple[list[str], set[str]]:
    """`judgelab run --api-key-env VAR --report` with a key full of metacharacters, against the echo server."""
    monkeypatch.setenv(FLAG_VAR, KEYS["meta"])
    data = write_jsonl(out / "items.jsonl", _items())
    with EchoServer(_answer, {"q1": "bad_request"}) as srv:
        text = _cli(["run", "--rubric", "direct_score", "--data", str(data), "--model", MODEL, "--api-base",
                     srv.base_url, "--api-key-env", FLAG_VAR, "--cache", str(out / "cache.sqlite"), "--out",
                     str(out / "run"), "--report", "--retry-base", "0"])
        received = srv.received()
    assert (out / "run" / "report.html").exists()
    return [text, *_report(out)], received


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
    "run: custom headers + metacharacters, echoed": (run_custom_headers_echoed,
                                                     {"meta", "query", "custom", "custom_bearer", "headers_param"}),
    "run: litellm.set_verbose": (run_verbose_litellm, {"meta", "custom", "custom_bearer", "headers_param"}),
    "probe: custom header, echoed": (probe_custom_headers, {"custom_probe"}),
    "cli run + report: metacharacters, echoed": (cli_run_echo_metacharacters, {"meta"}),
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


# ------------------------------------------------------------------ credentials too short to be masked
SHORT_VALUES = ["k", "sk-test", "a.b*c", "ab$^(x"]  # 1 to 7 characters, some of them regex metacharacters
PLACES: dict[str, Callable[[str, str], dict[str, Any]]] = {
    "api_key": lambda v, base: {"api_key": v},
    "query parameter": lambda v, base: {"api_base": f"{base}?api-key={quote(v, safe='')}"},
    "user-info (the key as the user name)": lambda v, base: {"api_base": base.replace("http://", f"http://{quote(v, safe='')}@")},
    "user-info password": lambda v, base: {"api_base": base.replace("http://", f"http://{USER}:{quote(v, safe='')}@")},
    "custom header": lambda v, base: {"extra_params": {"extra_headers": {HEADER_NAMES[0]: v}}},
    "bearer header": lambda v, base: {"extra_params": {"extra_headers": {"Authorization": "Bearer " + v}}},
    "headers=": lambda v, base: {"extra_params": {"headers": {HEADER_NAMES[2]: v}}},
    "secret-named field": lambda v, base: {"extra_params": {"aws_secret_access_key": v}},
}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("value", SHORT_VALUES)
def test_a_credential_too_short_to_mask_is_refused_in_one_sentence(place, value):
    """A credential shorter than 8 characters could not be masked by value without masking ordinary text: wherever
    it is given, the run is refused before any call, in one sentence naming where it was given (not its value)."""
    with EchoServer(_answer) as srv:
        with pytest.raises(redaction.ShortCredentialError) as refused:
            judgelab.run(_items(1), "direct_score", MODEL, cache=False, progress=False,
                         **{"api_base": srv.base_url, **PLACES[place](value, srv.base_url)})
        assert srv.requests == []
    message = str(refused.value)
    assert "\n" not in message and f"is {len(value)} character(s) long" in message and "give the real key" in message
    given = next(iter(PLACES[place](value, "http://h")))  # api_key, api_base or extra_params
    assert message.startswith(f"the credential given in {given}")


def test_short_credentials_are_refused_by_every_entry_point(tmp_path, monkeypatch):
    """The command line (--api-key-env), a panel member, batch_run and a router deployment refuse a short key too."""
    from judgelab.backends.router import router_judge

    monkeypatch.setenv(FLAG_VAR, "short")
    data = write_jsonl(tmp_path / "items.jsonl", _items(1))
    result = CliRunner().invoke(app, ["run", "--rubric", "direct_score", "--data", str(data), "--model", MODEL,
                                      "--api-base", "http://127.0.0.1:9/v1", "--api-key-env", FLAG_VAR, "--out",
                                      str(tmp_path / "out")])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: the credential given in api_key is 5 character(s) long")
    with pytest.raises(redaction.ShortCredentialError):
        judgelab.panel([{"model": MODEL, "name": "a", "api_base": "http://127.0.0.1:9/v1", "api_key": KEYS["arg"]},
                        {"model": MODEL, "name": "b", "api_base": "http://127.0.0.1:9/v1", "api_key": "abc"}]).run(
            _items(1), "direct_score", cache=False, progress=False)
    with pytest.raises(redaction.ShortCredentialError):
        judgelab.batch_run(TOY_ITEMS, ToyDirect(), "openai/batch-judge", state_path=tmp_path / "s.json",
                           api_base="http://127.0.0.1:9/v1", api_key="abc")
    with pytest.raises(redaction.ShortCredentialError):
        router_judge([{"api_base": "http://127.0.0.1:9/v1", "api_key": "abc"}], model=MODEL)


def test_masking_is_by_value_wherever_the_value_appears():
    """Unit view of the rules: every header value is masked whatever its name (also in a mapping), a key is masked
    inside other text and in its escaped forms, and so is what is left of it after a shape-based masker cut it."""
    key = KEYS["custom"]
    redaction.register_credentials(None, None, {"extra_headers": {"X-Whatever": key}})
    assert redaction.redact({"extra_headers": {"X-Whatever": key, "X-Plain": "anything"}}) == \
        {"extra_headers": {"X-Whatever": "***", "X-Plain": "***"}}
    for text in (f"prefix{key}suffix", json.dumps({"a": key}), json.dumps(json.dumps({"a": key})), repr(key),
                 quote(key, safe=""), __import__("html").escape(key)):
        assert leaks(redaction.redact(text)) == set(), text
    cut = next(i for i, c in enumerate(key) if not c.isalnum() and len(key) - i > 9)
    assert key[cut + 1:] not in redaction.redact("REDACTED" + key[cut:])  # litellm's "Bearer <word>" mask left this
