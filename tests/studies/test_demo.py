"""The demo tells the story from the numbers it measured: scripted judges over real HTTP (a judge that always
picks the answer shown first, and one that reads the answers) must give different, exactly known narratives;
the real embedded-judge demo runs through the CLI (slow, local_model)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from judgelab import judgments
from judgelab.rubrics import load_rubric
from judgelab.studies.demo import DEMO_RUBRIC_FILE, demo_items, gold_rows, next_commands, run_demo
from tests.support.openai_stub import StubServer

MODEL = "openai/demo-stub"


def _answer(winner: str) -> str:
    return json.dumps({"comparison": [{"criterion": "correctness", "winner": winner}], "winner": winner,
                       "confidence": 0.9})


def first_shown(body: dict) -> str:
    return _answer("A")


def reader(body: dict) -> str:
    """Knows the right answers and finds which side shows the right one."""
    right = {it["prompt"]: it[f"response_{it['gold'].lower()}"] for it in demo_items()}
    prompt = body["messages"][-1]["content"]
    question = next(q for q in right if q in prompt)
    shown_a = prompt[prompt.index("## Response A"):prompt.index("## Response B")]
    return _answer("A" if right[question] in shown_a else "B")


def _demo(judge, tmp_path: Path) -> tuple[list[str], object, int]:
    lines: list[str] = []
    with StubServer(judge) as srv:
        result = run_demo(tmp_path / "out", model=MODEL, api_base=srv.base_url, api_key="sk-test-key",
                          cache=tmp_path / "cache.sqlite", progress=False, echo=lines.append)
        calls = srv.count
    return lines, result, calls


def test_demo_items_and_rubric_are_shipped_and_balanced() -> None:
    items = demo_items()
    assert len(items) == 8 and len({it["item_id"] for it in items}) == 8
    assert sum(it["gold"] == "A" for it in items) == 4  # the right answer shown first in half of them
    rubric = load_rubric(DEMO_RUBRIC_FILE)
    assert rubric.mode == "pairwise" and [c.name for c in rubric.spec.criteria] == ["correctness"]
    assert all(len(rubric.requests(it)) == 1 for it in items)
    gold = gold_rows(items)
    assert set(gold["judge"]) == {"gold"} and gold["winner"].tolist() == [it["gold"] for it in items]
    commands = next_commands()
    assert len(commands) == 3 and all("--model openai/gpt-4o-mini" in c and "--max-cost" in c for c in commands)


def test_a_judge_that_follows_position_flips_every_pair(tmp_path: Path) -> None:
    lines, result, calls = _demo(first_shown, tmp_path)
    text = "\n".join(lines)
    assert calls == 16  # 8 live calls; the probe asks only the swapped order (the first order is cached)
    assert "chose A in 8 of 8 scored verdicts and was right in 4 of 8" in text
    assert "8 of 8 pairs changed verdict" in text
    low, high = sps.binomtest(8, 8).proportion_ci(confidence_level=0.95, method="exact")
    assert f"flip rate 1.00, exact 95% CI [{low:.2f}, {high:.2f}], n = 8 pairs" in text
    assert re.search(r"First-position rate .*: 1\.00, 95% CI \[0\.79, 1\.00\], n = 16 verdicts, .* p < 0\.001", text)
    assert "taking the verdict of the order shown first: 0.50" in text
    assert "NOT meaningful" not in text  # said only of the embedded judge
    assert result.probe.metric("flip_rate")["estimate"] == 1.0
    files = result.files
    assert all(p.exists() for p in files.values())
    table = judgments.load(files["table"])
    assert len(table) == 8 * 2 * 2 + 8  # 8 items x 2 orders x (correctness, overall) + 8 gold rows
    report = files["report"].read_text()
    assert "Probe: position" in report and report.count("class='judgment'") == 24
    assert "not reproduced" not in report  # every prompt rendered from the shipped rubric and items
    meta = json.loads(files["meta"].read_text())
    assert meta["probe"] == "position" and "sk-test" not in files["meta"].read_text()


def test_a_judge_that_reads_the_answers_does_not_flip(tmp_path: Path) -> None:
    lines, result, _ = _demo(reader, tmp_path)
    text = "\n".join(lines)
    assert "chose A in 4 of 8 scored verdicts and was right in 8 of 8" in text
    assert "0 of 8 pairs changed verdict" in text
    low, high = sps.binomtest(0, 8).proportion_ci(confidence_level=0.95, method="exact")
    assert f"flip rate 0.00, exact 95% CI [{low:.2f}, {high:.2f}], n = 8 pairs" in text
    assert "swap-consistency rule (a pair whose orders disagree is a tie, never right): 1.00" in text


@pytest.mark.slow
@pytest.mark.local_model
def test_the_demo_on_the_embedded_judge_through_the_cli(tmp_path: Path) -> None:
    from judgelab.cli import app

    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--cache", str(tmp_path / "cache.sqlite")])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "local/smollm2" in text and "NOT meaningful" in text
    assert re.search(r"flip rate \d\.\d\d, exact 95% CI \[\d\.\d\d, \d\.\d\d\], n = \d+ pairs", text)
    assert text.count("judgelab ") >= 3 and "--model openai/gpt-4o-mini" in text  # the next three commands
    summary = json.loads(text.strip().splitlines()[-1])
    assert summary["items"] == 8 and summary["report"] == str(out / "report.html")
    for name in ("judgments.parquet", "judgments.jsonl", "run.json", "position.png", "report.html"):
        assert (out / name).stat().st_size > 0, name
