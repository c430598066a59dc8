"""Benchmark: import, statistics, probes, reports and dry runs on judgments tables of 10^4 ... 10^7 rows.

    python -m benchmarks.bench_scale                              # sizes 1e4 1e5, every step
    python -m benchmarks.bench_scale --sizes 1e4 1e5 1e6 --steps krippendorff spearman
    python -m benchmarks.bench_scale --sizes 1e7 --steps spearman kappa --workdir /tmp/bench_scale

Rows are judgment rows. The synthetic study (seeded, ``--seed``): 3 judges ("judge_a/b/c") and a human gold
rater ("human") score every item on 4 criteria on a 1-5 scale (16 rows per item); items come 10 to a document
(the ``doc_id`` column, the cluster of every clustered statistic). Scores share an item-level quality, so
judges agree with the human imperfectly (Spearman ~0.6). Each judge row carries a ~300-character raw output
(a rationale ending "Score: k", every one distinct) up to ``--text-max`` rows (default 10^6); above it ``raw_output`` is left
empty and the wide file holds the scores as numbers (said in the printout). The pairwise study for the
position probe has one judge in both orders plus a gold label per item (3 rows per item); the dry run
estimates ``direct_score`` over ``size`` items (a prompt and a ~300-character response each).

Steps (each in a fresh subprocess; peak RSS is the child's, from ``os.wait4``, and includes reading its
input, which is not timed; the inputs are written by another child, since a child's peak RSS counts the memory
of the process it was started from):

- ``from_frame_parquet`` / ``from_frame_csv``: ``from_frame`` on the wide file (one row per item x criterion,
  a column per judge, the human as ``gold=``; ``parse="score"`` while the cells hold text);
- ``save`` / ``load``: ``judgelab.save`` / ``judgelab.load`` of the table (Parquet);
- ``spearman`` / ``kappa``: judge_a vs human per criterion (``by="criterion"``), clustered by document, 10,000
  resamples (``--resamples``); kappa with quadratic weights;
- ``krippendorff``: ordinal alpha of the 3 judges per criterion, 10,000 resamples;
- ``icc``: the 3 judges per criterion; ``corrected_mean``: PPI++ of judge_a with the human labels of 10% of
  the items, per criterion;
- ``position``: ``probes.position.analyze`` on the pairwise table, 10,000 resamples;
- ``report``: ``judgelab.report(table)`` (HTML);
- ``estimate``: ``judgelab.estimate`` (dry run, no calls, no cache) of ``direct_score`` with gpt-4o-mini, up to
  ``--estimate-max`` items (default 10^6): it renders and counts every prompt exactly (the floor,
  ``python -m benchmarks.bench_estimate_floor``), so above that size the printout gives the CPU time per item
  measured at the largest size and what it would come to, marked as an extrapolation.

Printed: per step and size the wall time, the CPU time of the step (every thread; on a loaded machine it
moves less than the wall time) and peak RSS, the growth exponent of the wall time fitted (least
squares on log-log) over the sizes >= 10^5, the 1-minute load average before each step, and the machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

JUDGES = ("judge_a", "judge_b", "judge_c")
GOLD = "human"
CRITERIA = ("coherence", "consistency", "fluency", "relevance")
ITEMS_PER_DOC = 10
STEPS = ("from_frame_parquet", "from_frame_csv", "save", "load", "spearman", "kappa", "krippendorff", "icc",
         "corrected_mean", "position", "report", "estimate")
_WORDS = ("the summary keeps the main claim but omits a detail the source stresses and its sentences read well "
          "although one transition is abrupt and a name is repeated where a pronoun would do").split()


# ---------------------------------------------------------------------------------------------- data


def _rationales(rng: np.random.Generator, scores: np.ndarray) -> np.ndarray:
    """~300-character rationales ending 'Score: k', every one distinct (as real judge outputs are: an import
    that parses each distinct text once gains nothing here): one of a few hundred stems, a numbered remark
    of its own, then the score."""
    stems = np.array([" ".join(rng.choice(_WORDS, size=45)).capitalize()[:260] + "." for _ in range(256)],
                     dtype=object)
    pick = rng.integers(0, len(stems), size=len(scores))
    remark = np.char.add(" See remark ", np.arange(len(scores)).astype(str)).astype(object)
    ends = np.array([f". Score: {k}" for k in range(1, 6)], dtype=object)
    return stems[pick] + remark + ends[scores.astype(np.int64) - 1]


def _scores(rng: np.random.Generator, n_items: int) -> dict[str, np.ndarray]:
    """(items x criteria) scores 1..5 per rater, sharing an item-level quality."""
    quality = rng.normal(0, 1, size=(n_items, 1)) + rng.normal(0, 0.5, size=(n_items, len(CRITERIA)))
    out = {}
    for name, noise in ((GOLD, 0.5), *((j, 0.8) for j in JUDGES)):
        raw = quality + rng.normal(0, noise, size=quality.shape) + (0.3 if name == "judge_b" else 0.0)
        out[name] = np.clip(np.round(3 + 1.1 * raw), 1, 5)
    return out


def _ids(prefix: str, n: int) -> np.ndarray:
    return np.char.add(prefix, np.arange(n).astype(str)).astype(object)


def make_study(size: int, seed: int, text_max: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(wide frame for from_frame, judgments table) of ``size`` judgment rows (16 per item)."""
    from judgelab.judgments import SCHEMA

    rng = np.random.default_rng(seed)
    n_items = max(ITEMS_PER_DOC, size // (len(CRITERIA) * (len(JUDGES) + 1)))
    scores = _scores(rng, n_items)
    text = size <= text_max
    item = _ids("item", n_items)
    doc = _ids("doc", (n_items + ITEMS_PER_DOC - 1) // ITEMS_PER_DOC)[np.arange(n_items) // ITEMS_PER_DOC]
    n_c = len(CRITERIA)
    wide = pd.DataFrame({"item_id": np.repeat(item, n_c), "doc_id": np.repeat(doc, n_c),
                         "criterion": np.tile(np.array(CRITERIA, dtype=object), n_items)})
    raw = {}
    for rater in (*JUDGES, GOLD):
        flat = scores[rater].ravel()
        if rater != GOLD and text:
            raw[rater] = _rationales(rng, flat)
            wide[rater] = raw[rater]
        else:
            wide[rater] = flat
    parts = []
    for rater in (*JUDGES, GOLD):
        part = wide[["item_id", "doc_id", "criterion"]].copy()
        part["judge"] = rater
        part["score"] = scores[rater].ravel()
        part["raw_output"] = raw.get(rater)
        parts.append(part)
    table = pd.concat(parts, ignore_index=True)
    table["run_id"], table["rubric"], table["condition"], table["status"] = "bench", "imported", "original", "ok"
    for col, dtype in SCHEMA.items():
        if col not in table:
            table[col] = pd.Series(index=table.index, dtype=dtype)
    table = table[[*SCHEMA, "doc_id"]]
    for col, dtype in SCHEMA.items():
        table[col] = table[col].astype(dtype)
    table["doc_id"] = table["doc_id"].astype("string")
    return wide, table


def make_pairs(size: int, seed: int) -> pd.DataFrame:
    """Pairwise table: one judge in both orders plus gold, ``size`` rows (3 per item), ~20% flips."""
    from judgelab.judgments import SCHEMA

    rng = np.random.default_rng(seed + 1)
    n_items = max(2, size // 3)
    labels = np.array(["A", "B", "TIE"], dtype=object)
    gold = rng.choice(3, size=n_items, p=[0.45, 0.45, 0.10])
    original = np.where(rng.random(n_items) < 0.75, gold, rng.choice(3, size=n_items))
    first_bias = rng.random(n_items) < 0.2  # the swapped order picks the candidate shown first: B in original labels
    swapped = np.where(first_bias, 1, np.where(rng.random(n_items) < 0.8, original, rng.choice(3, size=n_items)))
    item = _ids("pair", n_items)
    frame = pd.DataFrame({
        "item_id": np.concatenate([item, item, item]),
        "judge": np.repeat(np.array(["judge_a", "judge_a", "gold"], dtype=object), n_items),
        "condition": np.repeat(np.array(["original", "swapped", "original"], dtype=object), n_items),
        "winner": labels[np.concatenate([original, swapped, gold])],
    })
    frame["run_id"], frame["rubric"], frame["criterion"], frame["status"] = "bench", "pairwise", "overall", "ok"
    for col, dtype in SCHEMA.items():
        if col not in frame:
            frame[col] = pd.Series(index=frame.index, dtype=dtype)
    frame = frame[list(SCHEMA)]
    for col, dtype in SCHEMA.items():
        frame[col] = frame[col].astype(dtype)
    return frame


def make_items(size: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed + 2)
    responses = _rationales(rng, rng.integers(1, 6, size=size).astype(float))
    return pd.DataFrame({"item_id": _ids("q", size), "prompt": _ids("Summarise document ", size),
                         "response": responses})


def prepare(size: int, seed: int, text_max: int, folder: Path, steps: list[str]) -> None:
    """Write the inputs of ``steps`` at ``size`` into ``folder`` (skipped when present)."""
    folder.mkdir(parents=True, exist_ok=True)
    need_table = {"from_frame_parquet", "from_frame_csv", "save", "load", "spearman", "kappa", "krippendorff",
                  "icc", "corrected_mean", "report"} & set(steps)
    if need_table and not (folder / "table.parquet").is_file():
        wide, table = make_study(size, seed, text_max)
        wide.to_parquet(folder / "wide.parquet", index=False)
        if "from_frame_csv" in steps:
            wide.to_csv(folder / "wide.csv", index=False)
        table.to_parquet(folder / "table.parquet", index=False)
        del wide, table
    if "position" in steps and not (folder / "pairs.parquet").is_file():
        make_pairs(size, seed).to_parquet(folder / "pairs.parquet", index=False)
    if "estimate" in steps and not (folder / "items.parquet").is_file():
        make_items(size, seed).to_parquet(folder / "items.parquet", index=False)
    if "from_frame_csv" in steps and not (folder / "wide.csv").is_file():
        pd.read_parquet(folder / "wide.parquet").to_csv(folder / "wide.csv", index=False)


# ---------------------------------------------------------------------------------------------- steps


def run_step(step: str, folder: Path, size: int, text_max: int, resamples: int) -> tuple[float, float]:
    """Read the step's input (untimed), run the step, return its wall time and CPU time (every thread)."""
    clock = _Clock()
    _step(step, folder, size, text_max, resamples, clock)
    return clock.wall, clock.cpu


class _Clock:
    """Wall and process CPU time from the last start() to the step's end (CPU time is less sensitive to a
    loaded machine than wall time: compare it across runs made under different loads)."""

    def __init__(self) -> None:
        self.start()

    def start(self) -> float:
        self.t0, self.c0 = time.perf_counter(), time.process_time()
        return self.t0

    def stop(self) -> float:
        self.wall, self.cpu = time.perf_counter() - self.t0, time.process_time() - self.c0
        return self.wall


def _step(step: str, folder: Path, size: int, text_max: int, resamples: int, clock: _Clock) -> float:
    import judgelab
    from judgelab import stats

    text = size <= text_max
    if step.startswith("from_frame"):
        path = folder / ("wide.parquet" if step.endswith("parquet") else "wide.csv")
        kw = dict(item_id="item_id", judges=list(JUDGES), gold=GOLD, gold_judge=GOLD, kind="score",
                  criterion="criterion", cluster="doc_id", scale=(1, 5))
        if text:
            kw["parse"] = "score"
        clock.start()
        judgelab.from_frame(path, **kw)
        return clock.stop()
    if step == "position":
        from judgelab.probes import position

        pairs = pd.read_parquet(folder / "pairs.parquet")
        clock.start()
        position.analyze(pairs, n_resamples=resamples)
        return clock.stop()
    if step == "estimate":
        items = pd.read_parquet(folder / "items.parquet")
        clock.start()
        judgelab.estimate(items, "direct_score", "gpt-4o-mini", cache=False)
        return clock.stop()
    table = pd.read_parquet(folder / "table.parquet")
    clock.start()
    if step == "save":
        judgelab.save(table, folder / "saved.parquet")
    elif step == "load":
        if not (folder / "saved.parquet").is_file():
            judgelab.save(table, folder / "saved.parquet")
        del table
        clock.start()
        judgelab.load(folder / "saved.parquet")
    elif step == "spearman":
        stats.spearman("judge_a", GOLD, data=table, by="criterion", cluster="doc_id", n_resamples=resamples)
    elif step == "kappa":
        stats.cohen_kappa("judge_a", GOLD, data=table, by="criterion", cluster="doc_id", weights="quadratic",
                          n_resamples=resamples)
    elif step == "krippendorff":
        stats.krippendorff_alpha(data=table, raters=list(JUDGES), level="ordinal", by="criterion",
                                 n_resamples=resamples)
    elif step == "icc":
        stats.icc(data=table, raters=list(JUDGES), by="criterion")
    elif step == "corrected_mean":
        items = table["item_id"].drop_duplicates()
        labelled = set(items.sample(frac=0.1, random_state=0))
        keep = (table["judge"] != GOLD) | table["item_id"].isin(labelled)
        clock.start()
        stats.corrected_mean(table[keep & table["judge"].isin(["judge_a", GOLD])], judge="judge_a", gold=GOLD,
                             by="criterion")
    elif step == "report":
        judgelab.report(table, folder / "report.html")
    else:
        raise SystemExit(f"unknown step {step!r}")
    return clock.stop()


def _child(args: argparse.Namespace) -> None:
    wall, cpu = run_step(args.child, Path(args.workdir) / f"n{args.size}", args.size, args.text_max, args.resamples)
    print(json.dumps({"wall": wall, "cpu": cpu}))


def _measure(step: str, size: int, args: argparse.Namespace) -> dict[str, float | str]:
    cmd = [sys.executable, "-m", "benchmarks.bench_scale", "--child", step, "--size", str(size), "--workdir",
           args.workdir, "--text-max", str(args.text_max), "--resamples", str(args.resamples)]
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=Path(__file__).resolve().parents[1])
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except KeyboardInterrupt:
            proc.kill()
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, errors = out.read().decode(), err.read().decode()
    peak_gb = usage.ru_maxrss * 1024 / 1e9  # ru_maxrss is in KiB on Linux
    if proc.returncode != 0:
        last = errors.strip().splitlines()[-1] if errors.strip() else f"exit {proc.returncode}"
        return {"wall": math.nan, "cpu": math.nan, "peak_gb": peak_gb, "load": load, "error": last[:120]}
    times = json.loads(text.strip().splitlines()[-1])
    return {"wall": times["wall"], "cpu": times["cpu"], "peak_gb": peak_gb, "load": load, "error": ""}


def _not_run(done: dict[int, dict[str, float | str]], size: int, largest: int) -> dict[str, float | str]:
    """A step skipped above --estimate-max: NaN times, and what its CPU time per item at the largest size
    measured would come to (an extrapolation, printed as one)."""
    measured = [s for s, r in done.items() if math.isfinite(float(r["cpu"]))]
    why = f"above --estimate-max {largest:,}"
    if measured:
        top = max(measured)
        per_item = float(done[top]["cpu"]) / top
        why += (f"; at {per_item * 1e6:.0f} us CPU per item (measured at {top:,}) it would take about "
                f"{per_item * size:,.0f} s (extrapolated, not measured)")
    return {"wall": math.nan, "cpu": math.nan, "peak_gb": math.nan, "load": os.getloadavg()[0], "error": why}


def _cell(r: dict[str, float | str]) -> str:
    if str(r["error"]).startswith("above --estimate-max"):
        return "not run (see above)"
    if r["error"]:
        return f"failed ({r['error']})"
    return f"{r['wall']:.2f} s (cpu {r['cpu']:.2f} s) / {r['peak_gb']:.2f} GB"


def growth_exponent(sizes: list[int], walls: list[float]) -> float:
    """Slope of log(wall) on log(size) over sizes >= 10^5 (NaN with fewer than two)."""
    pts = [(math.log(s), math.log(w)) for s, w in zip(sizes, walls, strict=True)
           if s >= 100_000 and math.isfinite(w) and w > 0]
    if len(pts) < 2:
        return math.nan
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e4, 1e5], help="judgment rows, e.g. 1e4 1e6")
    parser.add_argument("--steps", nargs="+", default=list(STEPS), choices=STEPS)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--text-max", type=int, default=1_000_000, help="largest size with raw-output text")
    parser.add_argument("--estimate-max", type=int, default=1_000_000,
                        help="largest size the dry run is run at (it renders and counts every prompt: see the note)")
    parser.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "judgelab_bench_scale"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args)
        return
    if args.prepare:
        prepare(args.size, args.seed, args.text_max, Path(args.workdir) / f"n{args.size}", args.steps)
        return
    sizes = sorted({int(s) for s in args.sizes})
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{args.resamples} resamples; raw-output text up to {args.text_max:,} rows (none above)")
    results: dict[str, dict[int, dict[str, float | str]]] = {s: {} for s in args.steps}
    for size in sizes:
        t0 = time.perf_counter()
        # the inputs are written by a child of their own: a child's peak RSS counts the memory of the process
        # it was forked from, so the measuring process must never hold a large table
        subprocess.run([sys.executable, "-m", "benchmarks.bench_scale", "--prepare", "--size", str(size), "--seed",
                        str(args.seed), "--text-max", str(args.text_max), "--workdir", args.workdir,
                        "--steps", *args.steps], check=True, cwd=Path(__file__).resolve().parents[1])
        print(f"inputs for {size:,} rows ready ({time.perf_counter() - t0:.1f} s)", flush=True)
        for step in args.steps:
            if step == "estimate" and size > args.estimate_max:
                results[step][size] = _not_run(results[step], size, args.estimate_max)
                print(f"  {step:<20} {size:>10,}  not run: {results[step][size]['error']}", flush=True)
                continue
            r = results[step][size] = _measure(step, size, args)
            print(f"  {step:<20} {size:>10,}  {r['wall']:8.2f} s  cpu {r['cpu']:8.2f} s  {r['peak_gb']:6.2f} GB  "
                  f"load {r['load']:.2f}"
                  + (f"  FAILED: {r['error']}" if r["error"] else ""), flush=True)
    head = " | ".join(f"{s:.0e}".replace("e+0", "e") for s in sizes)
    print(f"\n| step (wall (cpu) / peak RSS) | {head} | growth (>= 1e5) |")
    print("|---|" + "---|" * len(sizes) + "---|")
    for step in args.steps:
        cells = [_cell(results[step][s]) for s in sizes]
        exp = growth_exponent(sizes, [float(results[step][s]["wall"]) for s in sizes])
        print(f"| {step} | " + " | ".join(cells) + f" | {'n/a' if math.isnan(exp) else f'n^{exp:.2f}'} |")
    print(f"\nload average now: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
