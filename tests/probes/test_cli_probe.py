"""`judgelab probe <name>` end to end: builtin rubric, items file, a scripted judge over real HTTP,
and ONE JSON line on stdout. (tests/support/openai_stub.py stands in for a provider.)"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from judgelab import judgments
from judgelab.cli import app
from tests.probes import scripted as s


def first_shown_wins(body):
    """The builtin pairwise rubric's JSON, always for the response shown first, confidence 0.9."""
    comparison = [{"criterion": c, "analysis": "compared", "winner": "A"} for c in ("helpfulness", "accuracy")]
    return json.dumps({"comparison": comparison, "reasoning": "first is better", "winner": "A", "confidence": 0.9})


def test_cli_position_probe_prints_one_json_line(tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("STUB_KEY", "sk-test-key")
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"item_id": f"i{k}", "prompt": f"Question {k}?", "response_a": f"Answer {k}.",
                                        "response_b": f"Reply {k}."}) + "\n" for k in range(8)))
    with s.serve(first_shown_wins) as srv:
        result = CliRunner().invoke(app, ["probe", "position", "--rubric", "pairwise", "--data", str(data),
                                          "--model", s.MODEL, "--api-base", srv.base_url, "--api-key-env", "STUB_KEY",
                                          "--out", str(tmp_path / "out")])
        assert srv.count == 16  # both orders of 8 items
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    payload = json.loads(lines[0])
    assert payload["out"] == str(tmp_path / "out")
    saved = judgments.load(tmp_path / "out" / "judgments.parquet")
    assert len(saved) == 48 and set(saved["condition"]) == {"original", "swapped"}  # 8 items x 2 orders x 3 rows
    meta = json.loads((tmp_path / "out" / "run.json").read_text())
    assert meta["probe"] == "position" and meta["summary"] == payload["summary"] and "sk-test" not in str(meta)
    stats = {(r["metric"], r["policy"]): r for r in payload["summary"]}
    first = next(r for (name, _), r in stats.items() if name == "first_position_rate")
    assert first["estimate"] == 1.0 and first["n"] == 16 and first["p_value"] < 0.001
    # balanced position calibration: 0.95 for A in one order, 0.05 in the other -> every item a TIE
    assert stats[("win_rate_A", "average")]["estimate"] == 0.5
    # seed 002's swap rule: every pair disagrees, so every item is a TIE at confidence 0.5
    assert stats[("win_rate_A", "tie")]["estimate"] == 0.5
    assert stats[("swap_rule_confidence", "tie")]["estimate"] == 0.5


def _requests_seen(srv) -> list[dict]:
    return [r for r in srv.requests if "messages" in r]


def test_probe_takes_the_run_flags_with_the_same_meanings(tmp_path, monkeypatch):
    """--temperature, --max-tokens, --repeats, --cache/--no-cache, --max-cost and --report reach the probe's calls
    exactly as they reach `judgelab run`'s."""
    import litellm

    litellm.register_model({"openai/cli-priced-judge": {"input_cost_per_token": 1e-3, "output_cost_per_token": 1e-3,
                                                         "litellm_provider": "openai", "mode": "chat"}})
    monkeypatch.setenv("STUB_KEY", "sk-test-key")
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"item_id": f"i{k}", "prompt": f"Question {k}?", "response_a": f"Answer {k}.",
                                        "response_b": f"Reply {k}."}) + "\n" for k in range(4)))
    cache = tmp_path / "probe-cache.sqlite"

    def probe(srv, *more, model=s.MODEL, out="out"):
        return CliRunner().invoke(app, ["probe", "position", "--rubric", "pairwise", "--data", str(data), "--model",
                                        model, "--api-base", srv.base_url, "--api-key-env", "STUB_KEY", "--out",
                                        str(tmp_path / out), *more])

    with s.serve(first_shown_wins) as srv:
        first = probe(srv, "--temperature", "0.3", "--max-tokens", "77", "--repeats", "2", "--cache", str(cache),
                      "--report")
        assert first.exit_code == 0, first.output
        # read now: a later probe into the same folder without --report removes it (it would describe other rows)
        report = (tmp_path / "out" / "report.html").read_text()
        bodies = _requests_seen(srv)
        assert len(bodies) == 16  # 4 items x 2 orders x 2 repeats
        assert {b["temperature"] for b in bodies} == {0.3} and {b["max_tokens"] for b in bodies} == {77}
        assert probe(srv, "--temperature", "0.3", "--max-tokens", "77", "--repeats", "2", "--cache",
                     str(cache)).exit_code == 0
        assert srv.count == 16  # the same probe again: every call from --cache
        assert probe(srv, "--temperature", "0.3", "--max-tokens", "77", "--repeats", "2", "--no-cache").exit_code == 0
        assert srv.count == 32  # --no-cache: asked again
        capped = probe(srv, "--max-cost", "0.7", "--max-tokens", "50", "--concurrency", "1", "--no-cache",
                       model="openai/cli-priced-judge", out="capped")
        assert capped.exit_code == 0, capped.output
        paid = srv.count - 32
    payload = json.loads(first.stdout.strip().splitlines()[-1])
    assert not (tmp_path / "out" / "report.html").exists()
    assert payload["report"] == str(tmp_path / "out" / "report.html") and "Probe: position" in report
    assert "Question 3?" in report  # the rendered prompts: rubric and items found from the probe's run.json
    table = judgments.load(tmp_path / "capped" / "judgments.parquet")
    calls = table.drop_duplicates("call_id")
    assert 0 < paid < 8 and (calls["status"] == "ok").sum() == paid  # the budget stopped the calls, as in run
    assert (calls["status"] == "skipped_budget").sum() == 8 - paid and calls["cost_usd"].sum() <= 0.7


def test_probe_flags_given_twice_or_unknown_probe_are_one_sentence(tmp_path):
    data = tmp_path / "items.jsonl"
    data.write_text(json.dumps({"item_id": "i0", "prompt": "Q?", "response_a": "a", "response_b": "b"}) + "\n")
    twice = CliRunner().invoke(app, ["probe", "position", "--rubric", "pairwise", "--data", str(data), "--seed", "1",
                                     "--option", "seed=2", "--out", str(tmp_path / "o")])
    assert twice.exit_code == 2 and "seed given both as a flag and as --option" in twice.stderr
    unknown = CliRunner().invoke(app, ["probe", "nope", "--rubric", "pairwise", "--data", str(data)])
    assert unknown.exit_code == 2 and "unknown probe 'nope'" in unknown.stderr
