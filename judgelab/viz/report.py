"""The shareable HTML report of a run, a probe, a released data set or any judgments table.

``judgelab.report(result, "report.html")`` (and ``judgelab report RUN_DIR``) writes ONE static HTML file
that opens in any browser with no network: figures are inline PNG data URIs, the only script is a few
inline lines for the search box. It shows the summary line, status counts and unscored reasons, the
score and verdict distributions, a probe's summary with its intervals, and a searchable table of every
judgment with its rendered prompt (when the rubric and items reproduce the recorded ``prompt_hash``), its
raw output and its parsed rows.

Everything that comes from the data is HTML-escaped (a raw output holding ``<script>`` shows as text), and
every text passes through the secret redaction of :mod:`judgelab.backends.redaction` before it is written.

The notebook view of a result (``_repr_html_``) is :mod:`judgelab.viz.notebook_views`; the report shares its
summary line.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from judgelab import judgments
from judgelab.backends.redaction import redact
from judgelab.errors import ConfigError, JudgelabError
from judgelab.viz.notebook_views import summary_line
from judgelab.viz.report_sections import (
    accuracy_html,
    counted_rows,
    fold_wide,
    half_point_bins,
    png_img,
    rows_where,
    score_bins,
    score_labels,
)
from judgelab.viz.stats_report import result_frames, stats_document, what_report_takes
from judgelab.viz.style import format_number, frame_html, records_html

__all__ = ["MAX_BYTES", "MAX_JUDGMENTS", "REPORT_FILE", "SEARCH_NOTICE", "ReportSource", "gather", "read_run", "report"]

REPORT_FILE = "report.html"
MAX_JUDGMENTS = 2000  # judgments listed in the searchable table; the report says when more were left out
_TABLE_FILES = ("judgments.parquet", "judgments.jsonl")
_GROUP = ["run_id", "item_id", "judge", "condition", "repeat"]  # one judgment: one item, judge, condition, repeat


@dataclass
class ReportSource:
    """What a report shows, gathered from a result, a table or a run folder (:func:`gather`)."""

    table: pd.DataFrame
    title: str
    stats: dict[str, Any] | None = None  # a run's RunStats fields
    summary: pd.DataFrame | None = None  # a probe's summary (result frame + condition, policy)
    probe: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    items: pd.DataFrame | None = None
    rubric: Any = None
    notes: list[str] = field(default_factory=list)  # what could not be shown, and why
    probe_result: Any = None  # the ProbeResult itself, for its own figure


# ---------------------------------------------------------------- inputs
def read_run(path: str | Path) -> ReportSource:
    """A run or probe folder (judgments.parquet or .jsonl, and run.json when present) or a table file."""
    path = Path(path)
    if path.is_dir():
        found = [path / name for name in _TABLE_FILES if (path / name).exists()]
        if not found:
            raise judgments.JudgmentsFileNotFoundError(
                f"{path} holds no judgments table ({' or '.join(_TABLE_FILES)}); give a run folder or a table file")
        table_file, meta_file = found[0], path / "run.json"
    else:
        table_file, meta_file = path, path.parent / "run.json"
    table = judgments.load(table_file)
    meta = _run_meta(meta_file) if meta_file.exists() else {}
    source = ReportSource(table=table, title=f"judge run: {path}", stats=meta.get("stats"), meta=meta)
    if meta.get("summary"):
        source.summary = pd.DataFrame(meta["summary"])
        source.probe = str(meta.get("probe") or "probe")
        source.title = f"{source.probe} probe: {path}"
    return source


def _run_meta(path: Path) -> dict[str, Any]:
    """A run folder's run.json, which someone else may have written: a mapping, else one sentence."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "msg", None) or str(exc)
        raise ConfigError(f"cannot read the run's description {path}: {why}; fix or remove it (the table "
                          "is reported without it)") from None
    if not isinstance(meta, dict):
        raise ConfigError(f"the run's description {path} is not a JSON object; fix or remove it")
    return meta


def gather(result: Any, *, items: Any = None, rubric: Any = None, title: str | None = None) -> ReportSource:
    """A :class:`ReportSource` from a judgments table, a RunResult, a ProbeResult, a DatasetResult, or the path
    of a run folder / table file. ``items`` and ``rubric`` (default: the ones a run folder's run.json names,
    else a built-in rubric named in the table) let the report show each judgment's rendered prompt."""
    if isinstance(result, str | Path):
        source = read_run(result)
    elif isinstance(result, pd.DataFrame):
        if not {"item_id", "status"} <= set(result.columns):  # neither a judgments table nor (see report) results
            raise what_report_takes(result)
        source = ReportSource(table=judgments.validate(result), title="judgments table")
    elif hasattr(result, "summary") and hasattr(result, "probe") and hasattr(result, "table"):
        meta = dict(getattr(result, "meta", {}) or {})
        source = ReportSource(table=result.table, title=f"{result.probe} probe", summary=result.summary,
                              probe=result.probe, meta=meta, probe_result=result)
    elif hasattr(result, "stats") and hasattr(result, "table"):
        stats = result.stats if isinstance(result.stats, Mapping) else dict(vars(result.stats))
        source = ReportSource(table=result.table, title="judge run", stats=stats)
    elif hasattr(result, "items") and hasattr(result, "source") and hasattr(result, "table"):
        source = ReportSource(table=result.table, title=f"data set {result.name}", items=result.items,
                              meta={"source": f"{result.source.repo}@{result.source.commit}"})
    else:
        raise ConfigError(f"report() takes a judgments table, a RunResult, a ProbeResult, a DatasetResult or a run "
                          f"folder, not {type(result).__name__}")
    if title:
        source.title = title
    _attach_items(source, items)
    _attach_rubric(source, rubric)
    return source


def _attach_items(source: ReportSource, items: Any) -> None:
    from judgelab.engine.items import read_items

    data = items if items is not None else source.meta.get("items_file") or source.meta.get("data")
    if data is None:
        if source.items is None:
            source.notes.append("prompts and item texts are not shown: no items were given (items= / --data)")
        return
    try:
        source.items = read_items(data)
    except JudgelabError as exc:
        if items is not None:  # given explicitly (items= / --data): the user asked for these, say why not
            raise
        source.notes.append(f"prompts and item texts are not shown: {exc}")


def _attach_rubric(source: ReportSource, rubric: Any) -> None:
    from judgelab.rubrics import RubricTemplateError, list_rubrics, load_rubric

    explicit = rubric is not None
    if rubric is None:
        rubric = source.meta.get("rubric_file") or source.meta.get("rubric")
        names = sorted(judgments.distinct_text(source.table["rubric"]))
        if rubric is None and len(names) == 1 and names[0] in list_rubrics():
            rubric = names[0]
    if rubric is None:
        if source.items is not None:
            source.notes.append("prompts are not shown: no rubric was given (rubric=) and the table names none "
                                "of the built-in rubrics")
        return
    try:
        source.rubric = load_rubric(rubric, **source.meta.get("rubric_params", {})) \
            if isinstance(rubric, str | Path) else rubric
    except RubricTemplateError:  # a rubric whose templates cannot be rendered (a hostile one) stops the report
        raise
    except JudgelabError as exc:
        if explicit:  # given explicitly (rubric= / --rubric): the user asked for it, say why not
            raise
        source.notes.append(f"prompts are not shown: {exc}")


def _rendered_prompts(source: ReportSource) -> dict[str, list[dict[str, str]]]:
    """prompt_hash -> messages, for every recorded prompt the rubric and items reproduce exactly."""
    from judgelab.rubrics import TemplateRefusedError

    table, rubric = source.table, source.rubric
    if rubric is None or source.items is None or "prompt_hash" not in table:
        return {}
    wanted = judgments.distinct_text(table["prompt_hash"])
    judged = set(table.loc[table["prompt_hash"].notna(), "item_id"].astype(str))
    found: dict[str, list[dict[str, str]]] = {}
    orders = (False, True) if getattr(rubric, "mode", "") == "pairwise" else (False,)
    for item in source.items.to_dict(orient="records"):
        if str(item["item_id"]) not in judged:
            continue
        for swapped in orders:
            try:
                requests = rubric.requests(item, swapped=swapped)
            except TemplateRefusedError:  # a template that tried what templates may not do stops the report
                raise
            except (JudgelabError, KeyError, ValueError):  # an item the rubric cannot render: no prompt shown
                continue
            for request in requests:
                digest = request.prompt_hash()
                if digest in wanted:
                    found[digest] = list(request.messages)
    missing = wanted - set(found)
    if missing:
        source.notes.append(f"{len(missing)} of {len(wanted)} recorded prompt(s) are not shown: the rubric and items "
                            "given do not reproduce their prompt_hash (a perturbed condition, other rubric "
                            "parameters or other items)")
    return found


