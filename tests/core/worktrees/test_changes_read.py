"""A worktree's changes against its base, read from real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.changes.diff import parse_diff, patch_of
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.landed import landed_hunks
from melgui.core.worktrees.changes.reading import read_changes, uncommitted_in
from tests.fakes.worktree_repos import (
    make_repo_with_worktree,
    run_git,
    use_test_identity,
    worker_edits,
)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


async def test_commits_uncommitted_and_untracked_files_as_files_and_hunks(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    worker_edits(worktree)
    index_before = (worktree.main / ".git" / "worktrees" / "w1" / "index").read_bytes()

    changes = await read_changes(worktree)

    assert [commit.subject for commit in changes.commits] == ["worker: add a note"]
    assert changes.commits[0].sha == run_git(worktree.path, "rev-parse", "HEAD").strip()
    by_path = {change.path: change for change in changes.files}
    assert sorted(by_path) == ["added.py", "notes.md", "numbers.txt"]  # not the ignored log
    notes, numbers, added = by_path["notes.md"], by_path["numbers.txt"], by_path["added.py"]
    assert (notes.status, notes.uncommitted, notes.added, notes.removed) == (
        "modified",
        False,
        1,
        0,
    )
    assert numbers.status == "modified" and numbers.uncommitted
    assert len(numbers.hunks) == 2
    assert numbers.hunks[0].header.startswith("@@ -1,")
    assert "-line 1" in numbers.hunks[0].lines and "+line 1 (worker)" in numbers.hunks[0].lines
    assert "+line 12 (worker)" in numbers.hunks[1].lines
    assert (numbers.added, numbers.removed) == (2, 2)
    assert (added.status, added.uncommitted, added.hunks[0].lines) == (
        "added",
        True,
        ("+print('new')",),
    )
    assert set(changes.uncommitted) == {"numbers.txt", "added.py"}
    # Reading wrote nothing: the worktree's index is byte for byte the same.
    assert (worktree.main / ".git" / "worktrees" / "w1" / "index").read_bytes() == index_before


async def test_deleted_renamed_and_binary_files(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    (worktree.path / "blob.bin").write_bytes(bytes(range(256)))
    run_git(worktree.path, "mv", "notes.md", "NOTES.md")
    run_git(worktree.path, "rm", "-q", ".gitignore")
    run_git(worktree.path, "add", "-A")
    run_git(worktree.path, "commit", "-q", "-m", "move things")

    changes = await read_changes(worktree)

    by_path = {change.path: change for change in changes.files}
    assert by_path["NOTES.md"].status == "renamed"
    assert by_path["NOTES.md"].old_path == "notes.md"
    assert by_path["NOTES.md"].paths == ("notes.md", "NOTES.md")
    assert by_path[".gitignore"].status == "deleted"
    assert by_path["blob.bin"].binary and by_path["blob.bin"].label == "binary"
    assert by_path["blob.bin"].hunks == ()
    assert "GIT binary patch" in patch_of(by_path["blob.bin"])


def test_unusual_paths_and_hunk_patches() -> None:
    diff = (
        'diff --git "a/tab\\there" "b/tab\\there"\n'
        "index 1111111..2222222 100644\n"
        '--- "a/tab\\there"\n'
        '+++ "b/tab\\there"\n'
        "@@ -1 +1 @@\n"
        "-old\n"
        "+new\n"
        "\\ No newline at end of file\n"
        "diff --git a/with space b/with space\n"
        "old mode 100644\n"
        "new mode 100755\n"
    )
    diff += (
        "diff --git a/new name.txt b/new name.txt\n"
        "new file mode 100644\n"
        "--- /dev/null\n"
        "+++ b/new name.txt\t\n"
        "@@ -0,0 +1 @@\n"
        "+x\n"
    )
    first, second, third = parse_diff(diff)
    assert (third.path, third.status, third.added) == ("new name.txt", "added", 1)
    assert first.path == "tab\there" and first.hunks[0].old_count == 1
    assert first.hunks[0].lines[-1] == "\\ No newline at end of file"
    assert (second.path, second.status, second.hunks) == ("with space", "modified", ())
    assert patch_of(first, [0]).endswith("+new\n\\ No newline at end of file\n")


async def test_a_missing_worktree_is_said_plainly(tmp_path: Path) -> None:
    worktree = make_repo_with_worktree(tmp_path)
    run_git(worktree.main, "worktree", "remove", str(worktree.path))
    with pytest.raises(ChangesError, match="does not exist any more"):
        await read_changes(worktree)


def test_landed_hunks_tell_additions_deletions_and_edits_apart() -> None:
    diff = (
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
        "@@ -1,2 +1,3 @@\n a\n+added\n b\n"
        "@@ -5,3 +6,2 @@\n e\n-removed\n g\n"
        "@@ -9,2 +9,2 @@\n i\n-j\n+J\n"
    )
    (change,) = parse_diff(diff)
    base = "a\nb\nc\nd\ne\nremoved\ng\nh\ni\nj\n"
    assert landed_hunks(change, base) == set()
    assert landed_hunks(change, base.replace("a\nb\n", "a\nadded\nb\n")) == {0}
    assert landed_hunks(change, base.replace("removed\n", "")) == {1}
    assert landed_hunks(change, base.replace("j\n", "J\n")) == {2}
    assert landed_hunks(change, None) == set()
    (new_file,) = parse_diff(
        "diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n"
    )
    assert landed_hunks(new_file, "x\n") == {0} and landed_hunks(new_file, "y\n") == set()


def test_an_append_at_the_end_has_landed_only_when_it_ends_the_file() -> None:
    header = "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
    (change,) = parse_diff(header + "@@ -1,3 +1,4 @@\n a\n b\n c\n+d\n")
    assert landed_hunks(change, "a\nb\nc\n") == set()
    assert landed_hunks(change, "a\nb\nc\nd\n") == {0}
    assert landed_hunks(change, "x\na\nb\nc\nd\n") == set()  # it also starts the file


async def test_the_project_folders_uncommitted_changes_read_as_a_worktree(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(ChangesError, match="is not a git repository"):
        await uncommitted_in(plain)
    run_git(plain, "init", "-q", "-b", "main")
    with pytest.raises(ChangesError, match="has no commit yet"):
        await uncommitted_in(plain)
    (plain / "app.py").write_text("x = 1\n")
    (plain / "sub").mkdir()
    run_git(plain, "add", ".")
    run_git(plain, "commit", "-q", "-m", "start")
    (plain / "app.py").write_text("x = 2\n")
    (plain / "sub" / "new.txt").write_text("new\n")

    worktree = await uncommitted_in(plain / "sub")  # from a folder inside: the whole repository
    changes = await read_changes(worktree)

    assert worktree.path == plain.resolve() and worktree.branch == "main"
    assert worktree.base == run_git(plain, "rev-parse", "HEAD").strip()
    assert changes.commits == ()
    assert [(c.path, c.status) for c in changes.files] == [
        ("app.py", "modified"),
        ("sub/new.txt", "added"),
    ]
