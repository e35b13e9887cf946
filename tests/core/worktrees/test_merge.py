"""Merging a worker's branch, conflicts left for the person, abort, commit, discard."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import read_changes
from melgui.core.worktrees.merge import (
    UncommittedWork,
    abort_merge,
    commit_worktree,
    discard,
    merge_branch,
    merge_state,
)
from melgui.core.worktrees.model import Worktree
from tests.fakes.worktree_repos import (
    make_repo_with_worktree,
    run_git,
    use_test_identity,
    worker_edits,
)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def _conflicting(tmp_path: Path) -> Worktree:
    """The worker and the main folder both committed a different second line of notes."""
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "notes.md").write_text("# notes\n\nthe worker's line\n")
    (worktree.path / "clean.txt").write_text("no conflict here\n")
    run_git(worktree.path, "add", "-A")
    run_git(worktree.path, "commit", "-q", "-m", "worker notes")
    (worktree.main / "notes.md").write_text("# notes\n\nthe person's line\n")
    run_git(worktree.main, "commit", "-q", "-am", "person notes")
    return worktree


async def test_a_clean_merge(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    await commit_worktree(worktree, "worker: the rest")

    outcome = await merge_branch(worktree)

    assert outcome.merged and outcome.conflicts == ()
    assert "Merged melgui/w1 into main" in outcome.message
    assert (worktree.main / "added.py").read_text() == "print('new')\n"
    assert run_git(worktree.main, "status", "--porcelain") == ""
    with pytest.raises(ChangesError, match="Nothing to merge"):
        await merge_branch(worktree)


async def test_a_conflict_is_shown_not_resolved_and_abort_works(tmp_path: Path) -> None:
    worktree = _conflicting(tmp_path)
    head = run_git(worktree.main, "rev-parse", "HEAD")

    outcome = await merge_branch(worktree)

    assert not outcome.merged
    assert outcome.conflicts == ("notes.md",)
    assert "conflicts in 1 file" in outcome.message
    # As git leaves it: markers in the file, the clean part staged, MERGE_HEAD set.
    text = (worktree.main / "notes.md").read_text()
    assert "<<<<<<<" in text and "the person's line" in text and "the worker's line" in text
    assert (worktree.main / "clean.txt").exists()
    state = await merge_state(worktree.main)
    assert state.merging and state.conflicts == ("notes.md",) and state.branch == "main"
    with pytest.raises(ChangesError, match="middle of a merge"):
        await merge_branch(worktree)

    await abort_merge(worktree.main)

    assert run_git(worktree.main, "rev-parse", "HEAD") == head
    assert (worktree.main / "notes.md").read_text() == "# notes\n\nthe person's line\n"
    assert not (worktree.main / "clean.txt").exists()
    assert not (await merge_state(worktree.main)).merging
    with pytest.raises(ChangesError, match="no merge in progress"):
        await abort_merge(worktree.main)


async def test_uncommitted_worker_edits_are_named_before_a_merge(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    head = run_git(worktree.main, "rev-parse", "HEAD")

    with pytest.raises(UncommittedWork, match=r"uncommitted edits to added.py, numbers.txt"):
        await merge_branch(worktree)
    assert run_git(worktree.main, "rev-parse", "HEAD") == head


async def test_the_persons_uncommitted_edits_are_put_back_over_the_merge(
    tmp_path: Path,
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "notes.md").write_text("worker\n")
    run_git(worktree.path, "commit", "-q", "-am", "worker")
    (worktree.main / "notes.md").write_text("mine, not committed\n")

    outcome = await merge_branch(worktree)

    assert outcome.merged and outcome.conflicts == ("notes.md",)
    assert "conflict with it in notes.md" in outcome.message and "stash" in outcome.message
    text = (worktree.main / "notes.md").read_text()
    assert "mine, not committed" in text and "<<<<<<<" in text
    assert run_git(worktree.main, "stash", "list") != ""


async def test_discard_puts_the_worktree_back_at_its_base(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)

    await discard(worktree)

    changes = await read_changes(worktree)
    assert changes.empty and changes.uncommitted == ()
    assert run_git(worktree.path, "rev-parse", worktree.branch).strip() == worktree.base
    assert (worktree.path / "debug.log").exists()  # ignored files stay
    assert not (worktree.path / "added.py").exists()