# ---------------------------------------------------------------- figures
def _rater_labels(rows: pd.DataFrame) -> pd.Series:
    """Who gave a row, as a figure's legend reads it: the judge, and the condition when there are several."""
    judge = rows["judge"].astype(str)
    if rows["condition"].nunique() > 1:
        return judge + " · " + rows["condition"].astype(str)
    return judge


def _distribution_figures(table: pd.DataFrame) -> list[str]:
    """Bar charts of the scored rows, one bar colour per judge (and condition): score counts per criterion (one
    panel each, at most 8), and the whole-answer winners/verdicts."""
    import seaborn as sns
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from judgelab.viz.style import FIG_WIDTH, use_style

    ok = counted_rows(table)
    out = []
    scores = rows_where(ok, ok["score"].notna())
    scores = scores.assign(score=scores["score"].astype(float).round(2), rater=_rater_labels(scores))
    with use_style():
        if len(scores):
            # in order of first appearance, as dict.fromkeys over the rows gives them, from the distinct values only
            criteria = list(dict.fromkeys(scores["criterion"].astype(str).unique()))[:8]
            rows_of_panels = math.ceil(len(criteria) / 2)
            raters = list(dict.fromkeys(scores["rater"].unique()))
            palette = dict(zip(raters, sns.color_palette(n_colors=len(raters)), strict=True))
            fig = Figure(figsize=(FIG_WIDTH, 2.6 * rows_of_panels + 0.5))
            for k, criterion in enumerate(criteria):
                ax = fig.add_subplot(rows_of_panels, 2 if len(criteria) > 1 else 1, k + 1)
                part = scores[scores["criterion"].astype(str) == criterion]
                edges = score_bins(part["score"])  # fractional scores (a mean of raters): binned, else one bar each
                part = part.assign(bar=score_labels(part["score"], edges))
                counts = part.groupby(["rater", "bar"], observed=False).size().rename("rows").reset_index()
                sns.barplot(data=counts, x="bar", y="rows", hue="rater", hue_order=raters, palette=palette, ax=ax,
                            legend=False)
                ax.set_xlabel("score" if edges is None else "score (binned: bar 1.5 holds 1.25 to < 1.75)"
                              if half_point_bins(edges) else "score (binned)")
                if edges is not None and not half_point_bins(edges):
                    ax.tick_params(axis="x", labelrotation=35, labelsize=7)
                ax.set_title(f"score: {criterion}")
            # one legend for every panel, above them: never over a bar
            handles = [Patch(color=palette[r], label=r) for r in raters]
            fig.legend(handles=handles, loc="upper center", ncol=min(len(raters), 5), frameon=False,
                       bbox_to_anchor=(0.5, 1.0))
            fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / fig.get_figheight()))
            out.append(png_img(fig))
        labels = ok.assign(verdict_label=ok["winner"].fillna(ok["verdict"]))
        labels = labels[labels["verdict_label"].notna() & labels["side"].isna()]
        if (labels["criterion"] == "overall").any():  # the whole-answer verdict, not each criterion's again
            labels = labels[labels["criterion"] == "overall"]
        if len(labels):
            labels = labels.assign(rater=_rater_labels(labels))
            counts = labels.groupby(["rater", "verdict_label"]).size().rename("rows").reset_index()
            fig = Figure(figsize=(FIG_WIDTH * 0.8, 2.8))
            ax = fig.add_subplot()
            sns.barplot(data=counts, x="verdict_label", y="rows", hue="rater", ax=ax)
            ax.set_xlabel("winner / verdict (original labels)")
            ax.set_title("verdicts" + (" (criterion overall)" if (labels["criterion"] == "overall").all() else ""))
            ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), title="")
            fig.tight_layout()
            out.append(png_img(fig))
    return out


def _probe_figure(source: ReportSource) -> str:
    import matplotlib.pyplot as plt

    from judgelab.probes.result import ProbeResult

    result = source.probe_result or ProbeResult(str(source.probe), source.table, source.summary)
    try:
        drawn = result.plot()
    except (ValueError, KeyError) as exc:  # nothing finite to draw: say so instead of a blank figure
        return f"<p><i>no figure: {html.escape(str(exc))}</i></p>"
    fig = getattr(drawn, "figure", drawn)
    try:
        return png_img(fig)
    finally:
        plt.close(fig)


