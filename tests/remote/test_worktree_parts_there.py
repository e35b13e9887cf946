"""A host worker's change applied onto the folder there a hunk, a file or everything at a
time, and discarded a part at a time, by melgui's host there over a real sshd
(`worktree/apply`, `worktree/discard_part`, `worktree/landed`): done on the host's own
reading of the worktree, only when it is what the view was shown; a change that
conflicts there changes nothing and says so; the folder itself, or a worktree of another
repository, is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.sent import shown_digest
from melgui.host.records import worktree_to_json
from melgui.remote.link import Link
from melgui.ui.panes.worker_worktrees import WorktreeThere, make_worktree_there
from tests.fakes.projects import git
from tests.remote.fixtures import Remote, git_folder_there
from tests.remote.test_worktrees_there import open_link, write

LINES = "".join(f"line {n}\n" for n in range(1, 21))  # two edits far apart: two hunks
EDITED = LINES.replace("line 2\n", "line 2 (worker)\n").replace("line 19\n", "line 19 (worker)\n")


def there_git(folder: Path, *args: str) -> str:
    return git(folder, "-c", "safe.directory=*", *args)


def folder_state(folder: Path) -> tuple[str, ...]:
    """What an apply could change in the folder there: HEAD, status, every file's text."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts)
    texts = tuple(f"{p.relative_to(folder)}={p.read_text()}" for p in files)
    return (there_git(folder, "rev-parse", "HEAD"), there_git(folder, "status", "--porcelain"),
            *texts)  # fmt: skip


async def worker_with_changes(link: Link, folder: Path, pane: int) -> WorktreeThere:
    made = await make_worktree_there(link, str(folder), pane, "edit things")
    assert isinstance(made, WorktreeThere)
    await write(made, "a.txt", EDITED)
    await write(made, "b.txt", "new by the worker\n")
    await write(made, "c.txt", "c by the worker\n")
    return made


async def test_a_hunk_a_file_and_everything_are_applied_onto_the_folder_there(
    remote: Remote,
) -> None:
    folder = git_folder_there(remote, "parts-apply", {"a.txt": LINES, "c.txt": "c\n"})
    link = await open_link(remote, folder)
    try:
        made = await worker_with_changes(link, folder, 1)
        changes = await made.changes()
        a = changes.file("a.txt")
        assert len(a.hunks) == 2
        hunk = await made.apply([a], [1])
        after_hunk = (folder / "a.txt").read_text()
        landed = await made.landed(a)
        whole = await made.apply([a], None)  # what of the file the folder lacks: hunk 0
        after_file = (folder / "a.txt").read_text()
        changes = await made.changes()
        everything = await made.apply(changes.files, None)  # a.txt is there: left out
        again = None
        try:
            await made.apply(changes.files, None)
        except ChangesError as exc:
            again = str(exc)
    finally:
        await link.aclose()
    assert hunk == f"Applied to {folder}: 1 hunk of a.txt."
    assert after_hunk == LINES.replace("line 19\n", "line 19 (worker)\n")
    assert landed == {1}
    assert whole == f"Applied to {folder}: 1 hunk of a.txt."
    assert after_file == EDITED
    assert everything == f"Applied to {folder}: c.txt, b.txt."
    assert (folder / "b.txt").read_text() == "new by the worker\n"
    assert (folder / "c.txt").read_text() == "c by the worker\n"
    assert again == "Nothing to apply: the main folder has every change already."
    # Applied as uncommitted edits there, by the remote user; the worktree is as it was.
    status = there_git(folder, "status", "--porcelain").splitlines()
    assert sorted(line.strip() for line in status if line) == ["?? b.txt", "M a.txt", "M c.txt"]
    assert (folder / "b.txt").stat().st_uid == remote.server.user.pw_uid
    assert (made.worktree.path / "a.txt").read_text() == EDITED


