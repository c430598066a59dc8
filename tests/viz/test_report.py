"""The HTML report read back as a browser would get it: parsed with html.parser (always), and loaded in headless
Chromium where it is installed (rows present, typing in the search box filters them, the screenshot is not blank)."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import judgelab
from judgelab.backends.redaction import register_secret
from judgelab.judgments import make_table
from judgelab.rubrics import example_items, load_rubric
from judgelab.viz.notebook_views import summary_line
from judgelab.viz.report import SEARCH_NOTICE, read_run, report
from judgelab.viz.style import format_interval
from tests.support.browser import CHROMIUM, LAUNCH_ARGS, browser, not_blank

HOSTILE = "<script>document.title='pwned'</script> & <b>bold</b>"


class Page(HTMLParser):
    """What a structural check needs: tags with attributes, script bodies, and the text of each judgment row."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.rows: list[str] = []
        self._script = self._row = False
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        self._script = tag == "script"
        if tag == "tr" and attributes.get("class") == "judgment":
            self._row, self._depth = True, 0
            self.rows.append("")
        elif self._row and tag == "tr":
            self._depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = False
        if self._row and tag == "tr":
            if self._depth == 0:
                self._row = False
            else:
                self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._script:
            self.scripts.append(data)
        if self._row:
            self.rows[-1] += data


def _direct_run() -> tuple[pd.DataFrame, list[dict]]:
    """A direct_score table as the engine writes it: prompt hashes from the rubric, one hostile raw output,
    one parse error, one judgment whose prompt the items cannot reproduce."""
    rubric = load_rubric("direct_score")
    items = example_items("direct_score")
    rows = []
    for k, item in enumerate(items):
        request = rubric.requests(item)[0]
        base = {"run_id": "r1", "item_id": item["item_id"], "rubric": "direct_score", "judge": "openai/m",
                "condition": "original", "repeat": 0, "prompt_hash": request.prompt_hash(), "call_id": f"c{k}"}
        if k == 3:
            base["prompt_hash"] = "0000000000000000"  # e.g. other rubric parameters: not reproducible
        if k == 1:
            rows += [{**base, "criterion": c, "status": "parse_error", "unscored_reason": "missing field scores",
                      "raw_output": HOSTILE} for c in ("factual_accuracy", "instruction_following", "overall")]
            continue
        rows += [{**base, "criterion": "factual_accuracy", "status": "ok", "score": 4.0, "raw_output": f"ok {k}"},
                 {**base, "criterion": "instruction_following", "status": "ok", "score": 2.0, "raw_output": f"ok {k}"},
                 {**base, "criterion": "overall", "status": "ok", "score": 3.2, "raw_output": f"ok {k}"}]
    return make_table(rows), items


def test_report_structure_escaping_prompts_and_no_network(tmp_path: Path) -> None:
    table, items = _direct_run()
    path = report(table, tmp_path / "r.html", items=items, rubric="direct_score")
    text = path.read_text()
    page = Page(text)
    assert len(page.rows) == 4  # one row per judgment (item x judge x condition x repeat), not per criterion
    assert [r.split("openai/m")[0] for r in page.rows] == ["ds-1", "ds-2", "ds-3", "ds-4"]
    # the hostile raw output is text: escaped in the file, no script element but the report's own one
    assert HOSTILE not in text and html.escape(HOSTILE) in text
    assert len([t for t, _ in page.tags if t == "script"]) == 1 and "pwned" not in page.scripts[0]
    # nothing is fetched: every src/href is inline (data:) or an in-page anchor
    links = [a.get(k) for _, a in page.tags for k in ("src", "href") if a.get(k)]
    assert links and all(str(v).startswith(("data:image/png;base64,", "#")) for v in links), links
    assert not any(t in ("link", "iframe", "object", "embed") for t, _ in page.tags)
    # prompts: rendered where the rubric and item reproduce the recorded hash, a note where they do not
    assert "What causes seasons on Earth?" in page.rows[0]
    assert "1 of 4 recorded prompt(s) are not shown" in text
    assert "Give two prime numbers" in page.rows[3] and "not reproduced" in page.rows[3]
    # status counts and the unscored reason, the summary line
    assert "missing field scores" in text and ">parse_error<" in text
    assert summary_line(table) in text and "4 items; 12 judgment rows (9 ok, 3 unscored)" in summary_line(table)


def test_report_redacts_secrets_from_every_text(tmp_path: Path) -> None:
    key = "sk-reportplanted-0123456789"
    register_secret(key)
    table, items = _direct_run()
    table.loc[table["call_id"] == "c0", "raw_output"] = f"the key is {key}"
    items[0] = {**items[0], "response": f"{items[0]['response']} https://user:{key}@gw.example/v1"}
    text = report(table, tmp_path / "r.html", items=items, rubric="direct_score").read_text()
    assert key not in text
    assert "the key is ***" in text and "https://***@gw.example/v1" in text


