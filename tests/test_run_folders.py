"""Every built-in rubric, the way a newcomer meets it: `judgelab run` (the CLI, in a subprocess) on the rubric's
example file into a run folder, then `judgelab report RUN_DIR` and `judgelab.load(RUN_DIR)` on that folder.

The judge is the loopback stub server (tests.support.openai_stub; no provider is reachable here, and the HTTP
path through litellm and the openai client is real). It answers each request with the rubric's known-good
answer (GOOD_OUTPUTS of the rubric parse tests) or, for the requests a hash of their messages picks (about one
in four), with text no parser reads. So every run folder holds scored rows, usually unscored rows too, and the
value columns a rubric never fills entirely empty (``winner`` of a scored rubric, ``score`` of a verdict-only
one): the shape that made `judgelab report` die on pandas 3 ("Converting strings to null is not implemented")
while no test rendered a report from a CLI run folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import judgelab
from judgelab import judgments
from judgelab.rubrics import list_rubrics, load_rubric
from tests.rubrics.test_rubric_judges import GOOD_OUTPUTS
from tests.support.openai_stub import StubServer

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "data" / "examples"  # the files the README's CLI examples use
UNREADABLE = "I would rather not say."


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run([sys.executable, "-m", "judgelab.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def _reply_for(rubric: str):
    def reply(body: dict) -> str:
        # a hash of the messages, not a counter: the same request gets the same answer at any concurrency
        digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()
        return UNREADABLE if digest[0] < 64 else GOOD_OUTPUTS[rubric]
    return reply


def test_every_builtin_rubric_has_a_case():
    """The cases below are `judgelab rubrics list`: a new built-in rubric without a known-good answer fails here."""
    listed = _cli("rubrics", "list")
    assert listed.returncode == 0, listed.stderr
    assert set(listed.stdout.split()) == set(list_rubrics()) == set(GOOD_OUTPUTS)


@pytest.mark.parametrize("rubric", sorted(list_rubrics()))
def test_cli_run_folder_reports_and_loads(rubric, tmp_path):
    """Invariants, for each rubric: the run exits 0 with scored rows and ok + unscored = judgments; `judgelab
    report RUN_DIR` (run from another folder) exits 0, prints one JSON line naming the page, and the page's
    summary counts the same rows; `judgelab.load(RUN_DIR)` gives the same table as the folder's Parquet and JSONL
    files, and saving and loading it again changes nothing (dtypes included)."""
    swap = ["--swap"] if load_rubric(rubric).mode == "pairwise" else []
    out = tmp_path / "run"
    with StubServer(_reply_for(rubric)) as srv:
        ran = _cli("run", "--rubric", rubric, "--data", str(EXAMPLES / f"{rubric}.jsonl"), "--model", "openai/stub",
                   "--api-base", srv.base_url, "--out", str(out), "--cache", str(tmp_path / "cache.sqlite"), *swap)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr[-3000:]
    summary = json.loads(ran.stdout.strip().splitlines()[-1])
    assert summary["ok"] >= 1 and summary["ok"] + summary["unscored"] == summary["judgments"]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    reported = _cli("report", str(out), cwd=elsewhere)
    assert reported.returncode == 0 and "Traceback" not in reported.stderr, reported.stderr[-3000:]
    lines = reported.stdout.strip().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["report"] == str(out / "report.html")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert (f"{summary['judgments']:,} judgment rows ({summary['ok']:,} ok, {summary['unscored']:,} unscored)"
            in page)

    table = judgelab.load(out)
    assert len(table) == summary["judgments"] and int(judgments.is_scored(table).sum()) == summary["ok"]
    pd.testing.assert_frame_equal(table, judgments.load(out / "judgments.parquet"))
    pd.testing.assert_frame_equal(table, judgments.load(out / "judgments.jsonl"))
    judgelab.save(table, tmp_path / "again.parquet")
    pd.testing.assert_frame_equal(table, judgelab.load(tmp_path / "again.parquet"))


def test_load_of_a_folder_without_a_table_is_one_sentence(tmp_path):
    """A folder with neither judgments.parquet nor judgments.jsonl: JudgmentsFileNotFoundError naming it."""
    (tmp_path / "run.json").write_text("{}")
    with pytest.raises(judgments.JudgmentsFileNotFoundError, match="holds no judgments table") as err:
        judgelab.load(tmp_path)
    assert str(tmp_path) in str(err.value)
