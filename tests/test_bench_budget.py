"""The frame-budget table that bench/run_all.py prints: medians, verdicts, frames."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BUDGET = Path(__file__).resolve().parents[1] / "bench" / "budget.py"


@pytest.fixture
def budget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_budget_under_test", BUDGET)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    monkeypatch.setenv(module.TABLE_ENV, str(tmp_path / "rows.jsonl"))
    return module


def test_rows_collect_across_runs_and_show_the_median(budget: ModuleType, tmp_path: Path) -> None:
    for stall_ms in (10.0, 18.0, 12.0):  # frames: 0.6, 1.08, 0.72 -> median 0.72
        budget.stall_row("terminal: longest stall", stall_ms)
    for ratio in (0.9, 0.75, 0.85):
        budget.report("terminal: throughput", ratio, target=0.8, better="higher")
    budget.report("find_files: CPU / rg", 1.3, target=1.1)
    rows = budget.read_rows(str(tmp_path / "rows.jsonl"))
    assert len(rows) == 7 and all(row.load >= 0 for row in rows)
    lines = budget.table(rows).splitlines()[2:-1]
    stall, throughput, search = lines
    assert stall.startswith("terminal: longest stall") and " 0.72 fr" in stall
    assert "0.60-1.08" in stall and stall.endswith("met")
    assert " 0.85×" in throughput and "≥ 0.80×" in throughput and throughput.endswith("met")
    assert " 1.30×" in search and search.endswith("MISSED")
    assert budget.missed(rows) == ["find_files: CPU / rg"]


def test_a_median_within_target_is_missed_when_one_run_misses_by_more_than_a_tenth(
    budget: ModuleType, tmp_path: Path
) -> None:
    for ratio in (1.0, 1.25, 1.05):  # 1.25 is more than 10% over 1.1
        budget.report("grep: CPU / rg", ratio, target=1.1)
    for ratio in (0.9, 0.7, 0.85):  # higher is better: 0.7 is under 0.8 ÷ 1.1 = 0.727
        budget.report("terminal: throughput", ratio, target=0.8, better="higher")
    for ratio in (1.0, 1.2, 1.05):  # 1.2 is within the tenth: met on its median
        budget.report("hooks: ratio", ratio, target=1.1)
    rows = budget.read_rows(str(tmp_path / "rows.jsonl"))
    grep, throughput, hooks = budget.table(rows).splitlines()[2:-1]
    assert grep.endswith("MISSED (a run >10% off)") and " 1.05×" in grep
    assert throughput.endswith("MISSED (a run >10% off)")
    assert hooks.endswith("met")
    assert budget.missed(rows) == ["grep: CPU / rg", "terminal: throughput"]


def test_limit_and_note_rows_have_no_verdict(budget: ModuleType, tmp_path: Path) -> None:
    budget.report("terminal: pane throughput / emulator alone", 0.9, target=0.8, better="higher")
    budget.limit("terminal: flood time / cat > /dev/null (floor)", 41.5)
    budget.note("journal: streaming CPU on / off (no target)", 1.08)
    rows = budget.read_rows(str(tmp_path / "rows.jsonl"))
    target, floor, note = budget.table(rows).splitlines()[2:-1]
    assert target.endswith("met")
    assert floor.startswith("  terminal: flood time") and " 41.50×" in floor
    assert floor.endswith("limit") and note.endswith("note")
    assert budget.missed(rows) == [] and budget.verdict() == 0


def test_a_stall_target_is_in_frames(budget: ModuleType) -> None:
    row = budget.stall_row("opening panes", 30.0, frames=2)
    assert row.unit == "frames" and row.target == 2 and row.met
    assert not budget.stall_row("chat", 17.0).met  # just over one frame of 16.7 ms


def test_a_strict_target_is_not_met_at_the_target(budget: ModuleType, tmp_path: Path) -> None:
    at = budget.report("chat: per-token cost", 1.2, target=1.2, strict=True)
    below = budget.report("chat: reasoning cost", 1.19, target=1.2, strict=True)
    assert not at.met and below.met
    lines = budget.table(budget.read_rows(str(tmp_path / "rows.jsonl"))).splitlines()
    assert "< 1.20×" in lines[2] and lines[2].endswith("MISSED")
    assert lines[3].endswith("met")


def test_the_load_before_the_benchmark_stands_beside_its_rows(
    budget: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(budget.BEFORE_ENV, '{"load": 0.4, "busy": 0.2}')
    row = budget.stall_row("opening panes", 10.0)
    assert row.load_before == 0.4 and row.busy == 0.2
    line = budget.table([row]).splitlines()[2]
    assert "   0.4   0.2  met" in line


def test_a_missing_row_is_missed_with_its_reason(budget: ModuleType) -> None:
    present = budget.stall_row("terminal: longest stall", 10.0)
    gone = budget.missing_row("terminal: throughput", "crashed: exit 1: OSError: pty")
    lines = budget.table([present, gone]).splitlines()[2:]
    assert lines[0].endswith("met")
    assert "missing (crashed: exit 1: OSError: pty)" in lines[1] and lines[1].endswith("MISSED")
    assert not gone.met


def test_a_benchmark_exits_with_its_rows_verdict(budget: ModuleType) -> None:
    budget.report("a", 1.0, target=2.0)
    assert budget.verdict() == 0
    budget.report("b", 3.0, target=2.0)
    assert budget.verdict() == budget.MISSED_EXIT


RUN_ALL = BUDGET.parent / "run_all.py"
CRASHING = """
import sys
sys.path.insert(0, {bench!r})
import budget
budget.report("fake: first row", 1.0, target=2.0)
raise RuntimeError("boom in the middle")
"""


def test_run_all_shows_the_rows_a_crashed_benchmark_never_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.syspath_prepend(str(BUDGET.parent))
    spec = importlib.util.spec_from_file_location("bench_run_all_under_test", RUN_ALL)
    assert spec is not None and spec.loader is not None
    run_all = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, run_all)
    spec.loader.exec_module(run_all)
    monkeypatch.setattr(run_all, "cores_busy", lambda seconds: 0.5)
    script = tmp_path / "bench_fake.py"
    script.write_text(CRASHING.format(bench=str(BUDGET.parent)))
    monkeypatch.setitem(run_all.EXPECTED_ROWS, "bench_fake.py", ("fake: first row", "fake: later"))
    rows_file = tmp_path / "rows.jsonl"
    rows_file.touch()
    rows, failure = run_all.run_one(script, str(rows_file))
    assert failure == "crashed: exit 1: RuntimeError: boom in the middle"
    assert [row.name for row in rows] == ["fake: first row", "fake: later"]
    assert rows[0].met and rows[0].busy == 0.5
    assert rows[1].missing == failure and not rows[1].met
