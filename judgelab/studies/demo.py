"""`judgelab demo`: what judgelab shows that a for-loop and a spreadsheet would not, offline, in about a minute.

Eight factual questions, each with one right and one wrong answer (the right one shown first in half
of them; written for the demo, with the right answer as the gold label: ``demo_data/position_pairs.jsonl``),
are judged by the embedded judge ``local/smollm2`` with a short pairwise rubric (``demo_data/demo_pairwise.yaml``):

1. a live judge run, every pair in the order given: the judgments table;
2. the position probe: the same pairs with the two answers swapped (the first order comes from the cache);
3. the statistic: the flip rate (pairs whose verdict changes when only the order changes) with its exact
   95% interval and n, the first-position rate with its binomial test, and the accuracy against the gold
   labels under each inconsistency policy;
4. a figure of those estimates with their intervals, and 5. the HTML report of it all.

The embedded judge is a 135M-parameter plumbing model: it runs anywhere without a key, and its verdicts are
NOT meaningful. The demo is about what judgelab measures, not about this judge.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.backends.redaction import redact
from judgelab.engine.runner import RunResult, run
from judgelab.probes import position
from judgelab.probes.result import ProbeResult
from judgelab.rubrics import load_rubric
from judgelab.viz.notebook_views import summary_line
from judgelab.viz.report import REPORT_FILE, report
from judgelab.viz.style import format_interval, format_number, format_p_value

__all__ = ["DEMO_DATA_DIR", "DEMO_ITEMS_FILE", "DEMO_MODEL", "DEMO_RUBRIC", "DEMO_RUBRIC_FILE", "DemoResult",
           "demo_items", "gold_rows", "next_commands", "run_demo"]

DEMO_DATA_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_RUBRIC_FILE = DEMO_DATA_DIR / "demo_pairwise.yaml"
DEMO_ITEMS_FILE = DEMO_DATA_DIR / "position_pairs.jsonl"
DEMO_RUBRIC = "demo_pairwise"
DEMO_MODEL = "local/smollm2"
FIGURE_FILE = "position.png"


@dataclass(frozen=True)
class DemoResult:
    """What the demo ran and wrote: the live run, the position probe (with gold labels), the files, the time."""

    run: RunResult
    probe: ProbeResult
    files: dict[str, Path]
    seconds: float


def demo_items() -> list[dict[str, Any]]:
    """The demo's eight two-answer questions (fields prompt, response_a, response_b, gold)."""
    lines = DEMO_ITEMS_FILE.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def gold_rows(items: list[dict[str, Any]], rubric: str = DEMO_RUBRIC) -> pd.DataFrame:
    """The items' gold labels as judgments rows of the judge "gold" (criterion overall, winner A or B)."""
    return judgments.make_table([
        {"run_id": "demo-gold", "item_id": it["item_id"], "rubric": rubric, "criterion": "overall", "judge": "gold",
         "condition": "original", "repeat": 0, "status": judgments.OK, "winner": it["gold"]}
        for it in items])


def next_commands(items_file: Path | str = DEMO_ITEMS_FILE) -> list[str]:
    """Three commands to try next with a real model (any litellm model; the key comes from an environment variable)."""
    real = "--model openai/gpt-4o-mini --api-key-env OPENAI_API_KEY --max-cost 0.50"
    return [f"judgelab run --rubric pairwise --data {items_file} {real} --swap --out runs/mine --report",
            f"judgelab probe position --rubric pairwise --data {items_file} {real} --out runs/position --report",
            f"judgelab probe length --rubric pairwise --data {items_file} {real} --out runs/length --report"]


