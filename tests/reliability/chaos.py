"""One chaos cycle: `judgelab run` (a real subprocess) against the chaos server, killed, rerun, rerun again
and rerun with --retry-unscored, with every invariant checked after every phase.

The phases of a cycle (the server draws every reply from tests/support/reply_space.py, seeded):

1. ``killed``: the run is SIGKILLed once the server has answered a drawn number of requests;
2. ``resumed``: the same command, to completion;
3. ``rerun``: the same command again;
4. ``retry_unscored``: the same command with ``--retry-unscored``.

Invariants (a broken one is a *finding*; :func:`run_cycle` returns them all instead of stopping at the first):

- no traceback: every completed phase exits 0 (or 1 with the run's one-sentence stop, when no answer had
  arrived yet and the server looked unreachable), writes one JSON summary line and no traceback;
- every item has exactly one row per criterion of its request, in the Parquet and the JSONL table alike,
  and both pass ``judgments.load``'s validation;
- ``ok + unscored = judgments``, in the summary and in the table;
- a scored row holds exactly the score its reply held (the stable score of that conversation), and the last
  reply of a conversation decides: a valid answer delivered in time is scored, an invalid one never is;
- every paid reply (a 2xx chat completion delivered whole within the deadline; in the killed phase, at least
  1 s before the kill) is kept: its marker is in the cache or in the table (``raw_output``, the detail's
  ``earlier_raw_outputs``, ``system_fingerprint``, a refusal's reason), at the end of its phase and at the end
  of the cycle;
- a resumed run asks nothing that was paid for before the kill; a rerun contacts exactly the conversations
  whose rows were ``api_error`` (the missing answers) and reproduces every other row exactly;
  ``--retry-unscored`` contacts exactly the conversations that had an unscored row, and counts in
  ``retried_unscored`` exactly those whose unscored answer came from the cache;
- no conversation makes more requests in a phase than the retry and re-ask policy allows;
- the cache passes SQLite's integrity check after every phase, the kill included.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from judgelab import judgments
from judgelab.engine.rows import read_reply
from judgelab.rubrics import load_rubric
from judgelab.rubrics.base import ParseFailure
from tests.reliability.helpers import CRITERIA, cli_command, cli_env, write_jsonl
from tests.support.chaos_server import ChaosServer, Served
from tests.support.reply_space import KINDS, PAID, ReplySpace

MODEL = "openai/chaos-judge"
SCORED = ("factual_accuracy", "instruction_following")  # the criteria whose scores the reply states
MARKER = re.compile(r"chaos-\d+-\d+")
MAX_RETRIES, MAX_REASKS = 2, 1
DELIVERY_MARGIN_S = 1.0  # a reply finished this long before the client's deadline must have been read
KILL_MARGIN_S = 1.0  # a reply finished this long before a SIGKILL must be in the cache
DEADLINE = "timed out (no complete answer within"  # the reason of a call abandoned at its wall-clock limit


@dataclass
class CycleReport:
    seed: int
    items: int
    replies: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    labels: Counter[str] = field(default_factory=Counter)
    rows: int = 0
    findings: list[str] = field(default_factory=list)
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)
    wall_s: float = 0.0


def conflicting_verdicts_refused() -> bool:
    """Whether the direct_score parser refuses an answer that quotes a second, different verdict (issue 21,
    item 6); until it does, the chaos cycles leave that kind out (and say so)."""
    from tests.support.reply_space import _conflicting, _Ctx  # the kind's own builder

    rubric = load_rubric("direct_score")
    item = {"item_id": "probe", "prompt": "Q", "response": "[item:probe] A"}
    request = rubric.requests(item)[0]
    ctx = _Ctx(__import__("random").Random(0), {"messages": request.messages}, "probe", "chaos-0-0", 1.0)
    try:
        read_reply(rubric, _conflicting(ctx), request)
    except ParseFailure:
        return True
    return False


def _items(seed: int, n: int) -> list[dict[str, str]]:
    return [{"item_id": f"c{seed}-{i}", "prompt": f"Question {i}: what is {i} + {i}?",
             "response": f"[item:c{seed}-{i}] It is {2 * i}."} for i in range(n)]


def _cache_markers(path: Path) -> tuple[str, set[str]]:
    """(integrity_check, the markers in every stored value)."""
    if not path.exists():
        return "ok", set()
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        found: set[str] = set()
        for (value,) in con.execute("SELECT value FROM responses"):
            found.update(MARKER.findall(value))
    finally:
        con.close()
    return integrity, found


def _table_markers(table: pd.DataFrame) -> set[str]:
    found: set[str] = set()
    for col in ("raw_output", "detail", "unscored_reason", "system_fingerprint"):
        for value in table[col].dropna():
            found.update(MARKER.findall(str(value)))
    return found


def _must_keep(served: list[Served], timeout_s: float, killed_at: float | None = None) -> list[Served]:
    """The paid replies the client must have kept. In a run that finished: every one delivered whole within the
    deadline (less a margin). In a killed run: those the client provably read, at least KILL_MARGIN_S before the
    kill: its next request on the same connection arrived by then (HTTP/1.1 sends it only after the reply was
    read). A reply merely written to the socket may still sit unread in a busy client's buffers when it dies."""
    out = []
    for s in served:
        if s.label not in PAID or s.marker is None or s.finished is None:
            continue
        if s.finished - s.arrived > timeout_s - DELIVERY_MARGIN_S:
            continue  # the client may have given up on it (its deadline), as it should
        if killed_at is not None and not any(
                t.connection == s.connection and t.index > s.index and t.arrived <= killed_at - KILL_MARGIN_S
                for t in served):
            continue
        out.append(s)
    return out


