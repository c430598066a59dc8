"""A live judge whose every answer is unscored (the embedded 135M judge often is): the probes keep the table and
report each statistic as NaN with n = 0 and a note saying why, instead of raising and losing the run."""

from __future__ import annotations

import math

from judgelab import judgments
from judgelab.probes import position, repeats


def _unscored(item_ids, conditions, repeats_=(0,)):
    return judgments.make_table([
        dict(run_id="r", item_id=i, rubric="toy", judge="j", criterion="overall", condition=c, repeat=k,
             status=judgments.PARSE_ERROR, unscored_reason="no verdict found", raw_output="I think both are fine.")
        for i in item_ids for c in conditions for k in repeats_])


def test_position_probe_with_no_scored_pair_reports_nan_rows_with_notes():
    result = position.analyze(_unscored(["p0", "p1", "p2"], ("original", "swapped")))
    flips = result.metric("flip_rate")
    assert math.isnan(flips["estimate"]) and flips["n"] == 0 and "no scored data" in flips["note"]
    assert result.summary["estimate"].isna().all() and (result.summary["n"] == 0).all()
    assert len(result.table) == 6  # nothing lost


def test_repeats_probe_with_no_scored_sample_reports_nan_rows_with_notes():
    result = repeats.analyze(_unscored(["i0", "i1", "i2"], ("original",), repeats_=(0, 1)))
    for metric in ("ICC1", "ICC1k", "krippendorff_alpha_interval"):
        row = result.metric(metric)
        assert math.isnan(row["estimate"]) and row["n"] == 0 and "6 unscored sample(s) excluded" in row["note"]
