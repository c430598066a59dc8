"""ipywidgets explorers for notebooks: look at one rubric on one item, or browse where judges disagree.

- :class:`RubricExplorer`: pick a rubric and an item, see the whole rendered prompt (in a scrollable box),
  run the judge, see the parsed rows, the verdict and the raw output. It opens on the rubric with the
  shortest prompt.
- :class:`DisagreementBrowser`: over a judgments table, filter to position flips, disagreements of the
  judge with the gold rater (human or gold labels), or unscored rows; see the candidates side by side,
  every gold/reference field of the item, raw outputs and scores. Items are listed in natural order
  (#2 before #10); the |Δ| threshold shows only where it applies (numeric scores vs the gold rater).

Both keep their state in ordinary widget values (``.rubric.value``, ``.kind.value`` ...) and render
into HTML widgets, so tests drive them headless by setting values and reading ``.value`` back.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as w
import pandas as pd

from judgelab.judgments import detail as row_detail
from judgelab.judgments import distinct_text, is_scored, scored
from judgelab.viz.style import frame_html

__all__ = ["FILTERS", "GOLD_FIELDS", "SWAPPED_NOTE", "DisagreementBrowser", "RubricExplorer", "budget_for",
           "find_disagreements", "gold_fields", "natural_key"]

_PAIR_FIELDS: tuple[tuple[str, str], ...] = (("output_1", "output_2"), ("response_a", "response_b"),
                                             ("candidate_a", "candidate_b"))
_SINGLE_FIELDS: tuple[str, ...] = ("response", "summary", "answer", "model_output", "output", "commentary")
_CONTEXT_FIELDS: tuple[str, ...] = ("input", "prompt", "question", "source_text", "context")
_ROW_COLUMNS: tuple[str, ...] = ("criterion", "side", "condition", "status", "score", "winner", "verdict",
                                 "confidence", "unscored_reason")
# item fields that hold a reference answer or label (reference-gold items carry gold_answers, LLMBar a label ...)
GOLD_FIELDS: tuple[str, ...] = ("gold", "gold_answer", "gold_answers", "gold_label", "reference", "reference_answer",
                                "references", "label", "labels", "human_label", "expected", "expected_output",
                                "answer_key", "target")
_GOLD_PREFIXES: tuple[str, ...] = ("gold", "reference", "label", "human_", "expected")
_BOX = "max-height:24em;overflow:auto;border:1px solid #ddd;padding:4px;background:#fafafa"


def _pre(text: Any, limit: int | None = None, *, box: bool = True) -> str:
    """Text as an escaped <pre>: the whole of it in a scrollable box (``limit`` cuts and says how much)."""
    body = "" if text is None or text is pd.NA or (isinstance(text, float) and text != text) else str(text)
    if limit is not None and len(body) > limit:
        body = body[:limit] + f"\n… ({len(body) - limit} more characters)"
    style = "white-space:pre-wrap;word-break:break-word;margin:0" + (f";{_BOX}" if box else "")
    return f"<pre style='{style}'>{html.escape(body)}</pre>"


def _table_html(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "<i>no rows</i>"
    return frame_html(frame)


def natural_key(text: Any) -> tuple[Any, ...]:
    """Sort key reading digit runs as numbers: "LLMBar/Natural#2" before "LLMBar/Natural#10"."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.split(r"(\d+)", str(text)) if part)


def gold_fields(columns: Sequence[Any]) -> list[str]:
    """The item fields holding a gold/reference answer or label, in :data:`GOLD_FIELDS` order, then any other
    column named like one (``gold_*``, ``reference*``, ``label*``, ``human_*``, ``expected*``)."""
    names = [str(c) for c in columns]
    known = [f for f in GOLD_FIELDS if f in names]
    return known + [c for c in names if c not in known and c.lower().startswith(_GOLD_PREFIXES)]


