"""A real project folder per test, with melgui's config folder inside it to guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return folder


@pytest.fixture
def workspace(project: Path) -> Workspace:
    return Workspace(project, config_dir=project / ".config" / "melgui")


@pytest.fixture
def settings() -> ToolSettings:
    return ToolSettings()
