"""The frame-budget table: benchmarks report rows, `run_all.py` prints them together.

    from budget import report, stall_row, verdict
    stall_row("chat: longest stall streaming 20,000 tokens", stall_ms, frames=1)
    report("find_files CPU vs ripgrep", ratio, target=1.1)
    return verdict()  # the benchmark's exit code: 0 when every row it reported was met

Every row is a measurement with its target: stalls in frames (stall ÷ 16.7 ms, a frame at
60 Hz), everything else as a ratio against a reference measured in the same run. A row
reported several times (several runs, or `run_all.py --repeat N`) shows the median and
the spread of the runs, and is met when the median is within its target and no run
misses it by more than 10%. Beside a target, a limit row (`limit`) says how far the
same work is from its physical floor (`cat` to /dev/null for a terminal flood, `rg` for
a search, a bare httpx stream for the chat's transport); a note (`note`) is a figure
printed without a target. Beside it stands the machine's load average taken just before
its benchmark started (what other processes were doing: the benchmark's own load comes
after) and, under run_all, how many cores other processes kept busy in the second before.

run_all knows the rows each benchmark must report (EXPECTED_ROWS): a row that a crashed
or silent benchmark never reported is printed as missing, and MISSED.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Literal

FRAME_MS = 1000 / 60
TABLE_ENV = "MELGUI_BENCH_TABLE"
BEFORE_ENV = "MELGUI_BENCH_BEFORE"  # run_all: {"load": ..., "busy": ...} before the script
MISSED_EXIT = 3  # a benchmark that ran to its end but missed a row (a crash exits 1)
Better = Literal["lower", "higher"]

# The rows each benchmark reports when run with its defaults (as run_all runs it).
EXPECTED_ROWS: dict[str, tuple[str, ...]] = {
    "bench_chat_view.py": (
        "chat: longest stall streaming 20,000 tokens",
        "chat: per-character cost, last/first 8,000 characters",
        "chat: longest stall, 20,000 reasoning then 20,000 tokens",
        "chat: reasoning per-character cost, last/first 8,000 characters",
        "chat: answer after reasoning, last/first 8,000 characters",
    ),
    "bench_panes.py": (
        "terminal: longest stall in a 50 MB flood",
        "terminal: pane throughput / emulator alone",
        "panes in the window (no host): longest stall opening 8 workers",
        "panes in the window (no host): longest stall, 8 workers streaming",
        "panes in the window (no host): 99th percentile lateness, 8 workers",
        "panes in the window (no host): longest stall, 8 workers flooding (unpaced)",
    ),
    "bench_host.py": (
        "panes via host: longest stall opening 8 workers",
        "panes via host: longest stall, 8 workers streaming",
        "panes via host: 99th percentile lateness, 8 workers",
        "panes via host: longest stall, 8 workers flooding (unpaced)",
        "worktrees via host: longest stall opening 8 workers",
        "worktrees via host: longest stall, 8 workers streaming",
        "worktrees via host: 99th percentile lateness, 8 workers",
        "host: CPU of 20,000 streamed tokens, host + view / one process",
        "host: reattach, 8 sessions of 1,000 messages, to the first paint on screen",
        "host: launch to first window painted, with host / window alone",
        "host: idle RSS, window + host / window alone",
    ),
    "bench_host_terminal.py": (
        "terminal via host: longest stall in a 50 MB flood",
        "terminal via host: pane throughput / emulator alone",
        "terminal via host: flood time / the same pane in the window",
    ),
    "bench_long_history.py": (
        "history: first paint of 1,000 messages",
        "history: first paint, 10,000 ÷ 1,000 messages",
        "history: longest stall scrolling and showing earlier, 10,000",
        "history: memory of the view, 10,000 ÷ 100 messages",
        "context estimate per leg: 200-turn cost ÷ size ratio",
    ),
    "bench_search.py": (
        "find_files: CPU / rg --threads=1 (worst pattern)",
        "grep: CPU / rg (worst pattern)",
    ),
    "bench_journal.py": ("journal: streaming wall time on / off",),
    "bench_hooks.py": ("hooks: a `true` PreToolUse hook / bare sh -c true",),
    "bench_diagnostics.py": (
        "diagnostics after an edit / pylsp's own answer",
        "diagnostics after an edit / typescript-language-server's own answer",
    ),
    "bench_rule_history.py": ("rules: replaying 10,000 recorded calls / 2 s",),
    "bench_context_breakdown.py": ("context: breakdown of 200 messages, computed and drawn",),
    "bench_rules.py": (
        "rules: deciding a command cold, 200 rules (median)",
        "rules: deciding a command cold, 200 rules (99th pct)",
        "rules: deciding a command cached, 200 rules (99th pct)",
    ),
    "bench_checkpoints.py": (
        "checkpoint: later checkpoint, nothing changed / git status",
        "checkpoint: later checkpoint, 20 files changed / git status",
    ),
    "bench_acp.py": ("acp: 20,000 chunks over stdio vs in-process",),
    "bench_acp_pane.py": (
        "acp pane: 20000 chunks, time vs worker pane",
        "acp pane: longest stall streaming",
        "worker pane: longest stall, same text",
    ),
    "bench_changes.py": (
        "changes: reading a worker's worktree vs git diff+status+log",
        "changes: longest stall opening the Changes view",
        "changes: longest stall showing a 300-hunk file",
    ),
    "bench_signals.py": (
        "terminal: feed with bell counting vs without",
        "board: redraw with 8 agents",
    ),
    "bench_worktrees.py": (
        "worktree: create (10000 files) / git worktree add",
        "worktree: what closing loses / git status",
    ),
    "bench_remote.py": (
        "remote: read-only tool call over ssh / ssh host true",
        "remote: link back to current after a 20 s outage (s)",
    ),
    "bench_remote_terminal.py": (
        "remote: 50 MB flood in a remote pane / ssh host cat",
        "remote: find_files on 10,000 files / ssh host rg --files",
    ),
    "bench_peers.py": tuple(
        f"peers: {work}, melgui {what} / best peer"
        for work in ("50-call turn", "20,000 streamed tokens", "8 parallel turns")
        for what in ("wall", "CPU")
    ),
    "bench_overlaps.py": (
        "overlaps: edit to overlap shown, 8 workers (worst) / 1 s",
        "overlaps: GUI-thread CPU of the costliest step showing one, 8 workers",
    ),
    "bench_worktree_workers.py": (
        "worktrees in the window (no host): longest stall opening 8 workers",
        "worktrees in the window (no host): longest stall, 8 workers streaming",
        "worktrees in the window (no host): 99th percentile lateness, 8 workers",
    ),
}


def _load_now() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return math.nan


_STARTED_AT_LOAD = _load_now()  # when the benchmark imported this module: before its work


def _before() -> tuple[float, float | None]:
    """(load average, cores busy) before this benchmark started."""
    told = os.environ.get(BEFORE_ENV)
    if told:
        before = json.loads(told)
        return float(before["load"]), before.get("busy")
    return _STARTED_AT_LOAD, None


@dataclass(frozen=True)
class Row:
    name: str
    value: float
    target: float
    unit: Literal["frames", "ratio"]
    better: Better
    load: float  # the load average when the row was reported (after the work)
    load_before: float = math.nan  # before the benchmark started: other processes'
    busy: float | None = None  # cores other processes kept busy in the second before
    strict: bool = False  # the target is "<" (or ">"), not "≤"
    missing: str = ""  # why a row the benchmark should have reported is not there
    kind: Literal["target", "limit", "note"] = "target"

    @property
    def met(self) -> bool:
        return self.kind != "target" or (not self.missing and meets(self.value, self))


SLACK = 1.10  # a run may miss by this factor while the median of the runs is met


def within_slack(value: float, row: Row) -> bool:
    """Whether one run of `row` missed its target by at most 10%."""
    if math.isnan(value):
        return False
    if row.better == "lower":
        return value <= row.target * SLACK
    return value >= row.target / SLACK


def meets(value: float, row: Row) -> bool:
    if math.isnan(value):
        return False
    if row.better == "lower":
        return value < row.target if row.strict else value <= row.target
    return value > row.target if row.strict else value >= row.target


_reported: list[Row] = []


def report(
    name: str,
    value: float,
    *,
    target: float,
    unit: Literal["frames", "ratio"] = "ratio",
    better: Better = "lower",
    strict: bool = False,
    kind: Literal["target", "limit", "note"] = "target",
) -> Row:
    """Record one measurement for the table (when run_all collects) and return it."""
    load_before, busy = _before()
    row = Row(name, value, target, unit, better, _load_now(), load_before, busy, strict, kind=kind)
    _reported.append(row)
    path = os.environ.get(TABLE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(row)) + "\n")
    return row


def limit(name: str, value: float) -> Row:
    """How many times its physical floor the work of the row above takes (`name` says
    which floor): no target, printed indented beneath it."""
    return report(name, value, target=math.nan, kind="limit")


def note(name: str, value: float, unit: Literal["frames", "ratio"] = "ratio") -> Row:
    """A figure printed in the table without a target."""
    return report(name, value, target=math.nan, unit=unit, kind="note")


def stall_row(name: str, stall_ms: float, *, frames: float = 1.0) -> Row:
    """A longest event-loop stall, in frames, against a target of `frames` frames."""
    return report(name, stall_ms / FRAME_MS, target=frames, unit="frames")


def stall_note(name: str, stall_ms: float) -> Row:
    """A longest event-loop stall, in frames, printed without a target."""
    return note(name, stall_ms / FRAME_MS, unit="frames")


def verdict() -> int:
    """The exit code of a benchmark: 0 when every row it reported was met, else
    MISSED_EXIT (a crash exits 1, so run_all tells the two apart)."""
    return 0 if all(row.met for row in _reported) else MISSED_EXIT


def missing_row(name: str, reason: str) -> Row:
    """A row its benchmark should have reported and did not (`reason`: why)."""
    load_before, busy = _before()
    return Row(
        name, math.nan, math.nan, "ratio", "lower", _load_now(), load_before, busy, missing=reason
    )


def read_rows(path: str) -> list[Row]:
    rows = []
    with open(path, encoding="utf-8") as source:
        for line in source:
            if line.strip():
                rows.append(Row(**json.loads(line)))
    return rows


def table(rows: Iterable[Row]) -> str:
    """One line per row name, in the order first reported: the median of its runs, the
    target, how many runs and their spread, the median load average before the runs
    started (and cores other processes kept busy then), met or MISSED. A row missing
    from any run is MISSED, with the reason."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.name, []).append(row)
    lines = [
        f"{'measurement':<58}{'median':>9}{'target':>10}{'runs':>6}{'spread':>14}"
        f"{'load':>6}{'busy':>6}  verdict",
        "-" * 119,
    ]
    for name, runs in grouped.items():
        present = [r for r in runs if not r.missing]
        missing = [r for r in runs if r.missing]
        load = _median([r.load_before for r in runs])
        busy = _median([r.busy for r in runs if r.busy is not None])
        context = f"{_number(load, 6, 1)}{_number(busy, 6, 1)}"
        if not present:
            note = f"missing ({missing[0].missing})"
            lines.append(f"{name[:57]:<58}{note[:39]:<39}{context}  MISSED")
            continue
        first = present[0]
        values = [r.value for r in present]
        value = statistics.median(values)
        unit = " fr" if first.unit == "frames" else "×"
        spread = f"{min(values):.2f}-{max(values):.2f}" if len(present) > 1 else ""
        if first.kind != "target":
            label = f"  {name}" if first.kind == "limit" else name
            lines.append(
                f"{label[:57]:<58}{value:>7.2f}{unit:<2}{'':>10}"
                f"{len(present):>4}{spread:>14}{context}  {first.kind}"
            )
            continue
        if first.better == "lower":
            sign = "<" if first.strict else "≤"
        else:
            sign = ">" if first.strict else "≥"
        verdict = "met"
        if not meets(value, first) or missing:
            verdict = "MISSED"
        elif not all(within_slack(v, first) for v in values):
            verdict = "MISSED (a run >10% off)"
        lines.append(
            f"{name[:57]:<58}{value:>7.2f}{unit:<2}{sign:>3}{first.target:>5.2f}{unit:<2}"
            f"{len(present):>4}{spread:>14}{context}  {verdict}"
        )
        if missing:
            lines.append(
                f"{'':<4}missing from {len(missing)} of {len(runs)} runs: {missing[0].missing}"[
                    :119
                ]
            )
    lines.append(
        "(load: load average, busy: cores other processes used, before each benchmark; met:"
        " the median within target and no run more than 10% off; limit: the work as a"
        " multiple of its physical floor, named in the row; note: a figure without target)"
    )
    return "\n".join(lines)


def missed(rows: Iterable[Row]) -> list[str]:
    """The names of the target rows the table marks MISSED: a missing run, a median out
    of target, or a run more than 10% off."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.name, []).append(row)
    names = []
    for name, runs in grouped.items():
        if runs[0].kind != "target":
            continue
        values = [r.value for r in runs if not r.missing]
        if (
            any(r.missing for r in runs)
            or not meets(statistics.median(values), runs[0])
            or not all(within_slack(v, runs[0]) for v in values)
        ):
            names.append(name)
    return names


def _median(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def _number(value: float, width: int, digits: int) -> str:
    return f"{'':>{width}}" if math.isnan(value) else f"{value:>{width}.{digits}f}"


def machine() -> str:
    """Cores and load average now: what the table's load column is measured against."""
    one, five, fifteen = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {one:.1f} {five:.1f} {fifteen:.1f}"


def cores_busy(seconds: float = 1.0) -> float:
    """How many cores the machine's processes kept busy over the next `seconds` (this
    one sleeps): the load other processes put on the machine right now."""
    import time

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return sum(fields[:8]), idle

    try:
        total, idle = sample()
        time.sleep(seconds)
        total2, idle2 = sample()
    except (OSError, ValueError, IndexError):
        return math.nan
    spent = total2 - total
    return (spent - (idle2 - idle)) / spent * (os.cpu_count() or 1) if spent else math.nan
