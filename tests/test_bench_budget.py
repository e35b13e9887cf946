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
    for stall_ms in (10.0, 40.0, 12.0):  # frames: 0.6, 2.4, 0.72 -> median 0.72
        budget.stall_row("terminal: longest stall", stall_ms)
    for ratio in (0.9, 0.7, 0.85):
        budget.report("terminal: throughput", ratio, target=0.8, better="higher")
    budget.report("find_files: CPU / rg", 1.3, target=1.1)
    rows = budget.read_rows(str(tmp_path / "rows.jsonl"))
    assert len(rows) == 7 and all(row.load >= 0 for row in rows)
    lines = budget.table(rows).splitlines()[2:]
    stall, throughput, search = lines
    assert stall.startswith("terminal: longest stall") and " 0.72 fr" in stall
    assert "0.60-2.40" in stall and stall.endswith("met")
    assert " 0.85×" in throughput and "≥ 0.80×" in throughput and throughput.endswith("met")
    assert " 1.30×" in search and search.endswith("MISSED")


def test_a_stall_target_is_in_frames(budget: ModuleType) -> None:
    row = budget.stall_row("opening panes", 30.0, frames=2)
    assert row.unit == "frames" and row.target == 2 and row.met
    assert not budget.stall_row("chat", 17.0).met  # just over one frame of 16.7 ms
