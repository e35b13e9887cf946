"""The habits CI holds us to: ruff, mypy, and core/tools free of Qt (import-linter)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    result = run(sys.executable, "-m", "ruff", "check", "melgui", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_and_tools_import_no_qt() -> None:
    lint_imports = shutil.which("lint-imports")
    if lint_imports is None:
        pytest.fail("lint-imports (import-linter) is not installed: pip install -e '.[test]'")
    result = run(lint_imports)
    assert result.returncode == 0, result.stdout + result.stderr