class RubricExplorer:
    """Pick a rubric and one of its items, read the prompt, run the judge, read what came back.

    ``items``: {rubric name: list of item dicts}; rubrics without an entry use their built-in example
    items. ``max_tokens``: default, each rubric's own budget (:func:`budget_for`: its whole JSON answer fits).
    ``run_options`` go to :func:`judgelab.run` (e.g. ``cache=False``). With the default ``local/smollm2`` the
    judge is the embedded 135M plumbing model: its verdicts are NOT meaningful.
    """

    def __init__(self, rubrics: Sequence[str] | None = None, items: Mapping[str, list[dict[str, Any]]] | None = None,
                 *, rubric: str | None = None, model: str = "local/smollm2", max_tokens: int | None = None,
                 **run_options: Any) -> None:
        from judgelab.rubrics import list_rubrics

        self._items = dict(items or {})
        self._run_options = run_options
        self.table: pd.DataFrame | None = None  # the judgments rows of the last run
        names = list(rubrics or list_rubrics())
        if rubric is not None and rubric not in names:
            raise ValueError(f"rubric {rubric!r} is not among the explorer's rubrics {names}")
        self.rubric = w.Dropdown(options=names, value=rubric or self._shortest(names), description="rubric")
        self.item = w.Dropdown(options=[], description="item")
        self.model = w.Text(value=model, description="model")
        self._fixed_max_tokens = max_tokens  # None: each rubric's own budget (budget_for), set as it is chosen
        self.max_tokens = w.BoundedIntText(value=max_tokens or 128, min=8, max=4096, description="max tokens")
        self.swap = w.Checkbox(value=False, description="both orders (pairwise)")
        self.run_button = w.Button(description="Run judge", button_style="primary")
        self.status = w.HTML()
        self.prompt = w.HTML()
        self.parsed = w.HTML()
        self.verdict = w.HTML()
        self.raw = w.HTML()
        self.rubric.observe(lambda _: self._refresh_items(), names="value")
        self.item.observe(lambda _: self._render_prompt(), names="value")
        self.run_button.on_click(lambda _: self.run())
        tabs = w.Tab(children=[self.prompt, self.parsed, self.raw])
        for k, title in enumerate(("prompt", "parsed rows", "raw output")):
            tabs.set_title(k, title)
        self.widget = w.VBox([w.HBox([self.rubric, self.item]), w.HBox([self.model, self.max_tokens, self.swap]),
                              w.HBox([self.run_button, self.status]), self.verdict, tabs])
        self._refresh_items()

    def _shortest(self, names: list[str]) -> str:
        """The rubric whose first item gives the shortest prompt: the explorer opens on something readable."""
        def length(name: str) -> float:
            try:
                from judgelab.rubrics import load_rubric

                items = self.items_for(name)
                requests = load_rubric(name).requests(items[0]) if items else []
                return sum(len(m["content"]) for r in requests for m in r.messages) or float("inf")
            except Exception:  # a rubric whose example cannot be rendered here is simply not the one to open on
                return float("inf")

        return min(names, key=length)

    def items_for(self, rubric: str) -> list[dict[str, Any]]:
        from judgelab.rubrics import example_items, load_rubric

        if rubric in self._items:
            return list(self._items[rubric])
        found = example_items(rubric)
        if not found:
            example = load_rubric(rubric).spec.example
            found = [dict(example)] if example else []
        return found

    def current_item(self) -> dict[str, Any]:
        items = self.items_for(self.rubric.value)
        if self.item.value is None or not items:
            raise ValueError(f"rubric {self.rubric.value!r} has no items to show; pass items={{name: [...]}}")
        return items[self.item.value]

    def _refresh_items(self) -> None:
        if self._fixed_max_tokens is None:
            self.max_tokens.value = budget_for(self.rubric.value)
        items = self.items_for(self.rubric.value)
        self.item.options = [(str(it.get("item_id", f"item {k}")), k) for k, it in enumerate(items)]
        self.item.value = 0 if items else None
        self._render_prompt()

    def _clear_run(self) -> None:
        """Forget the last run's rows, status line and views: they described another rubric or item."""
        self.table = None
        self.status.value = self.parsed.value = self.raw.value = self.verdict.value = ""

    def _render_prompt(self) -> None:
        from judgelab.rubrics import load_rubric

        self._clear_run()
        if self.item.value is None:
            self.prompt.value = "<i>no items for this rubric</i>"
            return
        rubric = load_rubric(self.rubric.value)
        requests = rubric.requests(self.current_item())
        parts = [f"<b>{len(requests)} request(s)</b>; mode {html.escape(rubric.mode)}"]
        for k, req in enumerate(requests, start=1):
            rows = ", ".join(r.criterion + (f":{r.side}" if r.side else "") for r in req.expected_rows)
            parts.append(f"<h4>request {k} → rows {html.escape(rows)}</h4>")
            parts += [f"<b>{html.escape(m['role'])}</b>{_pre(m['content'])}" for m in req.messages]
        self.prompt.value = "\n".join(parts)
        self.swap.disabled = rubric.mode != "pairwise"

    def run(self) -> pd.DataFrame:
        """Judge the selected item now; fills the parsed/verdict/raw views and returns the rows."""
        import judgelab

        self.status.value = "<i>running…</i>"
        options = {"progress": False, "concurrency": 1, **self._run_options}
        table = judgelab.run([self.current_item()], self.rubric.value, self.model.value,
                             max_tokens=int(self.max_tokens.value), swap=bool(self.swap.value and not self.swap.disabled),
                             **options)
        self.table = table
        ok = int(is_scored(table).sum())
        note = " — embedded plumbing judge, NOT a meaningful verdict" if self.model.value.startswith("local/") else ""
        self.status.value = f"{len(table)} row(s), {ok} scored{html.escape(note)}"
        self.parsed.value = _table_html(table[[c for c in _ROW_COLUMNS if c in table.columns]])
        verdicts = table[table["criterion"] == "overall"] if (table["criterion"] == "overall").any() else table
        summary = verdicts[["condition", "status", "score", "winner", "verdict"]].drop_duplicates()
        self.verdict.value = "<b>verdict</b>" + _table_html(summary)
        raws = table.drop_duplicates("call_id") if "call_id" in table.columns else table
        self.raw.value = "".join(f"<b>{html.escape(str(r['condition']))}</b>{_pre(r['raw_output'])}"
                                 for _, r in raws.iterrows())
        return table

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def budget_for(rubric: str) -> int:
    """The explorer's default max_tokens for ``rubric``: room for its whole JSON answer with short texts (the
    embedded judge's grammar fits the texts to it), at most the rubric's own budget; 200 without a schema."""
    from judgelab.backends.schema_budget import tokens_for
    from judgelab.rubrics import load_rubric

    loaded = load_rubric(rubric)
    cap = int(loaded.spec.max_tokens or 1024)
    return tokens_for(loaded.response_schema(), cap=cap) or min(cap, 200)


FILTERS: tuple[str, ...] = ("position flips", "judge vs gold", "unscored")
# a swapped judgment's raw output names the outputs as the judge saw them; the table's winner is in original labels
SWAPPED_NOTE = ("Swapped order: the judge was shown the outputs the other way round, so its “Output (a)” / “A” "
                "here is the original B (and “(b)” / “B” the original A); the winner column above is in the "
                "original labels.")


def find_disagreements(table: pd.DataFrame, kind: str, judge: str, *, gold: str = "human",
                       threshold: float = 1.0) -> pd.DataFrame:
    """The item_ids (one row each) that match a browser filter (one of :data:`FILTERS`), with what makes them match.

    ``position flips``: the judge's scored verdicts differ between conditions "original" and "swapped".
    ``judge vs gold``: a score differs from the ``gold`` judge's score (human or gold labels) by at least
    ``threshold`` (per criterion); for unscored-by-number rows, the pairwise winner (vs e.g. "gold") or
    the categorical verdict (e.g. OpenQA's yes/no vs "human") differs.
    ``unscored``: the judge's rows with a status other than "ok", with their reason.
    """
    if kind not in FILTERS:
        raise ValueError(f"unknown filter {kind!r}; use one of {FILTERS}")
    rows = table[table["judge"] == judge]
    if rows.empty:
        raise ValueError(f"judge {judge!r} has no rows in the table")
    if kind == "unscored":
        bad = rows[~is_scored(rows)]
        return bad[["item_id", "criterion", "condition", "status", "unscored_reason"]].reset_index(drop=True)
    judged = scored(rows)
    if kind == "position flips":
        wide = judged.pivot_table(index=["item_id", "criterion"], columns="condition", values="winner",
                                  aggfunc="first")
        if not {"original", "swapped"} <= set(wide.columns):
            return pd.DataFrame(columns=["item_id", "criterion", "original", "swapped"])
        both = wide.dropna(subset=["original", "swapped"])
        flips = both[both["original"] != both["swapped"]][["original", "swapped"]]
        return flips.reset_index()
    ref = scored(table[table["judge"] == gold])
    if ref.empty:
        raise ValueError(f"no scored rows of gold judge {gold!r} in the table")
    if (judged["condition"] == "original").any():
        judged = judged[judged["condition"] == "original"]
    if judged["score"].isna().all():  # pairwise winners (vs gold) or categorical verdicts (yes/no)
        column = "winner" if judged["winner"].notna().any() else "verdict"
        merged = judged[["item_id", "criterion", column]].merge(
            ref[["item_id", column]].drop_duplicates("item_id").rename(columns={column: gold}), on="item_id")
        return merged[merged[column].astype(object) != merged[gold].astype(object)].reset_index(drop=True)
    merged = judged[["item_id", "criterion", "score"]].merge(
        ref[["item_id", "criterion", "score"]].rename(columns={"score": gold}), on=["item_id", "criterion"])
    merged["difference"] = merged["score"].astype(float) - merged[gold].astype(float)
    return merged[merged["difference"].abs() >= threshold].reset_index(drop=True)


