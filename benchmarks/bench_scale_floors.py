"""The floors under bench_scale's slowest steps: CPU time of the work each step cannot skip.

    python -m benchmarks.bench_scale_floors --texts 20000 --rows 1000000

- ``from_frame(..., parse="score")`` reads every distinct raw output with the score parser
  (``judgelab.rubrics.parse_text.parse_score``: the hypothetical and comparative phrases, fractions, stars,
  JSON fields ...); real judge outputs are all distinct, so the import's time cannot fall below one parse
  per text. Printed: CPU microseconds per text on bench_scale's rationales, and what that is for the
  three judges' texts of 10^6 and 10^7 judgment rows; then the same with the readers' exact shortcuts off
  (the plain scans every pattern made before them; the results are the same) and the ratio, from one run.
- a clustered two-stage bootstrap (``stats.spearman(..., cluster=)``) draws every row of every resample:
  10,000 resamples of a criterion's pairs is 10,000 x pairs random draws, each counted into its cell.
  Printed: CPU nanoseconds per drawn row (the block draws and the compiled count of
  ``judgelab.stats.two_stage``, one thread), and what that is for bench_scale's spearman step (4 criteria,
  1/16 of the rows each) at 10^6 and 10^7 rows, on one thread and split over two.
- the dry run's floor (rendering and counting every prompt) is ``python -m benchmarks.bench_estimate_floor``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.bench_scale import CRITERIA, ITEMS_PER_DOC, JUDGES, _rationales


def parse_floor(n_texts: int, seed: int, shortcuts: bool = True) -> float:
    """CPU seconds per distinct text of parse_score on bench_scale's rationales; ``shortcuts=False`` runs the
    readers' plain scans (``verdict_text._FAST`` and ``reply_text._FAST`` off: the reference path)."""
    from judgelab.rubrics import reply_text, verdict_text
    from judgelab.rubrics.parse_text import parse_score

    rng = np.random.default_rng(seed)
    texts = list(_rationales(rng, rng.integers(1, 6, size=n_texts).astype(float)))
    assert len(set(texts)) == n_texts
    before = verdict_text._FAST, reply_text._FAST
    verdict_text._FAST = reply_text._FAST = shortcuts
    try:
        parse_score(texts[0])  # imports and compiled patterns
        c0 = time.process_time()
        for text in texts:
            parse_score(text, (1, 5))
        return (time.process_time() - c0) / n_texts
    finally:
        verdict_text._FAST, reply_text._FAST = before


def two_stage_floor(pairs: int, resamples: int, seed: int) -> float:
    """CPU seconds per drawn row of the two-stage draws and compiled count, one thread."""
    from judgelab.stats.two_stage import Clusters, blocks, cell_counts, draw_block

    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(pairs // ITEMS_PER_DOC), ITEMS_PER_DOC)
    cells = rng.integers(0, 25, size=len(labels))
    clusters = Clusters.from_labels(labels)
    sorted_cells = cells[clusters.order].astype(np.int32)
    plan = blocks(clusters, resamples, rng)
    cell_counts(clusters, draw_block(clusters, *plan[0], "clusters_then_rows"), sorted_cells, 25, True)  # compile
    c0 = time.process_time()
    for block_seed, batch in plan:
        cell_counts(clusters, draw_block(clusters, block_seed, batch, "clusters_then_rows"), sorted_cells, 25, True)
    return (time.process_time() - c0) / (resamples * len(labels))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=1_000_000, help="judgment rows whose spearman pairs to draw")
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    per_text = parse_floor(args.texts, args.seed)
    plain = parse_floor(args.texts, args.seed, shortcuts=False)
    texts_per_row = len(JUDGES) / (len(JUDGES) + 1)  # the judges' cells of the wide file (the gold one is a number)
    print(f"parse_score, {args.texts:,} distinct ~300-character rationales: {per_text * 1e6:.0f} us CPU per text"
          f" -> from_frame(parse='score') at 10^6 rows {per_text * texts_per_row * 1e6:.0f} s, "
          f"at 10^7 rows {per_text * texts_per_row * 1e7:.0f} s (if every output had text); "
          f"the plain scans (shortcuts off) {plain * 1e6:.0f} us, {plain / per_text:.1f}x")
    pairs = args.rows // (len(CRITERIA) * (len(JUDGES) + 1))
    per_row = two_stage_floor(pairs, args.resamples, args.seed)
    draws = 10_000 * len(CRITERIA) / (len(CRITERIA) * (len(JUDGES) + 1))  # drawn rows per judgment row
    print(f"two-stage draws + compiled count, {pairs:,} pairs in clusters of {ITEMS_PER_DOC}: "
          f"{per_row * 1e9:.2f} ns CPU per drawn row -> spearman (10,000 resamples, 4 criteria) at 10^6 rows "
          f"{per_row * draws * 1e6:.0f} s, at 10^7 rows {per_row * draws * 1e7:.0f} s on one thread "
          f"({per_row * draws * 1e7 / 2:.0f} s on two)")


if __name__ == "__main__":
    main()