def run_demo(out: str | Path, *, model: str = DEMO_MODEL, cache: bool | str | Path = True, progress: bool = True,
             echo: Callable[[str], Any] = print, **run_options: Any) -> DemoResult:
    """Run the demo, write the table, the figure and the report into ``out``, and explain each step with ``echo``.

    ``run_options`` go to :func:`judgelab.run` and the probe (e.g. ``api_base=`` for another judge)."""
    t0 = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    items = demo_items()
    rubric = load_rubric(DEMO_RUBRIC_FILE)
    embedded = model.startswith("local/")
    echo("judgelab demo: judge, probe, measure and report, offline.\n")
    if embedded:
        echo(f"The judge is {model}, the embedded SmolLM2-135M: a plumbing model that runs anywhere without a key. "
             "Its verdicts are NOT meaningful; what matters is what judgelab measures about them.\n")

    n_first = sum(it["gold"] == "A" for it in items)
    echo(f"1. A live judge run: {len(items)} questions, each with one right and one wrong answer (the right one "
         f"shown first in {n_first} of them), judged with a short pairwise rubric.")
    live = run(items, rubric, model, cache=cache, progress=progress, return_stats=True, **run_options)
    assert isinstance(live, RunResult)
    verdicts = judgments.scored(live.table[live.table["criterion"] == "overall"])
    gold = {it["item_id"]: it["gold"] for it in items}
    picked_a = int((verdicts["winner"] == "A").sum())
    right = int((verdicts["winner"] == verdicts["item_id"].map(gold)).sum())
    echo(f"   {summary_line(live.table, vars(live.stats))}")
    echo(f"   A for-loop stops here: the judge chose A in {picked_a} of {len(verdicts)} scored verdicts and was right "
         f"in {right} of {len(items)}. That looks like a mediocre judge; it does not say why.\n")

    reuse = "; the first order comes from the cache" if cache is not False else " (no cache: both orders are asked)"
    echo("2. The position probe: the same questions with the two answers swapped. A judge that reads the answers "
         f"follows the right one to the other side{reuse}.")
    probed = position(items, rubric, model, cache=cache, progress=progress, **run_options)
    probe = position.analyze(judgments.make_table(pd.concat([probed.table, gold_rows(items)], ignore_index=True)))
    probe.meta.update(model=model, rubric=rubric.name)
    flips = probe.metric("flip_rate")
    pairs = probe.details["pairs"].dropna(subset=["winner_original", "winner_swapped"])
    changed = int((pairs["winner_original"] != pairs["winner_swapped"]).sum())
    unscored = len(items) - len(pairs)
    echo(f"   {changed} of {len(pairs)} pairs changed verdict when only the order of the answers changed"
         + (f" ({unscored} pair(s) left out: an order was unscored; the table says why)." if unscored else ".") + "\n")

    first = probe.metric("first_position_rate")
    echo("3. The statistic, with its interval and n:")
    echo(f"   flip rate {format_number(flips['estimate'], decimals=2)}, exact 95% CI {format_interval(flips['ci_low'], flips['ci_high'], decimals=2)}, "
         f"n = {int(flips['n'])} pairs ({flips['method']}).")
    echo(f"   First-position rate (decisive verdicts that chose the answer shown first): "
         f"{format_number(first['estimate'], decimals=2)}, 95% CI {format_interval(first['ci_low'], first['ci_high'], decimals=2)}, "
         f"n = {int(first['n'])} verdicts, exact binomial test against 0.5: p {_p_words(first['p_value'])}.")
    for policy, words in (("first", "taking the verdict of the order shown first"),
                          ("tie", "with the swap-consistency rule (a pair whose orders disagree is a tie, never right)")):
        acc = probe.metric("accuracy", policy=policy)
        echo(f"   Accuracy against the gold labels {words}: {format_number(acc['estimate'], decimals=2)}, 95% CI "
             f"{format_interval(acc['ci_low'], acc['ci_high'], decimals=2)}, n = {int(acc['n'])}.")
    echo("   A flip rate near 1 says the verdicts follow where an answer stands, not what it says; a list of "
         "verdicts cannot show that, and with n this small the interval says how far the evidence goes.\n")

    files = _write(out, live, probe, rubric_file=DEMO_RUBRIC_FILE)
    echo(f"4. The figure: {files['figure']} (left: each position rate with its 95% interval against the 50% line; "
         "right: side A's win rate under each inconsistency policy).")
    echo(f"5. The report: {files['report']}: one self-contained page (no network) with the summary, status counts, "
         "distributions, the probe's table with intervals, and every judgment with its prompt, raw output and "
         "parsed rows; type in its search box to filter. Open it in a browser.")
    echo(f"   The judgments table: {files['table']} (and .jsonl); what ran: {files['meta']}.\n")
    if embedded:
        echo("Next, with a real model (any litellm model; the key stays in its environment variable):")
        for command in next_commands():
            echo(f"  {command}")
    seconds = time.perf_counter() - t0
    echo(f"\n(demo finished in {seconds:.0f} s)")
    return DemoResult(live, probe, files, seconds)


def _p_words(p: float) -> str:
    text = format_p_value(p)
    return text.replace("<", "< ") if text.startswith("<") else f"= {text}"


def _write(out: Path, live: RunResult, probe: ProbeResult, *, rubric_file: Path) -> dict[str, Path]:
    import matplotlib.pyplot as plt

    files = {"table": out / "judgments.parquet", "figure": out / FIGURE_FILE, "report": out / REPORT_FILE,
             "meta": out / "run.json"}
    judgments.save(probe.table, files["table"])
    judgments.save(probe.table, out / "judgments.jsonl")
    meta = {"demo": True, "model": probe.meta.get("model"), "rubric": probe.meta.get("rubric"),
            "rubric_file": str(rubric_file), "data": str(DEMO_ITEMS_FILE), "probe": probe.probe,
            "stats": vars(live.stats), "summary": json.loads(probe.summary_json())["summary"]}
    files["meta"].write_text(json.dumps(redact(json.loads(json.dumps(meta, default=str))), indent=2))
    fig = probe.plot()
    fig = getattr(fig, "figure", fig)
    fig.savefig(files["figure"], dpi=120, bbox_inches="tight")
    plt.close(fig)
    report(probe, files["report"], items=DEMO_ITEMS_FILE, rubric=rubric_file, title="judgelab demo: position probe")
    return files
