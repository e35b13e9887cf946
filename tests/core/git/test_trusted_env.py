"""A trusted folder's own hooks and filters run (trust is what turns them on), and even
then no git child sees melgui's API keys or the GIT_* variables of melgui's own
environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.config.trust import FolderTrust
from melgui.core.git import run
from melgui.core.worktrees.create import create_worktree
from tests.fakes.hostile_git import API_KEY, hostile_project, leaked_keys, ran
from tests.fakes.worktree_repos import use_test_identity

LEAK = "/nonexistent-leak"


def test_a_trusted_folders_hooks_run_without_keys_or_git_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_test_identity(monkeypatch)
    for name in ("OPENAI_API_KEY", "MELIAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.setenv(name, API_KEY)
    monkeypatch.setenv("GIT_DIR", LEAK)  # melgui's git would fail if this reached it
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.hooksPath={LEAK}'")
    project, markers = hostile_project(tmp_path)
    FolderTrust().trust(project)
    create_worktree(project, 1, "edit things", root=tmp_path / "worktrees")
    seen = ran(markers)
    assert "top-hook-post-checkout" in seen  # trusted: the person's own hooks run
    assert leaked_keys(markers) == []
    envs = [p.read_text() for p in markers.iterdir() if p.name.startswith("env-")]
    assert envs and not any(LEAK in env for env in envs)


def test_the_same_call_runs_the_folders_code_only_once_trusted(tmp_path: Path) -> None:
    project, markers = hostile_project(tmp_path)
    (project / "README.md").write_text("changed\n")
    run(["status"], project)
    assert ran(markers) == []
    FolderTrust().trust(project)
    run(["status"], project)
    assert "top-fsmonitor" in ran(markers) or "top-include-fsmonitor" in ran(markers)
    FolderTrust().restrict(project)
    for marker in markers.iterdir():
        marker.unlink()
    run(["status"], project)
    assert ran(markers) == []
