"""A merge done for a window elsewhere goes in whole or not at all: a conflict, in the
folder's commits or with the person's uncommitted edits there, leaves the folder, its
edits and the worker's branch and worktree as they were."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.merge import UncommittedWork
from melgui.core.worktrees.merge_whole import merge_whole
from melgui.core.worktrees.model import Worktree
from tests.fakes.worktree_repos import make_repo_with_worktree, run_git, use_test_identity


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def _state(worktree: Worktree) -> tuple[str, ...]:
    """Everything a merge could change: both HEADs, both statuses, the files' contents."""
    files = sorted(p for p in worktree.main.rglob("*") if ".git" not in p.parts and p.is_file())
    worker = sorted(p for p in worktree.path.rglob("*") if p.name != ".git" and p.is_file())
    return (
        run_git(worktree.main, "rev-parse", "HEAD"),
        run_git(worktree.path, "rev-parse", "HEAD"),
        run_git(worktree.main, "status", "--porcelain"),
        run_git(worktree.path, "status", "--porcelain"),
        run_git(worktree.main, "stash", "list"),
        *(f"{p}:{p.read_text()}" for p in files + worker),
    )


async def test_loose_edits_are_committed_and_merged(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "added.py").write_text("print('new')\n")
    with pytest.raises(UncommittedWork):
        await merge_whole(worktree)
    outcome = await merge_whole(worktree, "the worker's edits")
    assert outcome.merged and outcome.conflicts == ()
    assert (worktree.main / "added.py").read_text() == "print('new')\n"
    assert "the worker's edits" in run_git(worktree.main, "log", "--format=%s")


async def test_a_conflicting_merge_changes_nothing(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "notes.md").write_text("# notes\n\nthe worker's line\n")
    (worktree.main / "notes.md").write_text("# notes\n\nthe person's line\n")
    run_git(worktree.main, "commit", "-q", "-am", "person notes")
    (worktree.main / "numbers.txt").write_text("the person's loose edit\n")
    before = _state(worktree)

    outcome = await merge_whole(worktree, "the worker's edits")

    assert not outcome.merged and outcome.conflicts == ("notes.md",)
    assert outcome.message.startswith("Not merged: it conflicts in 1 file (notes.md).")
    assert "Nothing changed" in outcome.message
    assert _state(worktree) == before  # the commit for the merge is taken back too


async def test_a_merge_conflicting_with_the_persons_edits_there_is_undone(
    tmp_path: Path,
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "notes.md").write_text("# notes\n\nthe worker's line\n")
    run_git(worktree.path, "commit", "-q", "-am", "worker notes")
    (worktree.main / "notes.md").write_text("# notes\n\nthe person's loose line\n")
    before = _state(worktree)

    outcome = await merge_whole(worktree)

    assert not outcome.merged and outcome.conflicts == ("notes.md",)
    assert "your uncommitted edits there conflict with it" in outcome.message
    assert _state(worktree) == before
