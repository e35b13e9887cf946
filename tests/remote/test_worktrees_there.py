"""A configured host's workers in their own git worktrees, made there by melgui's host
over a real sshd on 127.0.0.1 (the remote user's): named and branched as a local
worker's are, each worker's writes in its own worktree (never in the folder, never in the
other's), its changes read there, and the worktree removed when its pane closes only as
far as the person agreed; a folder that is not a git repository says so. Its branch is
merged into the folder there whole or not at all, or discarded, by the host there; and
the worktrees a closed window left there are listed, and removed only as shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.protocol.views.losses import Loss
from melgui.core.worktrees.changes.git import ChangesError
from melgui.remote.link import Link, LinkError
from melgui.remote.remote_tools import RemoteTools
from melgui.remote.target import parse_folder
from melgui.ui.panes.worker_worktrees import WorktreeThere, make_worktree_there
from tests.fakes.projects import git
from tests.remote.fixtures import Remote, git_folder_there, url


def worktrees_there(remote: Remote) -> Path:
    """Where melgui's host there keeps workers' worktrees: the remote user's data folder."""
    return remote.server.home / ".local" / "share" / "melgui" / "worktrees"


async def open_link(remote: Remote, folder: Path) -> Link:
    link = Link(parse_folder(url(remote, folder)), [*remote.host_argv, "--bridge"])
    await link.open()
    return link


async def write(there: WorktreeThere, path: str, content: str) -> dict[str, object]:
    tools = RemoteTools(there.link, there.works_in)
    outcome = await tools.run("write_file", {"path": path, "content": content})
    return {"status": outcome.status, "content": outcome.content}


async def test_two_workers_on_a_host_work_in_their_own_worktrees_there(remote: Remote) -> None:
    folder = git_folder_there(remote, "wt-two", {"a.txt": "first\n"})
    link = await open_link(remote, folder)
    try:
        one = await make_worktree_there(link, str(folder), 1, "Fix the parser!")
        two = await make_worktree_there(link, str(folder), 2, "Fix the parser!")
        assert isinstance(one, WorktreeThere) and isinstance(two, WorktreeThere)
        assert (await write(one, "a.txt", "first\nby one\n"))["status"] == "ok"
        assert (await write(two, "a.txt", "by two\n"))["status"] == "ok"
        assert (await write(two, "new.txt", "made by two\n"))["status"] == "ok"
        changes = await one.changes()
        other = await two.changes()
    finally:
        await link.aclose()
    # The local naming rules, there: `melgui/<pane>-<slug>` under the data folder there.
    assert one.worktree.branch == "melgui/1-fix-the-parser"
    assert two.worktree.branch == "melgui/2-fix-the-parser"
    assert one.worktree.path.parent.parent == worktrees_there(remote)
    assert one.worktree.main == folder and one.works_in == str(one.worktree.path)
    assert one.worktree.path.stat().st_uid == remote.server.user.pw_uid  # made there, by it
    # Each worker's edits are in its own worktree; the folder and the other's are untouched.
    assert (folder / "a.txt").read_text() == "first\n" and not (folder / "new.txt").exists()
    assert (one.worktree.path / "a.txt").read_text() == "first\nby one\n"
    assert (two.worktree.path / "a.txt").read_text() == "by two\n"
    assert not (one.worktree.path / "new.txt").exists()
    # Its changes, read there: against the base, by file and hunk.
    assert changes.worktree == one.worktree
    assert [(f.path, f.status, f.added) for f in changes.files] == [("a.txt", "modified", 1)]
    assert "+by one" in changes.file("a.txt").hunks[0].lines
    assert sorted(f.path for f in other.files) == ["a.txt", "new.txt"]