class Cycle:
    """The phases of one cycle, sharing one server, one items file, one cache and one output folder."""

    def __init__(self, tmp: Path, srv: ChaosServer, seed: int, n_items: int, *, timeout_s: float,
                 concurrency: int, report: CycleReport) -> None:
        self.tmp, self.srv, self.seed, self.timeout_s = tmp, srv, seed, timeout_s
        self.items = _items(seed, n_items)
        self.ids = [it["item_id"] for it in self.items]
        self.data = write_jsonl(tmp / "items.jsonl", self.items)
        self.cache = tmp / "cache.sqlite"
        self.out = tmp / "out"
        self.args = ["run", "--rubric", "direct_score", "--data", str(self.data), "--model", MODEL,
                     "--api-base", srv.base_url, "--concurrency", str(concurrency), "--out", str(self.out),
                     "--cache", str(self.cache), "--timeout", str(timeout_s), "--max-retries", str(MAX_RETRIES),
                     "--retry-base", "0.01"]
        self.env = cli_env(JUDGELAB_RECOVERY_DIR=str(tmp))
        self.report = report
        self.tables: dict[str, pd.DataFrame] = {}
        self.killed_abandoned: set[int] = set()
        self.aborted: set[str] = set()

    def find(self, phase: str, message: str) -> None:
        self.report.findings.append(f"seed {self.seed}, phase {phase}: {message}")

    # -- running ------------------------------------------------------------------------------------
    def killed(self, after_requests: int) -> float | None:
        """Phase 1: start the run, SIGKILL it once the server has answered ``after_requests`` requests."""
        self.srv.phase = "killed"
        proc = subprocess.Popen(cli_command(*self.args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env)
        killed_at = None
        try:
            deadline = time.monotonic() + 300
            while proc.poll() is None and len(self.srv.served("killed")) < after_requests:
                if time.monotonic() > deadline:
                    self.find("killed", "the run did not reach the kill point in 300 s")
                    break
                time.sleep(0.005)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed_at = time.monotonic()
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        if killed_at is None:  # it finished first: a complete phase like the others
            self.check_exit("killed", proc.returncode, "", stderr, allow_stdout=True)
        integrity, found = _cache_markers(self.cache)
        if integrity != "ok":
            self.find("killed", f"cache integrity check after SIGKILL: {integrity}")
        served = self.srv.served("killed")
        # the killed run wrote no table to say which calls it abandoned at their deadline; the server sees it: the
        # same turn asked again after a reply means the client did not take that reply
        asked_again = {s.index for s in served if any(
            t.index > s.index and (t.key, t.reask) == (s.key, s.reask) for t in served)}
        must = _must_keep(served, self.timeout_s, killed_at)
        for s in must:
            if s.marker not in found and s.index not in asked_again:
                self.find("killed", f"paid reply {s.marker} ({s.kind}, {s.key}) finished "
                                    f"{killed_at - s.finished if killed_at else 0:.2f} s before the kill is not cached")
        self.killed_abandoned = asked_again
        self.report.phases["killed"] = {"requests": len(served), "killed": killed_at is not None,
                                        "paid_replies_checked": len(must)}
        return killed_at

    def complete(self, phase: str, *extra: str) -> dict[str, Any] | None:
        """A phase run to completion; its summary (None when it failed to give one)."""
        self.srv.phase = phase
        proc = subprocess.run(cli_command(*self.args, *extra), capture_output=True, text=True, env=self.env,
                              timeout=900)
        summary = self.check_exit(phase, proc.returncode, proc.stdout, proc.stderr)
        self.report.phases[phase] = {"requests": len(self.srv.served(phase)), "exit": proc.returncode,
                                     **({k: summary[k] for k in ("ok", "unscored", "api_calls", "cache_hits")}
                                        if summary else {})}
        if summary is not None and summary.get("aborted"):
            # a run whose first calls all met connection failures stops (the server looks unreachable): its
            # other requests are "not attempted", so it contacts a subset of what it would have
            self.aborted.add(phase)
            self.report.phases[phase]["aborted"] = True
        return summary

    def check_exit(self, phase: str, code: int, stdout: str, stderr: str, allow_stdout: bool = False) -> Any:
        if "Traceback" in stderr:
            self.find(phase, "traceback on stderr: " + stderr[stderr.index("Traceback"):][-1500:])
        lines = stdout.strip().splitlines()
        if allow_stdout and not lines:
            return None
        if len(lines) != 1:
            self.find(phase, f"exit {code}: expected one summary line on stdout, got {stdout[-500:]!r}; "
                             f"stderr ends {stderr[-500:]!r}")
            return None
        summary = json.loads(lines[0])
        if code != 0 and not (code == 1 and summary.get("aborted") and "connection failure" in stderr):
            self.find(phase, f"exit {code}; stderr ends {stderr[-500:]!r}")
        return summary

    # -- checking -----------------------------------------------------------------------------------
    def check_tables(self, phase: str, summary: dict[str, Any] | None) -> pd.DataFrame | None:
        try:
            table = judgments.load(self.out / "judgments.parquet")
            exported = judgments.load(self.out / "judgments.jsonl")
        except Exception as exc:  # noqa: BLE001 - a finding, with the reason
            self.find(phase, f"the tables cannot be loaded: {type(exc).__name__}: {exc}")
            return None
        cols = ["item_id", "criterion", "status", "score", "unscored_reason", "call_id"]
        if not table[cols].reset_index(drop=True).equals(exported[cols].reset_index(drop=True)):
            self.find(phase, "the JSONL table differs from the Parquet table")
        per_item = table.groupby("item_id")["criterion"].apply(sorted).to_dict()
        for item_id in self.ids:
            if per_item.get(item_id) != sorted(CRITERIA):
                self.find(phase, f"item {item_id} has rows {per_item.get(item_id)}, not one per {CRITERIA}")
        if set(per_item) - set(self.ids):
            self.find(phase, f"rows for items never asked: {sorted(set(per_item) - set(self.ids))[:5]}")
        ok = int((table["status"] == "ok").sum())
        if summary is not None and not (summary["ok"] + summary["unscored"] == summary["judgments"] == len(table)
                                        and summary["ok"] == ok):
            self.find(phase, f"summary {summary} does not add up against the table ({len(table)} rows, {ok} ok)")
        self.check_scores(phase, table)
        self.tables[phase] = table
        self.report.rows += len(table)
        return table

    def check_scores(self, phase: str, table: pd.DataFrame) -> None:
        last: dict[str, Served] = {}
        for s in self.srv.served(phase):
            last[s.key] = s
        expected = {it: {c: None for c in SCORED} for it in self.ids}
        for s in self.srv.served():  # a scorable reply's scores are the conversation's (stable) ones
            if s.scores:
                expected[s.key] = dict(s.scores)
        for item_id, rows in table.groupby("item_id"):
            status = set(rows["status"])
            scored = status == {"ok"}
            if "ok" in status and not scored:
                self.find(phase, f"item {item_id}: a request half scored: {sorted(status)}")
            if scored:
                for crit, score in zip(rows["criterion"], rows["score"], strict=True):
                    if crit in SCORED and score != expected[item_id][crit]:
                        self.find(phase, f"item {item_id}: {crit} scored {score}, the reply held "
                                         f"{expected[item_id][crit]}")
            s = last.get(item_id)
            if s is None:
                continue
            in_time = s.finished is not None and s.finished - s.arrived <= self.timeout_s - DELIVERY_MARGIN_S
            if scored and s.label not in ("paid_valid", "paid_maybe"):
                self.find(phase, f"item {item_id} is scored though its last reply was {s.kind} ({s.label})")
            reasons = sorted(set(rows["unscored_reason"].astype(str)))
            if not scored and s.label == "paid_valid" and in_time and not all(r.startswith(DEADLINE) for r in reasons):
                self.find(phase, f"item {item_id} is unscored though its last reply was a valid answer ({s.kind}): "
                                 f"{reasons[:2]}")

    def check_kept(self, phase: str, replies: list[Served]) -> None:
        integrity, found = _cache_markers(self.cache)
        if integrity != "ok":
            self.find(phase, f"cache integrity check: {integrity}")
        table = self.tables.get(phase)
        if table is not None:
            found |= _table_markers(table)
        lost = [s for s in replies if s.marker not in found]
        if lost:
            # a call abandoned at its deadline loses the reply that was still arriving: allowed, when the rows of
            # the phase that made the call say so (one abandoned call per lost reply)
            lost_by = Counter((s.phase, s.key) for s in lost)
            lost = [s for s in lost if s.index not in self.killed_abandoned
                    and lost_by[s.phase, s.key] > self.abandoned(s.phase)[s.key]]
        for s in lost[:10]:
            rows = table.loc[table["item_id"] == s.key, ["status", "attempts", "unscored_reason"]] \
                if table is not None else None
            said = rows.drop_duplicates().to_dict(orient="records") if rows is not None else "no table"
            self.find(phase, f"paid reply {s.marker} ({s.kind}, {s.key}, phase {s.phase}, "
                             f"{'re-ask' if s.reask else 'first turn'}, finished {s.finished - s.arrived:.2f} s after "
                             f"it arrived) is in neither the cache nor the table; its rows: {said}")

    def abandoned(self, phase: str) -> Counter[str]:
        """Per conversation, the calls the phase's rows say were abandoned at the deadline."""
        table = self.tables.get(phase)
        out: Counter[str] = Counter()
        if table is None:
            return out
        for item_id, value in table.drop_duplicates("item_id")[["item_id", "detail"]].itertuples(index=False):
            tries = json.loads(value).get("failed_attempts", []) if isinstance(value, str) else []
            out[item_id] = sum(t.startswith(DEADLINE) for t in tries)
        return out

    def check_bounds(self, phase: str, retry_unscored: bool = False) -> None:
        limit = (MAX_RETRIES + 1) * (MAX_REASKS + 1) * (2 if retry_unscored else 1)
        for key, n in Counter(s.key for s in self.srv.served(phase)).items():
            if n > limit:
                self.find(phase, f"conversation {key} made {n} requests (the policy allows {limit})")

    def contacted(self, phase: str) -> set[str]:
        return {s.key for s in self.srv.served(phase)}


def run_cycle(tmp: Path, seed: int, n_items: int, *, timeout_s: float = 1.5, concurrency: int = 16,
              exclude: tuple[str, ...] = ()) -> CycleReport:
    """One cycle of four phases against a fresh chaos server seeded ``seed``; returns what it served and found."""
    t0 = time.monotonic()
    report = CycleReport(seed, n_items)
    space = ReplySpace(timeout_s, exclude=exclude)
    import random

    rng = random.Random(seed)
    with ChaosServer(space, seed=seed) as srv:
        cycle = Cycle(tmp, srv, seed, n_items, timeout_s=timeout_s, concurrency=concurrency, report=report)
        killed_at = cycle.killed(rng.randrange(max(1, n_items // 4), n_items + 1))

        resumed = cycle.complete("resumed")
        cycle.check_tables("resumed", resumed)
        cycle.check_bounds("resumed")
        cycle.check_kept("resumed", _must_keep(srv.served("resumed"), timeout_s))
        if killed_at is not None:  # nothing paid for before the kill is asked again
            before = {(s.key, s.reask) for s in _must_keep(srv.served("killed"), timeout_s, killed_at)}
            again = {(s.key, s.reask) for s in srv.served("resumed")} & before
            for key, reask in sorted(again)[:10]:
                cycle.find("resumed", f"{key} asked its {'re-ask' if reask else 'first'} turn again though it was "
                                      "paid for before the kill")

        rerun = cycle.complete("rerun")
        cycle.check_tables("rerun", rerun)
        cycle.check_bounds("rerun")
        cycle.check_kept("rerun", _must_keep(srv.served("rerun"), timeout_s))
        before_t, after_t = cycle.tables.get("resumed"), cycle.tables.get("rerun")
        if before_t is not None and after_t is not None:
            missing = set(before_t.loc[before_t["status"] == "api_error", "item_id"])
            contacted = cycle.contacted("rerun")
            if contacted != missing and not ("rerun" in cycle.aborted and contacted <= missing):
                cycle.find("rerun", f"contacted {len(cycle.contacted('rerun'))} conversations, the missing answers "
                                    f"were {len(missing)} (extra {sorted(cycle.contacted('rerun') - missing)[:5]}, "
                                    f"not asked {sorted(missing - cycle.contacted('rerun'))[:5]})")
            cols = ["item_id", "criterion", "status", "score", "unscored_reason"]
            keep_b = before_t.loc[~before_t["item_id"].isin(missing), cols].sort_values(cols[:2]).reset_index(drop=True)
            keep_a = after_t.loc[~after_t["item_id"].isin(missing), cols].sort_values(cols[:2]).reset_index(drop=True)
            if not keep_b.equals(keep_a):
                cycle.find("rerun", "rows served from the cache differ from the run that cached them")

        retried = cycle.complete("retry_unscored", "--retry-unscored")
        cycle.check_tables("retry_unscored", retried)
        cycle.check_bounds("retry_unscored", retry_unscored=True)
        last_t = cycle.tables.get("retry_unscored")
        if after_t is not None and last_t is not None:
            unscored = set(after_t.loc[after_t["status"] != "ok", "item_id"])
            contacted = cycle.contacted("retry_unscored")
            if contacted != unscored and not ("retry_unscored" in cycle.aborted and contacted <= unscored):
                cycle.find("retry_unscored", f"contacted {len(cycle.contacted('retry_unscored'))} conversations, "
                                             f"{len(unscored)} had unscored rows")
            from_cache = set(after_t.loc[after_t["status"].isin(["parse_error", "refusal"]), "item_id"])
            if retried is not None and "retry_unscored" not in cycle.aborted \
                    and retried.get("retried_unscored") != len(from_cache):
                cycle.find("retry_unscored", f"retried_unscored {retried.get('retried_unscored')}, "
                                             f"{len(from_cache)} answers in the cache were unscored")
        # every paid reply of the whole cycle, the replaced ones included, is still somewhere
        everything = [*_must_keep(srv.served("killed"), timeout_s, killed_at),
                      *[s for p in ("resumed", "rerun", "retry_unscored") for s in _must_keep(srv.served(p), timeout_s)]]
        cycle.check_kept("retry_unscored", everything)
        report.replies = srv.count
        report.kinds = srv.kind_counts()
        report.labels = Counter(s.label for s in srv.log)
    report.wall_s = time.monotonic() - t0
    return report


def all_kinds() -> list[str]:
    return list(KINDS)
