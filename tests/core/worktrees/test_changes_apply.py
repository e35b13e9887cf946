"""Applying a worker's hunk, file or everything to the main folder of a real repository."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from melgui.core.worktrees.changes.apply import (
    DirtyMainFolder,
    apply_all,
    apply_file,
    apply_hunk,
)
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.landed import hunks_in_main
from melgui.core.worktrees.changes.reading import read_changes
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


async def test_one_hunk_lands_and_only_that_hunk(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)

    applied = await apply_hunk(worktree, changes.file("numbers.txt"), 1)

    lines = NUMBERED.splitlines(keepends=True)
    lines[11] = "line 12 (worker)\n"
    assert (worktree.main / "numbers.txt").read_text() == "".join(lines)  # not line 1
    assert applied.paths == ("numbers.txt",) and not applied.stash
    assert run_git(worktree.main, "status", "--porcelain") == " M numbers.txt\n"
    # The same hunk again: refused, with the reason.
    with pytest.raises(ChangesError, match="already has this change"):
        await apply_hunk(worktree, changes.file("numbers.txt"), 1)
    # The other hunk next: the file is uncommitted only through the apply, so it lands.
    await apply_hunk(worktree, changes.file("numbers.txt"), 0)
    lines[0] = "line 1 (worker)\n"
    assert (worktree.main / "numbers.txt").read_text() == "".join(lines)


async def test_an_edit_after_an_apply_makes_the_file_the_persons_again(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)
    await apply_hunk(worktree, changes.file("numbers.txt"), 1)
    edited = (worktree.main / "numbers.txt").read_text() + "mine\n"
    (worktree.main / "numbers.txt").write_text(edited)

    # Hunk 0 is clear of the person's line: it goes in next to it, and the file stays theirs.
    applied = await apply_hunk(worktree, changes.file("numbers.txt"), 0)
    assert applied.kept == ("numbers.txt",)
    text = (worktree.main / "numbers.txt").read_text()
    assert text.startswith("line 1 (worker)\n") and text.endswith("line 12 (worker)\nmine\n")


async def test_a_file_and_everything(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)

    await apply_file(worktree, changes.file("added.py"))
    assert (worktree.main / "added.py").read_text() == "print('new')\n"
    await apply_hunk(worktree, changes.file("numbers.txt"), 1)

    # Everything else: what is there already (the new file, one hunk) is left out.
    applied = await apply_all(worktree, changes)
    assert sorted(applied.paths) == ["notes.md", "numbers.txt"]
    assert "1 hunk of numbers.txt" in applied.describe()
    for name in ("added.py", "notes.md", "numbers.txt"):
        assert (worktree.main / name).read_text() == (worktree.path / name).read_text()
    assert not (worktree.main / "debug.log").exists()
    with pytest.raises(ChangesError, match="has every change already"):
        await apply_all(worktree, changes)


async def test_a_dirty_main_folder_refuses_and_nothing_changes(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)
    mine = NUMBERED + "my own line\n"
    (worktree.main / "numbers.txt").write_text(mine)

    with pytest.raises(
        DirtyMainFolder, match=r"overlaps your uncommitted edits to numbers.txt"
    ) as refused:
        await apply_all(worktree, changes)

    assert refused.value.paths == ("numbers.txt",)
    assert (worktree.main / "numbers.txt").read_text() == mine
    assert not (worktree.main / "added.py").exists()
    assert (worktree.main / "notes.md").read_text() == "# notes\n\nfirst\n"
    assert run_git(worktree.main, "stash", "list") == ""


async def test_with_the_stash_requested_a_conflict_is_marked_and_the_stash_named(
    tmp_path: Path,
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)
    mine = NUMBERED + "my own line\n"
    (worktree.main / "numbers.txt").write_text(mine)
    (worktree.main / "other.txt").write_text("an unrelated edit stays\n")

    applied = await apply_file(worktree, changes.file("numbers.txt"), stash=True)

    # The person's line follows the worker's last line: git's merge of the two conflicts.
    text = (worktree.main / "numbers.txt").read_text()
    assert "<<<<<<<" in text and "line 12 (worker)" in text and "my own line" in text
    assert applied.conflicts == ("numbers.txt",)
    assert "stash@{0}" in applied.stash and "kept in the stash" in applied.describe()
    stashes = run_git(worktree.main, "stash", "list")
    assert "melgui: your edits before applying melgui/w1" in stashes
    assert run_git(worktree.main, "show", "stash@{0}:numbers.txt") == mine
    assert (worktree.main / "other.txt").read_text() == "an unrelated edit stays\n"


async def test_a_failed_apply_after_stashing_puts_the_edits_back(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)
    # The main folder moved on: line 1 differs there, so the first hunk cannot fit.
    (worktree.main / "numbers.txt").write_text(NUMBERED.replace("line 1\n", "line one\n"))
    run_git(worktree.main, "commit", "-q", "-am", "main moved on")
    mine = NUMBERED.replace("line 1\n", "line one\n") + "mine\n"
    (worktree.main / "numbers.txt").write_text(mine)

    with pytest.raises(ChangesError, match="does not fit") as refused:
        await apply_hunk(worktree, changes.file("numbers.txt"), 0, stash=True)

    assert "stashed edits were put back" in str(refused.value)
    assert (worktree.main / "numbers.txt").read_text() == mine
    assert run_git(worktree.main, "stash", "list") == ""


async def test_apply_all_carries_renames_deletions_binaries_modes_and_links(
    tmp_path: Path,
) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    wt = worktree.path
    (wt / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    run_git(wt, "add", "tool.sh")
    run_git(wt, "commit", "-q", "-m", "a script")
    run_git(worktree.main, "merge", "-q", "--ff-only", worktree.branch)
    base = run_git(wt, "rev-parse", "HEAD").strip()
    worktree = dataclasses.replace(worktree, base=base)
    run_git(wt, "mv", "notes.md", "docs-notes.md")
    run_git(wt, "rm", "-q", ".gitignore")
    run_git(wt, "commit", "-q", "-m", "move and delete")
    (wt / "tool.sh").chmod(0o755)
    (wt / "blob.bin").write_bytes(bytes(range(256)) * 3)
    (wt / "empty.txt").write_bytes(b"")
    (wt / "link").symlink_to("numbers.txt")
    (wt / "sp ace é.txt").write_text("unusual name\n")
    (wt / 'tab\tand "quote"').write_text("quoted by git\n")

    changes = await read_changes(worktree)
    labels = {change.path: change.label for change in changes.files}
    assert labels["docs-notes.md"] == "renamed" and labels["blob.bin"] == "binary"
    assert labels['tab\tand "quote"'] == labels["sp ace é.txt"] == "added"
    with pytest.raises(ChangesError, match="applied whole"):
        await apply_hunk(worktree, changes.file("docs-notes.md"), 0)
    await apply_all(worktree, changes)

    main = worktree.main
    assert not (main / "notes.md").exists() and not (main / ".gitignore").exists()
    assert (main / "docs-notes.md").read_text() == "# notes\n\nfirst\n"
    assert (main / "blob.bin").read_bytes() == bytes(range(256)) * 3
    assert (main / "empty.txt").read_bytes() == b""
    assert (main / "link").is_symlink() and str((main / "link").readlink()) == "numbers.txt"
    assert (main / "tool.sh").stat().st_mode & 0o111
    assert (main / "sp ace é.txt").read_text() == "unusual name\n"
    assert (main / 'tab\tand "quote"').read_text() == "quoted by git\n"


async def test_hunks_in_main_marks_what_landed(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    changes = await read_changes(worktree)
    numbers = changes.file("numbers.txt")
    assert await hunks_in_main(worktree, numbers) == set()
    await apply_hunk(worktree, numbers, 0)
    assert await hunks_in_main(worktree, numbers) == {0}