async def test_closing_keeps_a_worktree_with_work_unless_the_person_agreed(
    remote: Remote,
) -> None:
    folder = git_folder_there(remote, "wt-close", {"a.txt": "first\n"})
    link = await open_link(remote, folder)
    try:
        idle = await make_worktree_there(link, str(folder), 1, "look around")
        busy = await make_worktree_there(link, str(folder), 2, "change a")
        assert isinstance(idle, WorktreeThere) and isinstance(busy, WorktreeThere)
        await write(busy, "a.txt", "changed\n")
        nothing = await idle.losses("pane 1 (worker 1)")
        removed_idle = await idle.retire([])
        losses = await busy.losses("pane 2 (worker 2)")
        kept = await busy.retire([])
        shown_other = [Loss("changes", "pane 2", "something else")]
        kept_again = await busy.retire(shown_other)
        removed = await busy.retire(losses)
    finally:
        await link.aclose()
    assert nothing == [] and removed_idle and not idle.worktree.path.exists()
    assert [loss.kind for loss in losses] == ["changes"]
    assert "holds" in losses[0].what and losses[0].where == "pane 2 (worker 2)"
    assert not kept and not kept_again  # work the person was not shown stays
    assert removed and not busy.worktree.path.exists()
    branches = git(folder, "-c", "safe.directory=*", "branch", "--list", "melgui/*")
    assert branches.strip() == ""  # both branches went with their worktrees
    assert (folder / "a.txt").read_text() == "first\n"


async def test_a_folder_that_is_no_git_repository_says_so(remote: Remote) -> None:
    folder = remote.folder("wt-plain")
    link = await open_link(remote, folder)
    try:
        made = await make_worktree_there(link, str(folder), 1, "anything")
    finally:
        await link.aclose()
    assert made == f"{folder} is not in a git repository."


async def test_a_worktree_there_cannot_be_read_while_the_link_is_down(remote: Remote) -> None:
    folder = git_folder_there(remote, "wt-down", {"a.txt": "first\n"})
    link = await open_link(remote, folder)
    made = await make_worktree_there(link, str(folder), 1, "wait")
    await link.aclose()
    assert isinstance(made, WorktreeThere)
    losses = await made.losses("pane 1")
    assert [loss.kind for loss in losses] == ["changes"] and "could not be read" in losses[0].what
    assert not await made.retire(losses)  # kept there: nothing is removed unread
    assert made.worktree.path.is_dir()
    with pytest.raises(Exception, match="Cannot read the worker's changes"):
        await made.changes()
    with pytest.raises(LinkError):
        await make_worktree_there(link, str(folder), 2, "again")


def identity(folder: Path) -> None:
    """Who commits in the repository there (its own config: the remote user has none)."""
    for key, value in (("user.name", "Person There"), ("user.email", "p@there.example")):
        git(folder, "-c", "safe.directory=*", "config", key, value)


def state(folder: Path, there: WorktreeThere) -> tuple[str, ...]:
    """What a merge could change: both HEADs and both statuses."""
    mine = ("-c", "safe.directory=*")
    path = there.worktree.path
    return (
        git(folder, *mine, "rev-parse", "HEAD"),
        git(folder, *mine, "status", "--porcelain"),
        git(path, *mine, "rev-parse", "HEAD"),
        git(path, *mine, "status", "--porcelain"),
    )


async def test_a_workers_branch_is_merged_there_whole_or_not_at_all(remote: Remote) -> None:
    folder = git_folder_there(remote, "wt-merge", {"a.txt": "first\n"})
    identity(folder)
    link = await open_link(remote, folder)
    try:
        clean = await make_worktree_there(link, str(folder), 1, "add b")
        clash = await make_worktree_there(link, str(folder), 2, "change a")
        assert isinstance(clean, WorktreeThere) and isinstance(clash, WorktreeThere)
        await write(clean, "b.txt", "by one\n")
        await write(clash, "a.txt", "by two\n")
        with pytest.raises(ChangesError, match=r"uncommitted edits to b\.txt"):
            await clean.merge(None)  # loose edits are committed only when asked
        merged = await clean.merge("The worker's edits")
        # The person edits a.txt in the folder there, uncommitted: worker 2's a.txt merges
        # cleanly, but the person's edit put back over it conflicts.
        (folder / "a.txt").write_text("by the person\n")
        remote.server.give(folder)
        before = state(folder, clash)
        refused = await clash.merge("The worker's edits")
        after = state(folder, clash)
        clash_changes = await clash.changes()
    finally:
        await link.aclose()
    assert merged.merged and merged.message == "Merged melgui/1-add-b into master."
    assert (folder / "b.txt").read_text() == "by one\n"
    log = git(folder, "-c", "safe.directory=*", "log", "--format=%s %an")
    assert log.split("\n")[0] == "The worker's edits Person There"  # a fast-forward
    assert not refused.merged and refused.conflicts == ("a.txt",)
    assert refused.message.startswith("Not merged: your uncommitted edits there conflict")
    assert "Nothing changed" in refused.message
    assert after == before  # folder, its edit, branch and worktree as they were
    assert (folder / "a.txt").read_text() == "by the person\n"
    assert clash_changes.uncommitted == ("a.txt",)  # the commit for it was taken back


