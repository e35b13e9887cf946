"""Reading and validating desktop entries, shared by the packaging tests."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest


def validator(name: str, package: str) -> str:
    """The validator's path; a missing one fails the test with what to install."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: apt-get install {package} (.ci/run does)")
    return path


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def validate_desktop_file(path: Path) -> None:
    result = run([validator("desktop-file-validate", "desktop-file-utils"), str(path)])
    # The validator exits 0 on hints too; hints and warnings are failures here.
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr
