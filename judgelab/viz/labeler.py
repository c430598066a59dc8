"""The labelling widget: label items in the notebook, by keyboard or by clicking, into an append-only store.

:class:`Labeler` is a :class:`judgelab.labels.LabelSession` with a view. The keys box takes the shortcuts --
digits for a score or a label (1 = the first label), ``a`` / ``b`` / ``t`` for the pair shown left / right /
a tie, ``n`` to save what is answered and go on, ``u`` to undo, ``s`` to skip -- and every key ends in the
session's own ``label`` / ``undo`` / ``skip``, the methods a script calls. The item's answers are stored as
soon as every question has one (a note is optional: type it before the last answer, or press ``n``).

The judge's verdict is hidden (an annotator who sees it anchors on it); the "judge's verdict" toggle reveals
it and the store records that it was shown, so every later answer on the item says ``verdict_shown``. A
pair's candidates are shown side by side in the item's recorded order, under neutral headings "A" (left) and
"B" (right); the answer is stored in the data's original labels. ``feedback=`` draws a line of statistics
after every answer (``judgelab.labels.feedback.live_feedback``).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as w
import pandas as pd

from judgelab.errors import JudgelabError
from judgelab.labels.feedback import feedback_html, live_feedback
from judgelab.labels.questions import Question
from judgelab.labels.session import LabelSession
from judgelab.viz.widgets import (
    _CONTEXT_FIELDS,
    _PAIR_FIELDS,
    _SINGLE_FIELDS,
    _as_text,
    _is_empty,
    _pre,
    gold_fields,
)

__all__ = ["KEY_HELP", "Labeler"]

KEY_HELP = "keys: digits = score / label, a / b / t = left / right / tie, n = save and next, u = undo, s = skip"


class Labeler(LabelSession):
    """A labelling widget over ``items_or_table`` (see :class:`judgelab.labels.LabelSession` for the arguments).

    ``show_gold``: also show the item's gold / reference fields. ``feedback``: the statistics shown after every
    stored answer -- True for :func:`judgelab.labels.feedback.live_feedback`'s defaults, a mapping of its
    arguments (``{"question": "coherence", "weights": selection}``), or a function of the Labeler returning HTML.
    Display it as the last expression of a cell (or ``labeler.widget``).
    """

    def __init__(self, items_or_table: pd.DataFrame, questions: Any, annotator: str, store: Any, *,
                 items: pd.DataFrame | None = None, judge: str | None = None, order: Any = None, seed: int = 0,
                 show_gold: bool = False,
                 feedback: bool | Mapping[str, Any] | Callable[[Labeler], str] | None = None) -> None:
        super().__init__(items_or_table, questions, annotator, store, items=items, judge=judge, order=order,
                         seed=seed)
        self.show_gold = bool(show_gold)
        self.feedback = feedback
        self.pending: dict[str, Any] = {}
        self._syncing = False  # set while the view shows a key's answer on its buttons (no second answer)
        self.header = w.HTML()
        self.bar = w.IntProgress(min=0, max=len(self.order), description="labelled")
        self.view = w.HTML()
        self.verdict_toggle = w.ToggleButton(value=False, description="judge's verdict", icon="eye",
                                             disabled=self.verdicts.empty,
                                             tooltip="reveal the judge's verdict (recorded with your answers)")
        self.verdict_view = w.HTML()
        self.controls: dict[str, w.Widget] = {q.name: self._control(q) for q in self.questions}
        self.keys = w.Text(value="", placeholder="type shortcut keys here", continuous_update=True,
                           description="keys", layout=w.Layout(width="24em"))
        self.message = w.HTML()
        self.stats = w.HTML()
        buttons = [w.Button(description=d, tooltip=t) for d, t in
                   (("save / next (n)", "store the answers given and go on"), ("undo (u)", "take back your last action"),
                    ("skip (s)", "pass this item by for now"))]
        for button, key in zip(buttons, "nus", strict=True):
            button.on_click(lambda _, k=key: self.press(k))
        self.verdict_toggle.observe(self._toggled, names="value")
        self.keys.observe(self._typed, names="value")
        rows = [w.HBox([w.Label(q.name + (f" ({q.scale[0]}-{q.scale[1]})" if q.scale else "")), self.controls[q.name]])
                for q in self.questions]
        self.widget = w.VBox([self.header, self.bar, self.view, w.HBox([self.verdict_toggle]), self.verdict_view,
                              *rows, w.HBox([self.keys, *buttons]), w.HTML(f"<small>{KEY_HELP}</small>"),
                              self.message, self.stats])
        self._refresh_feedback()
        self.render()

    # ------------------------------------------------------------------------------------------ controls

    def _control(self, q: Question) -> w.Widget:
        if q.kind == "note":
            box = w.Textarea(placeholder="a note (optional)", layout=w.Layout(width="40em", height="4em"))
            box.observe(lambda ch, name=q.name: self.pending.__setitem__(name, ch["new"]) if ch["new"] else
                        self.pending.pop(name, None), names="value")
            return box
        if q.kind == "pairwise":
            options = [("A (left)", "a"), ("B (right)", "b"), ("tie", "t")]
            tooltips = ["the left candidate is better", "the right candidate is better", "neither is better"]
        else:
            options = [(str(v) if q.kind == "score" else f"{key}: {v}", key) for key, v in q.choices()]
            levels = [int(v) if isinstance(v, float) else v for _, v in q.choices()]
            tooltips = [q.anchors.get(level, "") if isinstance(level, int) else str(level) for level in levels]
        buttons = w.ToggleButtons(options=options, value=None, tooltips=tooltips, style={"button_width": "auto"})
        buttons.observe(lambda ch, name=q.name: ch["new"] is not None and not self._syncing
                        and self._answer(name, ch["new"]), names="value")
        return buttons

    def _answer(self, name: str, key: str) -> None:
        """A click or a key on question ``name``: pending until every question has an answer, then stored."""
        q = next(q for q in self.questions if q.name == name)
        value = dict(q.choices())[key]
        if q.kind == "pairwise":  # the key names a position on screen; the store keeps the original label
            shown = self.order_shown(self.current or "") or "AB"
            value = {"A": shown[0], "B": shown[1]}.get(value, value)
        self.pending[name] = value
        control = self.controls[name]
        if control.value != key:
            self._syncing = True
            try:
                control.value = key
            finally:
                self._syncing = False
        if all(n in self.pending for n in self._required()):
            self.press("n")

    # ------------------------------------------------------------------------------------------ actions

    def label(self, item_id: Any, **answers: Any) -> int:
        action = super().label(item_id, **answers)
        self._refresh_feedback()
        self.render()
        return action

    def skip(self, item_id: Any = None) -> int:
        action = super().skip(item_id)
        self.render()
        return action

    def undo(self) -> str | None:
        item = super().undo()
        self._refresh_feedback()
        self.render()
        return item

    def _refresh_feedback(self) -> None:
        if not self.feedback:
            return
        if callable(self.feedback):
            self.stats.value = self.feedback(self)
            return
        options = dict(self.feedback) if isinstance(self.feedback, Mapping) else {}
        try:
            self.stats.value = feedback_html(live_feedback(self, **options))
        except JudgelabError as exc:
            self.stats.value = f"<i>{html.escape(str(exc))}</i>"

    # ------------------------------------------------------------------------------------------ keys

    def _typed(self, change: dict[str, Any]) -> None:
        typed = str(change["new"])
        if not typed:
            return
        self.keys.value = ""  # the box is only a key receiver: empty it again for the next key
        for key in typed:
            self.press(key)

    def press(self, key: str) -> None:
        """One shortcut key, exactly as typed in the keys box."""
        key = key.lower()
        try:
            self.message.value = ""
            if key == "n":
                self._save_and_next()
            elif key == "u":
                item = self.undo()
                self.message.value = "nothing to undo" if item is None else f"undone: back on {html.escape(item)}"
            elif key == "s":
                if self.current is not None:
                    self.skip()
            elif self.current is not None:
                target = self._question_for(key)
                if target is None:
                    self.message.value = f"<b>{html.escape(key)!r} is not a shortcut here.</b> {KEY_HELP}"
                    return
                self._answer(target.name, key)
                return
        except JudgelabError as exc:  # a refused answer is said in the widget, never lost in a traceback
            self.message.value = f"<b>{html.escape(str(exc))}</b>"
        self.render()

    def _question_for(self, key: str) -> Question | None:
        """The question a key answers: the first one without a pending answer that offers the key."""
        offering = [q for q in self.questions if key in dict(q.choices())]
        open_ones = [q for q in offering if q.name not in self.pending]
        return (open_ones or offering or [None])[0]

    def _save_and_next(self) -> None:
        if self.current is None:
            return
        item = self.current
        answers = dict(self.pending)
        self.pending.clear()
        if answers:
            self.label(item, **answers)
        if self.current == item:  # still incomplete: pass it by, as "n" promises to move on
            self.skip(item)

    def _toggled(self, change: dict[str, Any]) -> None:
        if change["new"] and self.current is not None and not self.verdict_was_shown(self.current):
            self.reveal_verdict(self.current)
        self._render_verdict()

    # ------------------------------------------------------------------------------------------ drawing

    def render(self) -> None:
        """Draw the current item, the progress and the cleared controls."""
        done, total = self.progress()
        self.bar.value, self.bar.max = done, total
        self.pending.clear()
        self._syncing = True
        try:
            for control in self.controls.values():
                control.value = "" if isinstance(control, w.Textarea) else None
        finally:
            self._syncing = False
        if self.current is None:
            self.header.value = f"<h4>all {total} items labelled by {html.escape(self.annotator)}</h4>"
            self.view.value = ""
            self.verdict_toggle.value = False
            self._render_verdict()
            return
        self.header.value = (f"<h4>{html.escape(self.current)}</h4><small>{done} of {total} labelled by "
                             f"{html.escape(self.annotator)}</small>")
        self.view.value = self._texts(self.current)
        self.verdict_toggle.value = False  # hidden again on every new item
        self._render_verdict()
        self.keys.focus()

    def _render_verdict(self) -> None:
        if not self.verdict_toggle.value or self.current is None:
            self.verdict_view.value = ""
            return
        rows = self.verdict(self.current)
        cols = [c for c in ("criterion", "side", "condition", "score", "winner", "verdict", "status") if c in rows
                and rows[c].notna().any()]
        self.verdict_view.value = (f"<b>judge {html.escape(str(self.judge))}</b>"
                                   + rows[cols].to_html(index=False, escape=True))

    def _texts(self, item_id: str) -> str:
        if self.items is None or item_id not in self.items.index:
            return "<i>(no item texts: pass items= to see them)</i>"
        item = self.items.loc[item_id]
        out = [f"<b>{f}</b>{_pre(item[f])}" for f in _CONTEXT_FIELDS if f in item.index]
        for a, b in _PAIR_FIELDS:
            if a in item.index and b in item.index:
                left, right = (a, b) if (self.order_shown(item_id) or "AB") == "AB" else (b, a)
                cell = "<td style='vertical-align:top;width:50%'><b>{}</b>{}</td>"
                out.append("<table style='width:100%'><tr>" + cell.format("A", _pre(item[left]))
                           + cell.format("B", _pre(item[right])) + "</tr></table>")
                break
        else:
            out += [f"<b>{f}</b>{_pre(item[f])}" for f in _SINGLE_FIELDS if f in item.index]
        if self.show_gold:
            present = [f for f in gold_fields(item.index) if not _is_empty(item[f])]
            out += [f"<b>{html.escape(f)}</b> <i>(gold / reference)</i>{_pre(_as_text(item[f]), box=False)}"
                    for f in present]
        return "".join(out)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
