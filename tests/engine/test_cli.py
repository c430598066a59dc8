"""`judgelab run` as a user runs it: a subprocess, a data file, a local OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from judgelab import judgments
from tests.support.openai_stub import StubResponse, StubServer

GOOD = json.dumps({
    "scores": [
        {"criterion": "factual_accuracy", "evidence": ["e"], "justification": "j", "score": 4, "improvement": "i"},
        {"criterion": "instruction_following", "evidence": ["e"], "justification": "j", "score": 3,
         "improvement": "i"},
    ],
    "summary": "fine",
})


def _data(tmp_path, n=5, **extra):
    rows = [{"item_id": f"q{i}", "prompt": f"question {i}?", "response": f"answer {i}", **extra} for i in range(n)]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cli(*args, env_extra=None, timeout=120):
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _run_args(srv, tmp_path, data, *more):
    return ["run", "--rubric", "direct_score", "--data", str(data), "--model", "openai/stub",
            "--api-base", srv.base_url, "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"),
            *more]


def test_run_prints_one_exact_json_line_and_writes_the_table(tmp_path):
    data = _data(tmp_path)
    with StubServer(lambda b: GOOD) as srv:
        p = _cli(*_run_args(srv, tmp_path, data))
        assert p.returncode == 0, p.stderr
        lines = p.stdout.strip().splitlines()
        assert len(lines) == 1
        summary = json.loads(lines[0])
        assert set(summary) == {"items", "judgments", "ok", "unscored", "api_calls", "cache_hits", "retries",
                                "cost_usd", "wall_s", "out"}
        assert summary["items"] == 5 and summary["judgments"] == 15 and summary["ok"] == 15
        assert summary["api_calls"] == 5 == srv.count and summary["cache_hits"] == 0 and summary["retries"] == 0
        assert summary["cost_usd"] is None  # the stub model has no known price: unknown, not 0
        t = judgments.load(tmp_path / "out" / "judgments.parquet")
        assert len(t) == 15 and set(t["criterion"]) == {"factual_accuracy", "instruction_following", "overall"}
        overall = t[t["criterion"] == "overall"]["score"]
        assert overall.tolist() == pytest.approx([0.6 * 4 + 0.4 * 3] * 5)
        pd.testing.assert_frame_equal(t, judgments.load(tmp_path / "out" / "judgments.jsonl"))
        again = json.loads(_cli(*_run_args(srv, tmp_path, data)).stdout)
        assert again["api_calls"] == 0 and again["cache_hits"] == 5 and srv.count == 5


def _one_sentence_error(p, *needles):
    assert p.returncode != 0
    assert "Traceback" not in p.stderr, p.stderr
    err = [ln for ln in p.stderr.splitlines() if ln.startswith("error:")]
    assert len(err) == 1, p.stderr
    for n in needles:
        assert n in err[0], err[0]


def test_unknown_rubric(tmp_path):
    p = _cli("run", "--rubric", "no_such_rubric", "--data", str(_data(tmp_path)), "--out", str(tmp_path / "o"))
    _one_sentence_error(p, "no_such_rubric")


def test_missing_field_names_item_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"item_id": "x1", "prompt": "p", "response": "r"}\n{"item_id": "x2", "prompt": "p"}\n')
    with StubServer(lambda b: GOOD) as srv:
        p = _cli(*_run_args(srv, tmp_path, path))
        assert srv.count == 0
    _one_sentence_error(p, "'x2'", "'response'")


def test_unwritable_out(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    with StubServer(lambda b: GOOD) as srv:
        args = _run_args(srv, tmp_path, _data(tmp_path))
        args[args.index("--out") + 1] = str(blocker / "sub")
        p = _cli(*args)
        assert srv.count == 0
    _one_sentence_error(p, "output folder", "sub")


def test_unset_api_key_env(tmp_path):
    with StubServer(lambda b: GOOD) as srv:
        p = _cli(*_run_args(srv, tmp_path, _data(tmp_path), "--api-key-env", "JUDGELAB_TEST_UNSET_KEY"))
    _one_sentence_error(p, "JUDGELAB_TEST_UNSET_KEY")


def test_bad_model_name(tmp_path):
    p = _cli("run", "--rubric", "direct_score", "--data", str(_data(tmp_path)), "--model", "nonexistentprovider/xyz",
             "--out", str(tmp_path / "o"), "--no-cache")
    _one_sentence_error(p, "nonexistentprovider/xyz")
    # nothing lost: every item is in the saved table as an unscored row with a reason
    t = judgments.load(tmp_path / "o" / "judgments.parquet")
    assert len(t) == 15 and (t["status"] == "api_error").all() and t["unscored_reason"].notna().all()


def test_unreachable_api_base(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens on this port now
    p = _cli("run", "--rubric", "direct_score", "--data", str(_data(tmp_path, n=2)), "--model", "openai/stub",
             "--api-base", f"http://127.0.0.1:{port}/v1", "--out", str(tmp_path / "o"), "--no-cache",
             "--max-retries", "1")
    _one_sentence_error(p, f"127.0.0.1:{port}")


def test_bad_api_key(tmp_path):
    body = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    with StubServer(lambda b: StubResponse(status=401, body=body)) as srv:
        p = _cli(*_run_args(srv, tmp_path, _data(tmp_path), "--api-key-env", "PLANTED"),
                 env_extra={"PLANTED": "sk-planted-cli-secret"})
    _one_sentence_error(p, "authentication")
    assert "sk-planted-cli-secret" not in p.stderr + p.stdout


def test_dry_run_calls_nothing(tmp_path):
    with StubServer(lambda b: GOOD) as srv:
        p = _cli(*_run_args(srv, tmp_path, _data(tmp_path), "--dry-run"))
        assert srv.count == 0
    est = json.loads(p.stdout)
    assert est["requests"] == 5 and est["estimated_prompt_tokens"] > 0


def test_rubrics_list_and_show():
    p = _cli("rubrics", "list")
    assert p.returncode == 0 and "direct_score" in p.stdout.split()
    p = _cli("rubrics", "show", "direct_score")
    assert p.returncode == 0 and "Factual Accuracy" in p.stdout


def test_run_report_then_report_command_from_the_run_folder(tmp_path):
    """`run --report` writes report.html beside the table; `judgelab report RUN_DIR` writes it again from the
    folder alone (run.json names the rubric and the items), from another working directory."""
    data = _data(tmp_path, n=3)
    with StubServer(lambda b: GOOD) as srv:
        p = _cli(*_run_args(srv, tmp_path, data, "--report"))
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    first = (tmp_path / "out" / "report.html").read_text()
    assert summary["report"] == str(tmp_path / "out" / "report.html")
    assert "3 items; 9 judgment rows (9 ok, 0 unscored)" in first
    assert "Factual Accuracy" in first and "not reproduced" not in first  # every prompt rendered from the rubric
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = subprocess.run([sys.executable, "-m", "judgelab.cli", "report", str(tmp_path / "out"), "--out",
                            str(tmp_path / "again.html")], capture_output=True, text=True, cwd=elsewhere,
                           env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}, timeout=120)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["report"] == str(tmp_path / "again.html")
    assert "Factual Accuracy" in (tmp_path / "again.html").read_text()
    missing = _cli("report", str(tmp_path / "nothing-here"))
    _one_sentence_error(missing, "nothing-here")


def test_help_lists_every_command_with_one_line():
    from judgelab.cli import app, rubrics_app

    p = _cli("--help", env_extra={"COLUMNS": "200"})
    assert p.returncode == 0
    commands = [c.name or c.callback.__name__ for c in app.registered_commands] + ["rubrics"]
    assert {"run", "probe", "demo", "report", "serve", "reproduce", "rubrics"} <= set(commands)
    for name in commands:
        line = next((ln for ln in p.stdout.splitlines() if ln.strip("│ ").startswith(name + " ")), None)
        assert line is not None, f"{name} missing from --help:\n{p.stdout}"
        assert len(line.strip("│ ")[len(name):].strip()) > 20, line  # a one-line description, not a bare name
    assert rubrics_app.info.help


def _main_then(argv: list[str], *after: str) -> list[str]:
    """Run judgelab.cli.main() with ``argv`` in a fresh interpreter, then print each expression in ``after``."""
    code = (f"import gc, sys\nsys.argv = ['judgelab', *{argv!r}]\nfrom judgelab.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n" + "".join(f"print({e})\n" for e in after))
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-len(after):]


def test_run_preloads_the_engine_with_its_imports_frozen_and_help_stays_light(tmp_path):
    # `judgelab run` imports the engine before parsing, with the collector off, then freezes those objects and
    # turns the collector back on; `run --help` must not pay for litellm's import
    missing = str(tmp_path / "missing.jsonl")
    ran = _main_then(["run", "--rubric", "direct_score", "--data", missing, "--dry-run"],
                     "'litellm' in sys.modules", "gc.isenabled()", "gc.get_freeze_count() > 100_000")
    assert ran == ["True", "True", "True"]
    helped = _main_then(["run", "--help"], "'litellm' in sys.modules", "gc.isenabled()")
    assert helped == ["False", "True"]
