"""`judgelab probe <name>` end to end: builtin rubric, items file, a scripted judge over real HTTP,
and ONE JSON line on stdout. (tests/support/openai_stub.py stands in for a provider.)"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from judgelab.cli import app
from tests.probes import scripted as s


def first_shown_wins(body):
    """The builtin pairwise rubric's JSON, always for the response shown first, confidence 0.9."""
    comparison = [{"criterion": c, "analysis": "compared", "winner": "A"} for c in ("helpfulness", "accuracy")]
    return json.dumps({"comparison": comparison, "reasoning": "first is better", "winner": "A", "confidence": 0.9})


def test_cli_position_probe_prints_one_json_line(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("STUB_KEY", "sk-test")
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"item_id": f"i{k}", "prompt": f"Question {k}?", "response_a": f"Answer {k}.",
                                        "response_b": f"Reply {k}."}) + "\n" for k in range(8)))
    with s.serve(first_shown_wins) as srv:
        result = CliRunner().invoke(app, ["probe", "position", "--rubric", "pairwise", "--data", str(data),
                                          "--model", s.MODEL, "--api-base", srv.base_url, "--api-key-env", "STUB_KEY"])
        assert srv.count == 16  # both orders of 8 items
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    payload = json.loads(lines[0])
    stats = {(r["metric"], r["policy"]): r for r in payload["summary"]}
    first = next(r for (name, _), r in stats.items() if name == "first_position_rate")
    assert first["estimate"] == 1.0 and first["n"] == 16 and first["p_value"] < 0.001
    # balanced position calibration: 0.95 for A in one order, 0.05 in the other -> every item a TIE
    assert stats[("win_rate_A", "average")]["estimate"] == 0.5
    # seed 002's swap rule: every pair disagrees, so every item is a TIE at confidence 0.5
    assert stats[("win_rate_A", "tie")]["estimate"] == 0.5
    assert stats[("swap_rule_confidence", "tie")]["estimate"] == 0.5
