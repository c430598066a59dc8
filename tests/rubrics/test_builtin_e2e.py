"""Every built-in rubric end to end: `judgelab run` on the embedded judge with the example file in data/examples.

SmolLM2-135M is far too small to follow these rubrics well; the point is the plumbing: every
item of the file ends as scored rows or as unscored rows carrying a reason, never lost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from judgelab import judgments
from judgelab.rubrics import load_rubric

pytestmark = pytest.mark.local_model
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "data" / "examples"

# (rubric, extra CLI flags, items used): fewer items where one item already means 4-5 calls; the swap
# through the CLI once (pairwise): chess_commentary's ~1,950-token prompt, asked and re-asked, costs ~45 s a
# request here, and unified_judge's 512-token JSON answers ~35 s an item
CASES = [
    ("direct_score", [], 2),
    ("pairwise", ["--swap"], 1),
    ("chess_commentary", [], 1),
    ("unified_judge", [], 1),
    ("reference_gold", [], 2),
    ("editorial_summary", [], 1),
]


@pytest.mark.parametrize(("rubric", "extra", "n_items"), CASES, ids=[c[0] for c in CASES])
def test_builtin_rubric_runs_on_the_embedded_judge(rubric, extra, n_items, tmp_path):
    items = pd.read_json(EXAMPLES / f"{rubric}.jsonl", lines=True).head(n_items)
    data = tmp_path / "items.jsonl"
    items.to_json(data, orient="records", lines=True)
    out = tmp_path / "out"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    p = subprocess.run(
        [sys.executable, "-m", "judgelab.cli", "run", "--rubric", rubric, "--data", str(data), "--model",
         "local/smollm2", "--out", str(out), "--no-cache", "--max-tokens", "200", *extra],
        capture_output=True, text=True, env=env, timeout=900,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    summary = json.loads(p.stdout.strip().splitlines()[-1])
    table = judgments.load(out / "judgments.parquet")
    assert summary["judgments"] == len(table) and summary["items"] == len(items)
    assert summary["ok"] + summary["unscored"] == len(table)
    assert set(table["item_id"]) == set(items["item_id"].astype(str))
    # every expected row of every request is present: scored, or unscored with a reason
    rub = load_rubric(rubric)
    conditions = 2 if "--swap" in extra else 1
    expected = sum(len(r.expected_rows) for it in items.to_dict(orient="records") for r in rub.requests(it))
    assert len(table) == expected * conditions
    unscored = table["status"] != "ok"
    assert table.loc[unscored, "unscored_reason"].notna().all()
    assert table.loc[unscored, "score"].isna().all()
    assert (table["judge"] == "local/smollm2").all() and (table["cost_usd"] == 0).all()
