"""The check that runs when a worker's pane is closed (what would be lost) reads a
hostile, untrusted worktree with git and runs none of the folder's commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.create import create_worktree
from melgui.core.worktrees.risk import changed_files, work_at_risk
from tests.fakes.hostile_git import API_KEY, hostile_project, ran
from tests.fakes.worktree_repos import use_test_identity


def test_the_closing_check_runs_nothing_from_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_test_identity(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    project, markers = hostile_project(tmp_path)
    worktree = create_worktree(project, 1, "edit", root=tmp_path / "worktrees").worktree
    (worktree.path / "README.md").write_text("# readme\nby the worker\n")
    (worktree.path / "fresh.txt").write_text("new\n")
    risk = work_at_risk(worktree)
    assert risk.uncommitted == ["README.md"] and risk.untracked == ["fresh.txt"]
    assert {change.path for change in changed_files(worktree)} >= {"README.md", "fresh.txt"}
    assert ran(markers) == []
