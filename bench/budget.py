"""The frame-budget table: benchmarks report rows, `run_all.py` prints them together.

    from budget import report, stall_row
    stall_row("chat: longest stall streaming 20,000 tokens", stall_ms, frames=1)
    report("find_files CPU vs ripgrep", ratio, target=1.1)

Every row is a measurement with its target: stalls in frames (stall ÷ 16.7 ms, a frame at
60 Hz), everything else as a ratio against a reference measured in the same run. A row
reported several times (several runs, or `run_all.py --repeat N`) shows the median and
the spread of the runs. The machine's load average when the row was measured stands
beside it: on a busy machine a missed stall may be the machine's, not ours.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

FRAME_MS = 1000 / 60
TABLE_ENV = "MELGUI_BENCH_TABLE"
Better = Literal["lower", "higher"]


@dataclass(frozen=True)
class Row:
    name: str
    value: float
    target: float
    unit: Literal["frames", "ratio"]
    better: Better
    load: float

    @property
    def met(self) -> bool:
        return self.value <= self.target if self.better == "lower" else self.value >= self.target


def report(
    name: str,
    value: float,
    *,
    target: float,
    unit: Literal["frames", "ratio"] = "ratio",
    better: Better = "lower",
) -> Row:
    """Record one measurement for the table (when run_all collects) and return it."""
    row = Row(name, value, target, unit, better, os.getloadavg()[0])
    path = os.environ.get(TABLE_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(row.__dict__) + "\n")
    return row


def stall_row(name: str, stall_ms: float, *, frames: float = 1.0) -> Row:
    """A longest event-loop stall, in frames, against a target of `frames` frames."""
    return report(name, stall_ms / FRAME_MS, target=frames, unit="frames")


def read_rows(path: str) -> list[Row]:
    rows = []
    with open(path, encoding="utf-8") as source:
        for line in source:
            if line.strip():
                rows.append(Row(**json.loads(line)))
    return rows


def table(rows: Iterable[Row]) -> str:
    """One line per row name, in the order first reported: the median of its runs, the
    target, how many runs and their spread, the median load average, met or MISSED."""
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        grouped.setdefault(row.name, []).append(row)
    lines = [
        f"{'measurement':<58}{'median':>9}{'target':>10}{'runs':>6}{'spread':>14}{'load':>7}"
        "  verdict",
        "-" * 114,
    ]
    for name, runs in grouped.items():
        first = runs[0]
        values = [r.value for r in runs]
        value = statistics.median(values)
        load = statistics.median(r.load for r in runs)
        sign = "≤" if first.better == "lower" else "≥"
        unit = " fr" if first.unit == "frames" else "×"
        met = value <= first.target if first.better == "lower" else value >= first.target
        spread = f"{min(values):.2f}-{max(values):.2f}" if len(runs) > 1 else ""
        lines.append(
            f"{name[:57]:<58}{value:>7.2f}{unit:<2}{sign:>3}{first.target:>5.2f}{unit:<2}"
            f"{len(runs):>4}{spread:>14}{load:>7.1f}  {'met' if met else 'MISSED'}"
        )
    return "\n".join(lines)


def machine() -> str:
    """Cores and load average now: what the table's load column is measured against."""
    one, five, fifteen = os.getloadavg()
    return f"{os.cpu_count()} cores, load average {one:.1f} {five:.1f} {fifteen:.1f}"
