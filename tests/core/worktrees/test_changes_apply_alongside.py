"""Applying a worker's change next to the person's own uncommitted edits, then merging,
on real repositories: the person's edits are in the folder at the end of every path."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.changes.apply import Applied, AppliedLedger, apply_parts
from melgui.core.worktrees.changes.reading import read_changes
from melgui.core.worktrees.merge import commit_worktree, merge_branch
from melgui.core.worktrees.model import Worktree
from tests.fakes.worktree_repos import (
    NUMBERED,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
    worker_edits,
)

WORKER_12 = "line 12 (worker)\n"


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def _mine(worktree: Worktree, line: int, text: str) -> None:
    """The person's uncommitted edit of one line of numbers.txt in the main folder."""
    lines = NUMBERED.splitlines(keepends=True)
    lines[line - 1] = text
    (worktree.main / "numbers.txt").write_text("".join(lines))


async def _apply_hunk(
    worktree: Worktree, hunk: int, *, ledger: AppliedLedger, stash: bool = False
) -> Applied:
    changes = await read_changes(worktree)
    return await apply_parts(
        worktree, [(changes.file("numbers.txt"), [hunk])], stash=stash, ledger=ledger
    )


async def test_a_hunk_clear_of_the_persons_edits_lands_without_a_stash(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    _mine(worktree, 6, "line 6 (mine)\n")

    applied = await _apply_hunk(worktree, 1, ledger=AppliedLedger())

    text = (worktree.main / "numbers.txt").read_text()
    assert "line 6 (mine)\n" in text and text.endswith(WORKER_12)
    assert run_git(worktree.main, "stash", "list") == ""
    assert not applied.stash and "your uncommitted edits" in applied.describe()


async def test_an_overlapping_hunk_is_merged_and_the_stash_popped(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    _mine(worktree, 10, "line 10 (mine)\n")  # inside the hunk's context: git apply refuses

    applied = await _apply_hunk(worktree, 1, stash=True, ledger=AppliedLedger())

    text = (worktree.main / "numbers.txt").read_text()
    assert "line 10 (mine)\n" in text and text.endswith(WORKER_12)
    assert "<<<<<<<" not in text
    assert run_git(worktree.main, "stash", "list") == ""
    assert not applied.conflicts and "stash" not in applied.describe()


async def test_a_conflicting_pop_marks_the_file_and_names_the_stash(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    _mine(worktree, 12, "line 12 (mine)\n")

    applied = await _apply_hunk(worktree, 1, stash=True, ledger=AppliedLedger())

    text = (worktree.main / "numbers.txt").read_text()
    assert "<<<<<<<" in text and "line 12 (mine)" in text and "line 12 (worker)" in text
    assert applied.conflicts == ("numbers.txt",)
    stashes = run_git(worktree.main, "stash", "list")
    assert "melgui: your edits before applying" in stashes
    assert "stash@{0}" in applied.describe() and "conflict" in applied.describe()


async def test_merge_works_after_a_hunk_was_applied(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    ledger = AppliedLedger()
    await _apply_hunk(worktree, 1, ledger=ledger)
    changes = await read_changes(worktree)
    await apply_parts(worktree, [(changes.file("added.py"), None)], ledger=ledger)
    await commit_worktree(worktree, "worker: the rest")

    outcome = await merge_branch(worktree, ledger=ledger)

    assert outcome.merged, outcome.message
    for name in ("numbers.txt", "added.py", "notes.md"):
        assert (worktree.main / name).read_text() == (worktree.path / name).read_text()
    assert run_git(worktree.main, "status", "--porcelain") == ""


async def test_merge_keeps_the_persons_edits_next_to_an_applied_hunk(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    _mine(worktree, 6, "line 6 (mine)\n")
    ledger = AppliedLedger()
    await _apply_hunk(worktree, 1, ledger=ledger)
    await commit_worktree(worktree, "worker: the rest")

    outcome = await merge_branch(worktree, ledger=ledger)

    assert outcome.merged, outcome.message
    text = (worktree.main / "numbers.txt").read_text()
    assert "line 6 (mine)\n" in text and text.startswith("line 1 (worker)\n")
    assert text.endswith(WORKER_12)
    assert run_git(worktree.main, "status", "--porcelain") == " M numbers.txt\n"
    assert run_git(worktree.main, "stash", "list") == ""
