"""Coverage of the corrected-mean intervals and of the Learn-then-Test guarantee, by seeded simulation.

    python -m benchmarks.coverage_corrected                 # from the repo root; 1,000 data sets per design
    python -m benchmarks.coverage_corrected --reps 200      # quicker
    python -m benchmarks.coverage_corrected --csv coverage.csv

Every design of :data:`judgelab.studies.corrected_study.SIM_DESIGNS` is drawn ``--reps`` times
(seeded) with a known true mean; each method's interval either holds it or not
(:func:`~judgelab.studies.corrected_study.coverage_simulation`). The LTT part draws calibration sets
where the true disagreement of any threshold is known (:func:`~judgelab.studies.corrected_study.ltt_simulation`).
Prints nominal vs achieved coverage (Wilson 95% interval of the share), each method's mean width and its
width relative to classical on the same data sets.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from judgelab.studies.corrected_study import SIM_DESIGNS, coverage_simulation, ltt_simulation


def coverage_report(cov: pd.DataFrame) -> pd.DataFrame:
    """The printed columns: design, method, nominal, achieved [Wilson CI], n, refused, mean width, width / classical."""
    classical = cov[cov["estimator"] == "classical"].set_index("design")["mean_width"]
    return pd.DataFrame({
        "design": cov["design"], "method": cov["estimator"], "nominal": cov["nominal"],
        "achieved": cov["estimate"].round(3),
        "wilson_95": [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(cov["ci_low"], cov["ci_high"], strict=True)],
        "n": cov["n"], "refused": cov["n_undefined"], "mean_width": cov["mean_width"].round(4),
        "width_vs_classical": (cov["mean_width"] / cov["design"].map(classical)).round(3),
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="seeded data sets per design (and LTT draws)")
    parser.add_argument("--ci-level", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--designs", nargs="*", default=list(SIM_DESIGNS), choices=list(SIM_DESIGNS))
    parser.add_argument("--csv", help="also write the coverage rows to this CSV")
    args = parser.parse_args()

    start = time.perf_counter()
    cov = coverage_simulation(args.designs, n_sims=args.reps, ci_level=args.ci_level, seed=args.seed)
    cov_s = time.perf_counter() - start
    start = time.perf_counter()
    ltt = ltt_simulation(n_sims=args.reps, seed=args.seed)
    ltt_s = time.perf_counter() - start

    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(f"Corrected-mean intervals: {args.reps} seeded data sets per design, seed {args.seed} ({cov_s:.1f} s)")
        for design in args.designs:
            print(f"  {design}: {SIM_DESIGNS[design]}")
        print(coverage_report(cov).to_string(index=False))
        print(f"\nLearn-then-Test guarantee: {args.reps} calibration draws per setup, seed {args.seed} ({ltt_s:.1f} s)")
        print(pd.DataFrame({
            "setup": ltt["setup"], "alpha": ltt["alpha"], "delta": ltt["delta"],
            "nominal P(risk <= alpha)": ltt["nominal"], "achieved": ltt["estimate"].round(3),
            "wilson_95": [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(ltt["ci_low"], ltt["ci_high"], strict=True)],
            "n": ltt["n"], "mean share kept": ltt["mean_coverage"].round(3),
        }).to_string(index=False))
    if args.csv:
        pd.concat([cov, ltt], ignore_index=True).to_csv(args.csv, index=False)
        print(f"wrote {args.csv}")


if __name__ == "__main__":
    main()