# ---------------------------------------------------------------- the tables
def _status_html(table: pd.DataFrame) -> str:
    counts = pd.DataFrame([{"status": s, "rows": n} for s, n in judgments.status_counts(table).items() if n])
    unscored = counted_rows(table, scored=False)
    parts = [frame_html(counts)]
    if len(unscored):
        reasons = (unscored.assign(unscored_reason=unscored["unscored_reason"].fillna("(no reason recorded)"))
                   .groupby(["status", "unscored_reason"]).size().rename("rows").reset_index()
                   .sort_values("rows", ascending=False))
        parts.append("<h3>Unscored reasons</h3>" + frame_html(reasons, max_rows=50))
    else:
        parts.append("<p>Every row is scored.</p>")
    return "\n".join(parts)


def _counts_html(table: pd.DataFrame) -> str:
    ok = counted_rows(table)
    parts = []
    scores = rows_where(ok, ok["score"].notna())
    if len(scores):
        edges = score_bins(scores["score"])
        wide = (scores.assign(score=score_labels(scores["score"], edges))
                .groupby(["judge", "criterion", "condition", "score"], observed=True).size().unstack(fill_value=0)
                .reset_index())
        wide.columns = [str(c) for c in wide.columns]
        binned = "" if edges is None else " <small>(scores binned: some are fractional)</small>"
        parts.append(f"<h3>Score counts{binned}</h3>" + fold_wide(wide))
    labels = ok.assign(verdict_label=ok["winner"].fillna(ok["verdict"]))
    labels = rows_where(labels, labels["verdict_label"].notna())
    if len(labels):
        wide = (labels.groupby(["judge", "criterion", "condition", "verdict_label"]).size().unstack(fill_value=0)
                .reset_index())
        parts.append("<h3>Winner / verdict counts</h3>" + fold_wide(wide))
    return "\n".join(parts) or "<p><i>no scored rows</i></p>"


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _pre(text: Any) -> str:
    return f"<pre>{html.escape('' if _missing(text) else str(text))}</pre>"


def _verdict_text(rows: list[dict[str, Any]]) -> str:
    bits = []
    for r in rows:
        if r["status"] != judgments.OK:
            continue
        value = next((r[c] for c in ("winner", "verdict") if isinstance(r.get(c), str)), None)
        side = f":{r['side']}" if isinstance(r.get("side"), str) else ""
        bits.append(f"{r['criterion']}{side} {value if value is not None else format_number(r.get('score'))}")
    return "; ".join(bits)


def _judgment_row(key: tuple[Any, ...], rows: list[dict[str, Any]], item: Mapping[str, Any] | None,
                  prompts: Mapping[str, list[dict[str, str]]], parsed_columns: list[str]) -> str:
    """One judgment (item x judge x condition x repeat): its cells, then the item, prompt, raw output and rows."""
    _, item_id, judge, condition, repeat = key
    statuses = sorted({str(r["status"]) for r in rows})
    status = ", ".join(statuses)
    sections = []
    if item is not None:
        sections.append("<h4>item</h4>" + "".join(f"<b>{html.escape(str(k))}</b>{_pre(v)}"
                                                  for k, v in item.items() if not _missing(v)))
    for digest in dict.fromkeys(str(r["prompt_hash"]) for r in rows if not _missing(r.get("prompt_hash"))):
        messages = prompts.get(digest)
        body = "".join(f"<b>{html.escape(m['role'])}</b>{_pre(m['content'])}" for m in messages) if messages \
            else "<p><i>not reproduced (see the notes at the top)</i></p>"
        sections.append(f"<h4>prompt <small>{html.escape(digest)}</small></h4>{body}")
    calls = {r.get("call_id"): r.get("raw_output") for r in rows}  # one raw output per call
    sections += ["<h4>raw output</h4>" + _pre(raw) for raw in calls.values()]
    sections.append("<h4>parsed rows</h4>" + records_html(rows, parsed_columns))
    reason = next((str(r["unscored_reason"]) for r in rows if not _missing(r.get("unscored_reason"))), "")
    cells = [item_id, judge, condition, format_number(repeat), status, _verdict_text(rows) or reason]
    return (f"<tr class='judgment' data-status='{html.escape(status)}'>"
            + "".join(f"<td>{html.escape('' if _missing(c) else str(c))}</td>" for c in cells)
            + f"<td><details><summary>prompt, raw output, rows</summary>{''.join(sections)}</details></td></tr>")


