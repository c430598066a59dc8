"""Every released raw judge output judgelab reads, parsed by judgelab and compared with the publisher's parse.

Nothing from the shared data is committed: this module names the files (under ``$JUDGELAB_DATA_DIR``)
and re-reads them; ``checked.csv`` holds the expectations verified by hand.

Sources and the publisher's parse each is compared with:

- **LLMBar** (princeton-nlp/LLMBar) ``Dataset/**/evaluators/{GPT-4,ChatGPT}/<strategy>/result.json``.
  Comparison strategies: every completion of every round (the Swap strategies' first round too), in
  each order; the publisher's parse is the ``winner`` recorded next to it (LLMBar's
  ``completion_with_parsing``: the first of its per-strategy regexes that matches, "Output (a)" before
  "Output (b)"), mapped back to the original order. judgelab: ``verdict_text.read_winner``.
  Rating strategies: each ``score_1``/``score_2`` reply on the prompt's 0-9 scale; the publisher's parse
  is ``int(reply)``. judgelab: ``verdict_text.read_score(reply, (0, 9))``.
- **LLM_summeval** (DAMO-NLP-SG/LLM_summeval)
  ``eval_model_generations/<judge>/eval_<system>_generations/<criterion>_<method>.txt``, every line, for
  gpt-3.5-turbo-0301 (rts, altrts, mcq, altmcq, stareval) and llama-2-7b/13b/70b-chat (rts). The
  publisher's parse is their ``utils.py`` rule, restated in
  :func:`judgelab.datasets.summeval_parsing.publisher_score`. judgelab: the loader's ``PARSERS``.
- **OpenQA-eval** (ehsk/OpenQA-eval) ``data/NQ301_{gpt-4,text-davinci-003}.tsv``: the judge's reply and
  the authors' recorded reading of it (the ``Acceptable?`` column of that file). judgelab:
  ``verdict_text.read_yes_no`` (the paper's rule: the verdict opens the reply).

A *disagreement* is a row where judgelab's value differs from the publisher's (one of them unparsed
included). Every disagreement must be listed in ``checked.csv`` with the value read by hand; a
*misread* is a disagreement not listed, or listed with other values than the two parsers give.

``checked.csv`` columns: source, file, key, expected (read by hand; empty = no value in the text),
publisher, why, span (the phrase the value comes from). ``why``:

- ``agree``: a sample of agreements, read by hand;
- ``pub-last-digit``: no "score" word, so LLM_summeval's last resort takes the last digit 1-5 -- the
  "5" of "a 4 out of 5", or a stray digit ("$2.6 million", "a 2-0 loss");
- ``pub-first-score-colon``: their first "score:" is a sub-score of a breakdown or a list number
  ("score:\n\n1. Grammar ...") while the reply states its score elsewhere;
- ``pub-first-digit-after-score``: their first digit after "score"/"scoring" in a sentence is another
  number ("the final score (6-1)", "scored 15 penalties") or an earlier, revised score;
- ``pub-no-digit``: their rule finds no digit ("a four out of five");
- ``pub-quoted-verdict``: LLMBar's first matching regex hits a verdict the reply quotes, not its own;
- ``pub-contradicts-text`` / ``no-leading-yes-no``: OpenQA's recorded reading is not what the reply's
  opening says / the reply opens with no Yes or No ("The candidate is partially correct");
- ``out-of-scale``: "10" on LLMBar's 0-9 rating scale: unparsed, never clamped.

Print the table (per source: n, parsed, coverage, agreement with the publisher, the verified
disagreements -- publisher misreads, values only the publisher reads, values only judgelab reads --
and misreads) with::

    JUDGELAB_DATA_DIR=../shared/data python -m tests.rubrics.parse_corpus.corpus

``--unchecked`` prints the disagreements not yet in ``checked.csv`` (to read and add by hand).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from judgelab.datasets.summeval_parsing import PARSERS, publisher_score
from judgelab.rubrics.base import ParseFailure
from judgelab.rubrics.verdict_text import read_score, read_winner, read_yes_no

__all__ = ["CHECKED", "Record", "Summary", "is_disagreement", "is_verified", "load_checked", "records", "summarize",
           "table"]

CHECKED = Path(__file__).with_name("checked.csv")
LLMBAR_JUDGES = ("GPT-4", "ChatGPT")
SUMMEVAL_JUDGES = {"gpt-3.5-turbo-0301": "gpt-3.5", "llama-2-7b-chat-hf": "llama-2-7b",
                   "llama-2-13b-chat-hf": "llama-2-13b", "llama-2-70b-chat-hf": "llama-2-70b"}
OPENQA_JUDGES = ("gpt-4", "text-davinci-003")
_ORDERS = (("swap = False", "original"), ("swap = True", "swapped"))
_SWAP = {"A": "B", "B": "A"}


@dataclass(frozen=True)
class Record:
    """One raw output: where it is, judgelab's value (None: unparsed, ``reason`` says why), the publisher's."""

    source: str
    file: str
    key: str
    text: str
    ours: str | None
    reason: str | None
    publisher: str | None


def _value(v: float | str | None) -> str | None:
    if v is None:
        return None
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _read(fn, *args) -> tuple[str | None, str | None]:  # type: ignore[no-untyped-def]
    try:
        return _value(fn(*args).value), None
    except ParseFailure as failure:
        return None, failure.reason


def _llmbar(root: Path) -> Iterator[Record]:
    base = root / "LLMBar" / "Dataset"
    for path in sorted(base.glob("**/evaluators/*/*/result.json")):
        judge = path.parts[-3]
        if judge not in LLMBAR_JUDGES:
            continue
        rel = path.relative_to(root).as_posix()
        for index, item in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            rounds = [r for r in item["results"] if isinstance(r, dict)]
            for number, result in enumerate(rounds):
                if "score_1" in result:
                    for key in ("score_1", "score_2"):
                        text = str(result[key][0])
                        try:
                            published = str(int(text))
                        except ValueError:
                            published = None
                        ours, reason = _read(read_score, text, (0, 9))
                        yield Record(f"LLMBar {judge} ratings 0-9", rel, f"item {index} {key}", text, ours, reason,
                                     published)
                    continue
                for order_key, order in _ORDERS:
                    verdict = result.get(order_key)
                    if not isinstance(verdict, dict) or "completion" not in verdict:
                        continue
                    text = verdict["completion"][0]
                    shown, reason = _read(read_winner, text)
                    ours = _SWAP.get(shown, shown) if order == "swapped" and shown else shown
                    published = {"1": "A", "2": "B"}.get(str(verdict.get("winner")))
                    key = f"item {index} round {number} {order}"
                    yield Record(f"LLMBar {judge} verdicts", rel, key, text, ours, reason, published)


def _summeval(root: Path) -> Iterator[Record]:
    base = root / "LLM_summeval" / "eval_model_generations"
    for path in sorted(base.glob("*/eval_*_generations/*.txt")):
        judge = SUMMEVAL_JUDGES.get(path.parts[-3])
        if judge is None:
            continue
        method = path.stem.split("_")[1]
        rel = path.relative_to(root).as_posix()
        for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if not line.strip():
                continue
            text = str(json.loads(line).get("resp", ""))
            parsed = PARSERS[method](text)
            published = publisher_score(method, text)
            yield Record(f"LLM_summeval {judge} {method}", rel, f"line {line_number}", text, _value(parsed.score),
                         parsed.reason, None if published in (None, -1.0) else _value(published))


def _openqa(root: Path) -> Iterator[Record]:
    for judge in OPENQA_JUDGES:
        path = root / "OpenQA-eval" / "data" / f"NQ301_{judge}.tsv"
        rel = path.relative_to(root).as_posix()
        with open(path, encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh, delimiter="\t"))[1:]
        for number, row in enumerate(rows):
            recorded = row[-2].strip().lower()
            ours, reason = _read(read_yes_no, row[-1])
            yield Record(f"OpenQA {judge}", rel, f"row {number}", row[-1], ours, reason,
                         recorded if recorded in ("yes", "no") else None)


def records(data_dir: str | os.PathLike[str]) -> list[Record]:
    """Every record of every source, in a stable order."""
    root = Path(data_dir)
    return [*_llmbar(root), *_summeval(root), *_openqa(root)]


def load_checked(path: Path = CHECKED) -> dict[tuple[str, str, str], dict[str, str]]:
    """The hand-verified rows: (source, file, key) -> {expected, publisher, note} ("" = unparsed)."""
    with open(path, encoding="utf-8", newline="") as fh:
        return {(r["source"], r["file"], r["key"]): r for r in csv.DictReader(fh)}


@dataclass
class Summary:
    """Counts per source. Every disagreement is either verified by hand (one of the three kinds) or a misread."""

    source: str
    n: int = 0
    parsed: int = 0
    publisher_parsed: int = 0
    agree: int = 0  # the same value, or both unparsed
    publisher_misread: int = 0  # both read a value, they differ, and the text says judgelab's
    only_publisher: int = 0  # the publisher read a value, judgelab refuses to (out of scale, no verdict)
    only_judgelab: int = 0  # judgelab reads a value the publisher's rule missed
    misreads: int = 0  # a disagreement not verified, or verified with another value

    @property
    def coverage(self) -> float:
        return self.parsed / self.n if self.n else float("nan")


def is_disagreement(r: Record) -> bool:
    return r.ours != r.publisher


def is_verified(r: Record, checked: dict[tuple[str, str, str], dict[str, str]]) -> bool:
    row = checked.get((r.source, r.file, r.key))
    return row is not None and (row["expected"] or None) == r.ours and (row["publisher"] or None) == r.publisher


def summarize(rows: list[Record], checked: dict[tuple[str, str, str], dict[str, str]]) -> dict[str, Summary]:
    out: dict[str, Summary] = {}
    for r in rows:
        s = out.setdefault(r.source, Summary(r.source))
        s.n += 1
        s.parsed += r.ours is not None
        s.publisher_parsed += r.publisher is not None
        if not is_disagreement(r):
            s.agree += 1
        elif not is_verified(r, checked):
            s.misreads += 1
        elif r.ours is None:
            s.only_publisher += 1
        elif r.publisher is None:
            s.only_judgelab += 1
        else:
            s.publisher_misread += 1
    return out


def table(summaries: dict[str, Summary]) -> str:
    head = (f"{'source':30s} {'n':>6s} {'parsed':>6s} {'coverage':>8s} {'agree':>6s} {'pub.misread':>11s} "
            f"{'only.pub':>8s} {'only.jl':>7s} {'misreads':>8s}")
    lines = [head, "-" * len(head)]
    for s in summaries.values():
        lines.append(f"{s.source:30s} {s.n:6d} {s.parsed:6d} {s.coverage:8.2%} {s.agree:6d} {s.publisher_misread:11d} "
                     f"{s.only_publisher:8d} {s.only_judgelab:7d} {s.misreads:8d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("JUDGELAB_DATA_DIR", "../shared/data"))
    parser.add_argument("--unchecked", action="store_true", help="print disagreements not in checked.csv")
    args = parser.parse_args(argv)
    rows = records(args.data_dir)
    checked = load_checked()
    print(table(summarize(rows, checked)))
    if args.unchecked:
        writer = csv.writer(sys.stdout)
        for r in rows:
            if is_disagreement(r) and not is_verified(r, checked):
                writer.writerow([r.source, r.file, r.key, r.ours or "", r.publisher or "", " ".join(r.text.split())[:300]])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