async def test_a_conflict_with_the_folders_commits_changes_nothing_there(
    remote: Remote,
) -> None:
    folder = git_folder_there(remote, "wt-conflict", {"a.txt": "first\n"})
    identity(folder)
    link = await open_link(remote, folder)
    try:
        made = await make_worktree_there(link, str(folder), 1, "change a")
        assert isinstance(made, WorktreeThere)
        await write(made, "a.txt", "by the worker\n")
        (folder / "a.txt").write_text("committed by the person\n")
        git(folder, "-c", "safe.directory=*", "commit", "-q", "-am", "the person's")
        remote.server.give(folder)
        before = state(folder, made)
        refused = await made.merge("The worker's edits")
        after = state(folder, made)
    finally:
        await link.aclose()
    assert not refused.merged and refused.conflicts == ("a.txt",)
    assert refused.message.startswith("Not merged: it conflicts in 1 file (a.txt).")
    assert after == before and not (folder / ".git" / "MERGE_HEAD").exists()
    assert (made.worktree.path / "a.txt").read_text() == "by the worker\n"


async def test_a_workers_changes_are_discarded_there(remote: Remote) -> None:
    folder = git_folder_there(remote, "wt-discard", {"a.txt": "first\n"})
    link = await open_link(remote, folder)
    try:
        made = await make_worktree_there(link, str(folder), 1, "change a")
        assert isinstance(made, WorktreeThere)
        await write(made, "a.txt", "changed\n")
        await write(made, "new.txt", "new\n")
        before = await made.changes()
        await made.discard()
        after = await made.changes()
        # The folder itself is no worker's worktree: never reset, merged or removed.
        itself = {"path": str(folder), "branch": "master", "base": made.worktree.base,
                  "main": str(folder)}  # fmt: skip
        with pytest.raises(Exception, match="is not a worker's worktree"):
            await link.about_folder("worktree/discard", str(folder), worktree=itself)
    finally:
        await link.aclose()
    assert sorted(f.path for f in before.files) == ["a.txt", "new.txt"]
    assert after.files == () and after.empty
    assert (made.worktree.path / "a.txt").read_text() == "first\n"
    assert not (made.worktree.path / "new.txt").exists()


async def test_worktrees_left_there_are_listed_and_removed_only_as_shown(
    remote: Remote,
) -> None:
    folder = git_folder_there(remote, "wt-left", {"a.txt": "first\n"})
    link = await open_link(remote, folder)
    try:
        one = await make_worktree_there(link, str(folder), 1, "keep this")
        two = await make_worktree_there(link, str(folder), 2, "and this")
        assert isinstance(one, WorktreeThere) and isinstance(two, WorktreeThere)
        await write(one, "a.txt", "changed\n")
    finally:
        await link.aclose()  # the window that made them is gone; they stay there
    link = await open_link(remote, folder)
    try:
        every = await link.about_folder("worktree/left", str(folder))
        others = await link.about_folder("worktree/left", str(folder), owned=[one.works_in])
        shown = every["left"][0]
        stale = await link.about_folder(
            "worktree/remove", str(folder), worktree=shown["worktree"], shown="nothing"
        )
        still = one.worktree.path.is_dir()
        removed = await link.about_folder(
            "worktree/remove", str(folder), worktree=shown["worktree"], shown=shown["holds"]
        )
    finally:
        await link.aclose()
    by_branch = {item["worktree"]["branch"]: item for item in every["left"]}
    assert sorted(by_branch) == [one.worktree.branch, two.worktree.branch]
    assert by_branch[one.worktree.branch]["task"] == "keep this"
    assert by_branch[one.worktree.branch]["folder"] == one.works_in
    assert "1 uncommitted change" in by_branch[one.worktree.branch]["holds"]
    assert [i["worktree"]["branch"] for i in others["left"]] == [two.worktree.branch]
    assert shown["worktree"]["branch"] == one.worktree.branch
    assert "changed since you were asked" in stale["problem"] and still
    assert removed == {"removed": True} and not one.worktree.path.exists()
    listed = ("branch", "--list", "--format=%(refname:short)", "melgui/*")
    assert git(folder, "-c", "safe.directory=*", *listed).split() == [two.worktree.branch]
