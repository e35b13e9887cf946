"""After a crash: melgui's worktrees of the project are found, others' are not."""

from __future__ import annotations

import shutil
from pathlib import Path

from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import create_worktree
from melgui.core.worktrees.recovery import melgui_worktrees, orphans
from tests.fakes.projects import git, make_project


def test_worktrees_left_behind_are_found_with_their_base_and_task(tmp_path: Path) -> None:
    project = make_project(tmp_path, with_git=True)
    one = create_worktree(project, 1, "first task").worktree
    two = create_worktree(project, 2, "second task").worktree
    git(project, "worktree", "add", "-q", str(tmp_path / "theirs"), "-b", "theirs")
    git(project, "worktree", "add", "-q", str(tmp_path / "melgui-named"), "-b", "melgui/9-x")
    (project / "more.txt").write_text("later\n")
    git(project, "add", "more.txt")
    git(project, "commit", "-qm", "main moved on")
    # The app "crashed": nothing in memory, only what is on disk.
    found = melgui_worktrees(project)
    assert [f.worktree for f in found] == [one, two]
    assert [f.task for f in found] == ["first task", "second task"]
    assert found[0].describe() == "melgui/1-first-task — first task"
    left = orphans(project, owned=[two.path])
    assert [f.worktree for f in left] == [one]


def test_a_lost_note_falls_back_to_the_merge_base_and_a_lost_folder_is_marked(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, with_git=True)
    worktree = create_worktree(project, 1, "t").worktree
    Path(str(worktree.path) + ".json").unlink()
    shutil.rmtree(worktree.path)
    (found,) = melgui_worktrees(project)
    assert found.worktree.base == worktree.base and found.missing and found.task == ""
    remove_worktree(found.worktree)
    assert melgui_worktrees(project) == []


def test_a_folder_without_git_has_none(tmp_path: Path) -> None:
    assert melgui_worktrees(make_project(tmp_path, with_git=False)) == []