async def test_a_conflicting_apply_changes_nothing_there_and_says_so(remote: Remote) -> None:
    folder = git_folder_there(remote, "parts-conflict", {"a.txt": LINES, "c.txt": "c\n"})
    link = await open_link(remote, folder)
    said: dict[str, str] = {}
    try:
        made = await worker_with_changes(link, folder, 1)
        changes = await made.changes()
        # The person's uncommitted edit there to the line the worker changed in c.txt.
        (folder / "c.txt").write_text("c by the person\n")
        remote.server.give(folder)
        before = folder_state(folder)
        for name, files in (("file", [changes.file("c.txt")]), ("all", list(changes.files))):
            with pytest.raises(ChangesError) as refused:
                await made.apply(files, None)
            said[name] = str(refused.value)
        overlapped = folder_state(folder)
        # The person commits a different a.txt there: the worker's hunk no longer fits.
        (folder / "a.txt").write_text(LINES.replace("line 2\n", "line 2 (person)\n"))
        there_git(folder, "commit", "-q", "-am", "the person's")
        remote.server.give(folder)
        before_fit = folder_state(folder)
        with pytest.raises(ChangesError) as unfit:
            await made.apply([changes.file("a.txt")], [0])
        said["unfit"] = str(unfit.value)
        after_fit = folder_state(folder)
    finally:
        await link.aclose()
    for name in ("file", "all"):
        assert said[name].startswith(
            "Not applied: the worker's change overlaps your uncommitted edits to c.txt in "
            f"{folder}, and does not fit next to them. Nothing changed there."
        )
    assert overlapped == before  # b.txt, a.txt's hunks: none went in beside the refused one
    assert not (folder / "b.txt").exists()
    assert there_git(folder, "stash", "list") == ""
    assert said["unfit"].startswith(
        "Not applied: the change does not fit the main folder's version of a.txt"
    )
    assert after_fit == before_fit


async def test_what_changed_since_it_was_shown_is_not_applied_and_parts_are_discarded(
    remote: Remote,
) -> None:
    folder = git_folder_there(remote, "parts-stale", {"a.txt": LINES, "c.txt": "c\n"})
    link = await open_link(remote, folder)
    try:
        made = await worker_with_changes(link, folder, 1)
        shown = await made.changes()
        await write(made, "c.txt", "c changed again\n")  # after the view read it
        with pytest.raises(ChangesError, match="since you were shown it") as stale:
            await made.apply([shown.file("c.txt")], None)
        with pytest.raises(ChangesError, match="since you were shown it"):
            await made.discard_part(shown.file("c.txt"), None)
        discarded = await made.discard_part(shown.file("a.txt"), [0])
        whole = await made.discard_part(shown.file("b.txt"), None)
        left = await made.changes()
    finally:
        await link.aclose()
    assert "Look at it again (Refresh)" in str(stale.value)
    assert (folder / "c.txt").read_text() == "c\n"
    assert discarded == "Discarded in the worker's worktree: 1 hunk of a.txt."
    assert whole == "Discarded in the worker's worktree: the new file b.txt."
    assert (made.worktree.path / "a.txt").read_text() == EDITED.replace(
        "line 2 (worker)\n", "line 2\n"
    )
    assert not (made.worktree.path / "b.txt").exists()
    assert sorted(f.path for f in left.files) == ["a.txt", "c.txt"]
    assert (folder / "a.txt").read_text() == LINES  # the folder there: untouched


async def test_only_a_workers_own_worktree_of_the_folder_is_applied_from(
    remote: Remote,
) -> None:
    folder = git_folder_there(remote, "parts-refuse", {"a.txt": LINES})
    other = git_folder_there(remote, "parts-other", {"a.txt": LINES})
    link = await open_link(remote, folder)
    try:
        made = await make_worktree_there(link, str(folder), 1, "edit")
        assert isinstance(made, WorktreeThere)
        await write(made, "a.txt", EDITED)
        a = (await made.changes()).file("a.txt")
        params = {"paths": ["a.txt"], "shown": shown_digest([a])}
        itself = {**worktree_to_json(made.worktree), "path": str(folder), "branch": "master"}
        with pytest.raises(Exception, match="is not a worker's worktree"):
            await link.about_folder("worktree/apply", str(folder), worktree=itself, **params)
        with pytest.raises(Exception, match="is not a worker's worktree"):
            await link.about_folder("worktree/discard_part", str(folder), worktree=itself,
                                    **params)  # fmt: skip
        # The worker's worktree, asked about as another folder's: refused too.
        mine = worktree_to_json(made.worktree)
        with pytest.raises(Exception, match=f"is not a worktree of {other}"):
            await link.about_folder("worktree/apply", str(other), worktree=mine, **params)
    finally:
        await link.aclose()
    assert (folder / "a.txt").read_text() == LINES and (other / "a.txt").read_text() == LINES