class DisagreementBrowser:
    """Browse the rows of a judgments table where a judge flips, disagrees with the gold rater, or is unscored.

    ``items``: the item texts (e.g. ``dataset.items``) joined on ``item_id`` to show candidates side by
    side and every gold/reference field (:func:`gold_fields`). ``gold``: the judge compared against (human
    or gold labels; default "gold" when the table has gold rows, else "human"). Matching items are listed
    in natural order; the |Δ| threshold is shown only for "judge vs gold" on numeric scores.
    """

    def __init__(self, table: pd.DataFrame, items: pd.DataFrame | None = None, *, gold: str | None = None,
                 threshold: float = 1.0) -> None:
        self.table = table
        self.items = None if items is None else items.assign(item_id=items["item_id"].astype(str)).set_index("item_id")
        judges = sorted(j for j in table["judge"].dropna().unique() if not str(j).startswith(("human", "gold")))
        if not judges:
            raise ValueError("the table has no judge rows besides human/gold references")
        default_gold = gold or ("gold" if (table["judge"] == "gold").any() else "human")
        # "position flips" needs both orders: data judged in one order is not offered a filter that finds nothing
        conditions = distinct_text(table["condition"])
        self.filters = [f for f in FILTERS if f != "position flips" or {"original", "swapped"} <= conditions]
        self.kind = w.Dropdown(options=self.filters, value="judge vs gold", description="show")
        self.judge = w.Dropdown(options=judges, description="judge")
        self.gold = w.Text(value=default_gold, description="gold")
        self.threshold = w.FloatSlider(value=threshold, min=0.0, max=4.0, step=0.5, description="|Δ| ≥")
        # as wide as the longest item id (SummEval's are 50+ characters), not cut at the default width
        self.matches = w.Select(options=[], rows=8, description="items", layout=w.Layout(width="max-content"))
        self.count = w.HTML()
        self.view = w.HTML()
        self.found = pd.DataFrame()
        for control in (self.kind, self.judge, self.gold, self.threshold):
            control.observe(lambda _: self.refresh(), names="value")
        self.matches.observe(lambda _: self.show(), names="value")
        self._numeric = {str(j): bool(scored(table[table["judge"] == j])["score"].notna().any()) for j in judges}
        self.widget = w.VBox([w.HBox([self.kind, self.judge]), w.HBox([self.gold, self.threshold]),
                              self.count, self.matches, self.view])
        self.refresh()

    def threshold_applies(self) -> bool:
        """Whether the |Δ| threshold means anything now: "judge vs gold" on a judge with numeric scores."""
        return self.kind.value == "judge vs gold" and self._numeric.get(str(self.judge.value), False)

    def refresh(self) -> None:
        """Recompute the matching items for the current filter and show the first."""
        self.threshold.layout.display = "" if self.threshold_applies() else "none"
        try:
            self.found = find_disagreements(self.table, self.kind.value, self.judge.value,
                                            gold=self.gold.value, threshold=float(self.threshold.value))
        except ValueError as exc:
            self.found = pd.DataFrame()
            self.count.value = f"<b>{html.escape(str(exc))}</b>"
            self.matches.options, self.view.value = [], ""
            self.matches.layout.display = "none"
            return
        ids = sorted(set(self.found["item_id"].astype(str)), key=natural_key) if len(self.found) else []
        self.count.value = f"<b>{len(ids)}</b> item(s), {len(self.found)} row(s) match “{html.escape(self.kind.value)}”"
        self.matches.options = ids
        self.matches.value = ids[0] if ids else None
        self.matches.layout.display = "" if ids else "none"  # no empty list squeezed to a sliver
        if not ids:
            self.view.value = "<i>nothing matches this filter</i>"

    def show(self) -> None:
        """Render the selected item: its texts side by side, then every row of the judge and the gold rater."""
        item_id = self.matches.value
        if item_id is None:
            return
        parts = [f"<h4>{html.escape(str(item_id))}</h4>", self._texts(str(item_id))]
        rows = self.table[(self.table["item_id"].astype(str) == item_id) &
                          self.table["judge"].isin([self.judge.value, self.gold.value])]
        columns = [c for c in _ROW_COLUMNS if c in rows.columns and rows[c].notna().any()]  # no all-empty columns
        parts.append(_table_html(rows[["judge", *columns]]))
        for _, r in rows[rows["judge"] == self.judge.value].iterrows():
            label = f"{r['condition']} · {r['criterion']}" + (f" · {r['side']}" if pd.notna(r["side"]) else "")
            extra = row_detail(r).get("published_winner")
            parts.append(f"<b>raw output ({html.escape(label)})</b>"
                         + (f" published winner: {html.escape(str(extra))}" if extra else "")
                         + (f"<br><i>{SWAPPED_NOTE}</i>" if str(r["condition"]) == "swapped" else "")
                         + _pre(r["raw_output"]))
        self.view.value = "\n".join(parts)

    def _texts(self, item_id: str) -> str:
        if self.items is None or item_id not in self.items.index:
            return "<i>(no item texts: pass items= to see the candidates)</i>"
        item = self.items.loc[item_id]
        if isinstance(item, pd.DataFrame):  # an item id listed twice: show its first record
            item = item.iloc[0]
        out = [f"<b>{f}</b>{_pre(item[f])}" for f in _CONTEXT_FIELDS if f in item.index]
        for a, b in _PAIR_FIELDS:
            if a in item.index and b in item.index:
                cell = "<td style='vertical-align:top;width:50%'><b>{}</b>{}</td>"
                out.append("<table style='width:100%'><tr>" + cell.format(a, _pre(item[a])) +
                           cell.format(b, _pre(item[b])) + "</tr></table>")
                break
        else:
            out += [f"<b>{f}</b>{_pre(item[f])}" for f in _SINGLE_FIELDS if f in item.index]
        present = [f for f in gold_fields(item.index) if not _is_empty(item[f])]
        out += [f"<b>{html.escape(f)}</b> <i>(gold / reference)</i>{_pre(_as_text(item[f]), box=False)}" for f in present]
        return "".join(out)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _is_empty(value: Any) -> bool:
    if isinstance(value, list | tuple | dict):
        return len(value) == 0
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # array-likes: empty only when they have no element
        return len(value) == 0


def _as_text(value: Any) -> str:
    """A gold field as text: one line per answer for a list (gold_answers) -- or for a text holding a JSON list
    of strings, as loaders that keep cells flat store them (SummEval's references) --, else the value."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        try:
            decoded = json.loads(value)
        except ValueError:
            decoded = None
        if isinstance(decoded, list) and decoded and all(isinstance(v, str) for v in decoded):
            value = decoded
    if isinstance(value, list | tuple):
        return "\n".join(f"• {v}" for v in value)
    return str(value)