def test_report_of_a_probe_on_released_llmbar_verdicts(data_dir: Path, tmp_path: Path) -> None:
    from judgelab.datasets import llmbar
    from judgelab.probes import position

    data = llmbar("Natural", "ChatGPT", "Vanilla_NoRules", data_dir=data_dir)
    result = position.analyze(data.table, n_resamples=500)
    text = report(result, tmp_path / "p.html", items=data.items).read_text()
    page = Page(text)
    flips = result.metric("flip_rate")
    assert format_interval(flips["ci_low"], flips["ci_high"]) in text  # the interval in one cell
    assert "<h2 id='probe'>Probe: position</h2>" in text and text.count("data:image/png;base64,") >= 2
    judgments_listed = data.table.groupby(["item_id", "judge", "condition"]).ngroups
    assert len(page.rows) == judgments_listed == 300
    # the released table carries no prompts: the report says why none is shown instead of showing nothing
    assert "prompts are not shown" in text or "not reproduced" in text
    # and max_judgments caps the list, saying so
    capped = report(result, tmp_path / "capped.html", max_judgments=10).read_text()
    assert len(Page(capped).rows) == 10 and "first 10 of 300 judgments" in capped


def test_report_rejects_what_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(judgelab.JudgelabError, match="holds no judgments table"):
        report(tmp_path, tmp_path / "r.html")
    with pytest.raises(judgelab.JudgelabError, match="not int"):
        report(3, tmp_path / "r.html")
    with pytest.raises(judgelab.JudgelabError, match="max_judgments"):
        report(_direct_run()[0], tmp_path / "r.html", max_judgments=0)


def test_read_run_uses_run_json(tmp_path: Path) -> None:
    table, items = _direct_run()
    judgelab.save(table, tmp_path / "judgments.parquet")
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(it) + "\n" for it in items))
    (tmp_path / "run.json").write_text(json.dumps({"rubric_file": "direct_score", "items_file": str(data),
                                                   "stats": {"api_calls": 4, "cache_hits": 0, "retries": 0,
                                                             "cost_usd": None, "wall_s": 1.5}}))
    source = read_run(tmp_path)
    assert source.stats and source.stats["api_calls"] == 4 and len(source.table) == 12
    text = report(tmp_path, tmp_path / "report.html").read_text()
    assert "4 API calls" in text and "cost unknown" in text and "What causes seasons on Earth?" in text


# ---------------------------------------------------------------- in a real browser
def test_report_in_headless_chromium(tmp_path: Path) -> None:
    sync_api = browser("the structural html.parser tests above still ran")
    table, items = _direct_run()
    path = report(table, tmp_path / "r.html", items=items, rubric="direct_score")
    profile = tmp_path / "profile"
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(str(profile), executable_path=str(CHROMIUM), headless=True,
                                                        args=LAUNCH_ARGS, viewport={"width": 1100, "height": 1400})
        try:
            requests: list[str] = []
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            assert page.title() == "judgelab report: judgments table"  # the hostile raw output did not run
            assert page.is_enabled("#search") and not page.is_visible("#search-off")  # the script ran
            rows = page.locator("#judgments tbody tr.judgment")
            assert rows.count() == 4 and rows.nth(0).is_visible()
            assert page.inner_text("#shown") == "4 of 4 judgments shown"
            page.fill("#search", "parse_error")
            assert page.inner_text("#shown") == "1 of 4 judgments shown"
            visible = [rows.nth(k).is_visible() for k in range(4)]
            assert visible == [False, True, False, False]
            page.fill("#search", "seasons ds-2")  # every word must match: the prompt text and the item id
            assert page.inner_text("#shown") == "1 of 4 judgments shown" and rows.nth(1).is_visible()
            page.fill("#search", "")
            assert page.inner_text("#shown") == "4 of 4 judgments shown"
            page.locator("#judgments details").first.locator("summary").click()  # open one judgment
            assert "What causes seasons on Earth?" in page.locator("#judgments details").first.inner_text()
            shot = page.screenshot(full_page=True)
            assert all(u.startswith(("file:", "data:")) for u in requests), requests
        finally:
            context.close()
    assert not_blank(shot, min_width=1000)  # text, tables, figures
    # as JupyterLab shows an untrusted HTML file: no script runs; the page says what the search box needs
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(str(tmp_path / "noscript"), executable_path=str(CHROMIUM),
                                                        headless=True, args=LAUNCH_ARGS, java_script_enabled=False)
        try:
            page = context.new_page()
            page.goto(path.as_uri())
            assert page.is_visible("#search-off") and not page.is_enabled("#search")
            assert "Trust HTML" in page.inner_text("#search-off") and page.locator("#judgments tr.judgment").count() == 4
        finally:
            context.close()
    assert SEARCH_NOTICE.startswith("The search box needs JavaScript")
