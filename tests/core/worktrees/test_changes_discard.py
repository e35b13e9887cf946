"""Discarding one hunk or one file of a worker's change in its worktree, on real
repositories: only that part goes, the main folder and the branch's commits stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.changes.discard import describe_part, discard_part
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import read_changes
from tests.fakes.projects import tree
from tests.fakes.worktree_repos import (
    NUMBERED,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
    worker_edits,
)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


async def test_one_hunk_goes_back_to_the_base_and_only_that_hunk(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    main_before = tree(worktree.main)
    changes = await read_changes(worktree)
    numbers = changes.file("numbers.txt")
    assert describe_part(numbers, [0]).startswith("1 hunk of numbers.txt (+1 −1)")

    done = await discard_part(worktree, numbers, [0])

    assert done.describe() == "Discarded in the worker's worktree: 1 hunk of numbers.txt."
    lines = NUMBERED.splitlines(keepends=True)
    lines[11] = "line 12 (worker)\n"  # the other hunk stays
    assert (worktree.path / "numbers.txt").read_text() == "".join(lines)
    again = await read_changes(worktree)
    assert len(again.file("numbers.txt").hunks) == 1
    assert {c.path for c in again.files} == {"numbers.txt", "notes.md", "added.py"}
    assert tree(worktree.main) == main_before
    # The same hunk once more: it is not there any more, so nothing is written.
    with pytest.raises(ChangesError, match="no longer as shown"):
        await discard_part(worktree, numbers, [0])
    assert (worktree.path / "numbers.txt").read_text() == "".join(lines)


async def test_a_file_goes_back_whole_and_a_new_file_is_deleted(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    (worktree.path / "notes.md").unlink()  # committed edit, then deleted: back to base
    changes = await read_changes(worktree)

    await discard_part(worktree, changes.file("numbers.txt"))
    assert (worktree.path / "numbers.txt").read_text() == NUMBERED
    added = changes.file("added.py")
    assert describe_part(added, None) == "the new file added.py: it is deleted from the worktree"
    await discard_part(worktree, added)
    assert not (worktree.path / "added.py").exists()
    assert (worktree.path / "debug.log").exists()  # ignored: not the worker's change
    notes = changes.file("notes.md")
    assert notes.status == "deleted"
    await discard_part(worktree, notes)
    assert (worktree.path / "notes.md").read_text() == "# notes\n\nfirst\n"  # the base's
    assert (await read_changes(worktree)).files == ()
    # The worker's commit stays on its branch; the worktree's files undo it, uncommitted.
    assert run_git(worktree.path, "log", "--format=%s", "-1") == "worker: add a note\n"
    assert run_git(worktree.path, "status", "--porcelain") == " M notes.md\n"


async def test_a_file_changed_since_it_was_read_is_left_alone(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)
    numbers = worktree.path / "numbers.txt"
    later = numbers.read_text().replace("line 1 (worker)", "line 1 (worker, later)")
    numbers.write_text(later)
    with pytest.raises(ChangesError, match="no longer as shown"):
        await discard_part(worktree, changes.file("numbers.txt"))
    assert numbers.read_text() == later


async def test_a_binary_file_is_discarded_whole(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.main / "logo.bin").write_bytes(bytes(range(256)))
    run_git(worktree.main, "add", "logo.bin")
    run_git(worktree.main, "commit", "-qm", "logo")
    base = run_git(worktree.main, "rev-parse", "HEAD").strip()
    run_git(worktree.path, "merge", "-q", "--ff-only", "main")
    worktree = type(worktree)(worktree.path, worktree.branch, base, worktree.main)
    (worktree.path / "logo.bin").write_bytes(bytes(range(255, -1, -1)) * 2)
    (change,) = (await read_changes(worktree)).files
    assert change.binary
    with pytest.raises(ChangesError, match="discarded whole"):
        await discard_part(worktree, change, [])
    await discard_part(worktree, change)
    assert (worktree.path / "logo.bin").read_bytes() == bytes(range(256))