def _judgments_html(source: ReportSource, prompts: Mapping[str, list[dict[str, str]]],
                    max_judgments: int, max_bytes: int | None = None,
                    number: np.ndarray | None = None) -> tuple[str, int, int]:
    """The searchable table: one row per judgment, in table order, at most ``max_judgments`` rows and (when given)
    ``max_bytes`` of HTML; (html, judgments listed, judgments in all). ``number``: each row's judgment number
    (:func:`_judgment_numbers` of the table) when already computed."""
    table = source.table
    items: dict[str, dict[str, Any]] = {}
    if source.items is not None:
        for item in source.items.to_dict(orient="records"):
            items.setdefault(str(item["item_id"]), item)
    # only the rows of the judgments that can be listed become plain dicts (per-group pandas calls cost seconds,
    # and dicts of every row cost more than the rest of the report on a large table); the groups are numbered in
    # table order, as a dict keyed by the group's values would be
    number = _judgment_numbers(table) if number is None else number
    total = int(number.max()) + 1 if len(number) else 0
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for record in table[number < max_judgments].to_dict(orient="records"):
        groups.setdefault(tuple(record[c] for c in _GROUP), []).append(record)
    parsed_columns = [c for c in ("criterion", "side", "status", "score", "winner", "verdict", "confidence",
                                  "unscored_reason", "detail") if c in table.columns]
    rows_html: list[str] = []
    size = 0
    for key, rows in list(groups.items())[:max_judgments]:
        row = _judgment_row(key, rows, items.get(str(key[1])), prompts, parsed_columns)
        size += len(row.encode("utf-8"))
        if max_bytes is not None and size > max_bytes and rows_html:
            break
        rows_html.append(row)
    head = "".join(f"<th>{h}</th>" for h in ("item", "judge", "condition", "repeat", "status", "verdict", ""))
    # the list scrolls inside its box: the page stays a few screens tall however many judgments it lists
    body = (f"<div style='max-height:80vh;overflow:auto'><table id='judgments'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows_html)}</tbody></table></div>")
    return body, len(rows_html), total


def _judgment_numbers(table: pd.DataFrame) -> np.ndarray:
    """Each row's judgment (its _GROUP values) numbered 0, 1, ... in order of first appearance."""
    return table.groupby(_GROUP, sort=False, dropna=False).ngroup().to_numpy()


_FREE_TEXT = ("raw_output", "reasoning", "detail")  # shown only in the judgments list, never counted or plotted


def _redacted_table(table: pd.DataFrame, max_judgments: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The table with every text cell redacted, as redact(table) gives it, but each distinct value redacted once
    (a table repeats its judges, criteria and statuses on every row), and the free-text columns
    (:data:`_FREE_TEXT`) kept only on the rows of the judgments the list can show (the first ``max_judgments``;
    elsewhere missing): no figure, count or table of the report reads them; and each row's judgment number in
    the redacted table (:func:`_judgment_numbers`; redaction can make two judgments' keys equal).

    No copy of the whole table: a column redaction leaves unchanged is the input's own column (pandas columns
    of an immutable Arrow array, copy-on-write: nothing here or after writes into them), so a table of millions
    of rows costs a pass over each column's distinct values, not over its cells."""
    out = table.copy(deep=False)  # copy-on-write: setting a column below never touches the caller's table
    free = [p for p, c in enumerate(table.columns) if c in _FREE_TEXT]
    for position in range(table.shape[1]):
        if position not in free:
            _redact_column(out, position)
    numbers = _judgment_numbers(out)
    listed = pd.Series(numbers < max_judgments, index=table.index)
    for position in free:
        out.isetitem(position, out.iloc[:, position].where(listed))
        _redact_column(out, position)
    return out, numbers


def _redact_column(frame: pd.DataFrame, position: int) -> None:
    """Redact the column at ``position`` of ``frame`` in place, as redact(frame) would."""
    values = frame.iloc[:, position]
    if isinstance(values.dtype, pd.StringDtype):
        clean = _redact_distinct(values)
        if clean is not values:
            frame.isetitem(position, clean)
    elif not (pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype)
              or pd.api.types.is_datetime64_any_dtype(values.dtype)):
        # any Python object (a dict in detail), categories, Arrow strings of another dtype: redact() as before
        frame.isetitem(position, redact(values))
    # numbers, booleans, timestamps: nothing to redact


def _redact_distinct(column: pd.Series) -> pd.Series:
    """A string column with each distinct value redacted once (missing cells stay missing); the column itself when
    no value changes."""
    if not column.notna().any():
        return column
    present = column.dropna().unique()  # a hash pass, no codes: most columns hold no secret and stay as they are
    original = [str(u) for u in present]
    if redact(original) == original:
        return column
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    clean = redact([str(u) for u in uniques])
    values = pd.array(clean, dtype=column.dtype).take(codes, allow_fill=True)
    return pd.Series(values, index=column.index, name=column.name)


# ---------------------------------------------------------------- the page
_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:2em auto;max-width:1200px;
padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:.9em} th,td{border:1px solid #ddd;padding:.25em .5em;
vertical-align:top;text-align:left} th{background:#f3f3f3}
pre{white-space:pre-wrap;word-break:break-word;background:#f8f8f8;border:1px solid #eee;padding:.4em;margin:.2em 0 .6em;
max-height:24em;overflow:auto} details summary{cursor:pointer;color:#0072B2}
.summary{font-size:1.05em;background:#eef5fb;border-left:4px solid #0072B2;padding:.5em .8em}
.notes{color:#8a4b00} #search{font-size:1em;padding:.3em .5em;width:30em;max-width:100%}
tr.judgment[data-status]:not([data-status='ok']) td:nth-child(5){color:#D55E00;font-weight:bold}
"""

# the whole script: filter the judgment rows by every word typed (case-insensitive, over the row's text)
_SEARCH_JS = """
(function(){
  var box=document.getElementById('search'), shown=document.getElementById('shown');
  box.disabled=false; var off=document.getElementById('search-off'); if(off){off.style.display='none';}
  var rows=Array.prototype.slice.call(document.querySelectorAll('#judgments tbody tr.judgment'));
  var texts=rows.map(function(r){return r.textContent.toLowerCase();});
  function filter(){
    var words=box.value.toLowerCase().split(/\\s+/).filter(Boolean), n=0;
    rows.forEach(function(r,i){
      var keep=words.every(function(w){return texts[i].indexOf(w)>=0;});
      r.style.display=keep?'':'none'; if(keep){n++;}
    });
    shown.textContent=n+' of '+rows.length+' judgments shown';
  }
  box.addEventListener('input',filter); filter();
})();
"""


# said where the search box is, for a page whose script does not run: JupyterLab shows an HTML file in a sandbox
# without scripts until "Trust HTML" is pressed; everything else on the page is static and shows either way
SEARCH_NOTICE = ("The search box needs JavaScript: in JupyterLab press \u201cTrust HTML\u201d in the viewer's "
                 "toolbar, or open the file in a browser. Every table, figure and judgment below is static and "
                 "shows without it.")
MAX_BYTES = 5_000_000  # a report larger than this lists fewer judgments (and says so at the top)


def _document(source: ReportSource, max_judgments: int, max_bytes: int | None = MAX_BYTES) -> str:
    from judgelab import __version__

    prompts = _rendered_prompts(source)
    # THE one place the report's data meets the secret redaction of judgelab.backends.redaction (issue 15):
    # the table, item texts, rendered prompts, probe summary and metadata are redacted before any is written
    clean = redact({"items": source.items, "summary": source.summary, "meta": source.meta,
                    "stats": source.stats, "prompts": prompts, "title": source.title, "notes": source.notes})
    table, numbers = _redacted_table(source.table, max_judgments)
    source = ReportSource(table=table, title=clean["title"], stats=clean["stats"], summary=clean["summary"],
                          probe=source.probe, meta=clean["meta"], items=clean["items"], rubric=source.rubric,
                          notes=clean["notes"], probe_result=source.probe_result)
    prompts = clean["prompts"]
    table = source.table
    head = [f"<h1>{html.escape(source.title)}</h1>",
            f"<p class='summary' id='summary'>{html.escape(summary_line(table, source.stats))}</p>"]
    about = {k: v for k, v in source.meta.items() if k in ("model", "rubric", "probe", "data", "source", "demo")}
    if about:
        head.append("<p>" + "; ".join(f"<b>{html.escape(str(k))}</b>: {html.escape(str(v))}"
                                      for k, v in about.items()) + "</p>")
    if any(str(j).startswith("local/") for j in table["judge"].dropna().unique()):
        head.append("<p class='notes'>The judge local/smollm2 is the embedded 135M plumbing model: its "
                    "verdicts show how judgelab works, not how good an answer is.</p>")
    body = ["<h2 id='status'>Status</h2>" + _status_html(table)]
    body.append(accuracy_html(table))
    if source.summary is not None and len(source.summary):
        body.append(f"<h2 id='probe'>Probe: {html.escape(str(source.probe))}</h2>"
                    + frame_html(source.summary, text_width=90) + _probe_figure(source))
    body.append("<h2 id='distributions'>Scores and verdicts</h2>" + "".join(_distribution_figures(table))
                + _counts_html(table))
    fixed = sum(len(part.encode("utf-8")) for part in head + body) + 20_000  # + notes, style, script
    budget = None if max_bytes is None else max(max_bytes - fixed, 0)
    judgment_html, shown, total = _judgments_html(source, prompts, max_judgments, budget, numbers)
    notes = list(source.notes)
    if shown < total:
        why = (f"the report is capped at {max_bytes / 1e6:.1f} MB (max_bytes={max_bytes:,})"
               if shown < min(max_judgments, total) else f"max_judgments={max_judgments:,}")
        notes.insert(0, f"the judgments list below shows the first {shown:,} of {total:,} judgments ({why}); "
                        "every count, table and figure uses all of them")
    if notes:
        head.append("<ul class='notes'>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    body.append("<h2 id='items'>Judgments</h2><p><input id='search' type='search' disabled "
                "placeholder='filter: words from item, judge, status, prompt or output' autocomplete='off'> "
                f"<span id='shown'>{shown} of {shown} judgments shown</span></p>"
                f"<p class='notes' id='search-off'>{html.escape(SEARCH_NOTICE)}</p>" + judgment_html)
    return _page(source.title, head + body, __version__)


def _page(title: str, sections: list[str], version: str, *, script: bool = True) -> str:
    return ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>judgelab report: {html.escape(title)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(s for s in sections if s)
            + f"<p><small>written by judgelab {html.escape(version)}; a static page with no network "
            "access.</small></p>" + (f"<script>{_SEARCH_JS}</script>" if script else "") + "</body></html>\n")


def report(result: Any, path: str | Path = REPORT_FILE, *, items: Any = None, rubric: Any = None,
           title: str | None = None, max_judgments: int = MAX_JUDGMENTS, max_bytes: int | None = MAX_BYTES) -> Path:
    """Write the HTML report of ``result`` (a judgments table, RunResult, ProbeResult, DatasetResult, the path
    of a run folder or table file, or statistics: a result frame or a dict of them) to ``path``; returns the path.

    A statistics report shows each result frame as a paper's table with its forest plot.

    ``items`` (anything :func:`judgelab.run` reads) and ``rubric`` let the report show each judgment's rendered
    prompt: a prompt is shown only when rendering the rubric on the item gives the recorded ``prompt_hash``.
    A run folder written by ``judgelab run`` names its data and rubric, so ``judgelab report runs/`` finds them.
    ``max_judgments`` caps the searchable list, and ``max_bytes`` (default 5 MB; None: no cap) the file's size
    by listing fewer judgments; the top of the report says what was left out (the counts, tables and figures
    always use every row).
    """
    if max_judgments < 1:
        raise ConfigError(f"max_judgments must be at least 1, not {max_judgments}")
    if max_bytes is not None and max_bytes < 1:
        raise ConfigError(f"max_bytes must be a positive number of bytes or None, not {max_bytes}")
    frames = result_frames(result)
    if frames is not None:
        from judgelab import __version__

        frames = redact(frames)  # result frames carry notes and methods: redacted like every other text
        text = _page(title or "statistics", stats_document(frames, title or "statistics"), __version__,
                     script=False)
    else:
        text = _document(gather(result, items=items, rubric=rubric, title=title), max_judgments, max_bytes)
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    return out
