"""Checkpoints of a remote folder, taken and restored by the host there, through a local
command that behaves like a container's exec (tests/remote/local_target.py): the shadow
repository is in the data folder there, and a rewind puts the files back there."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from melgui.core.config.settings import Settings
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.sent import record_from_json
from melgui.core.store.paths import data_dir, database_path
from melgui.core.worktrees.changes.sent import changes_from_json
from melgui.host import tool_calls as host_calls
from melgui.host.tool_calls import ToolCalls
from melgui.remote.link import LinkError
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import git
from tests.remote.fixtures import box_link, exec_in_box
from tests.remote.local_target import box_host


@pytest.fixture
def box(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("first\n")
    return folder


async def test_a_write_there_is_checkpointed_there_and_rewound_there(
    tmp_path: Path, box: Path
) -> None:
    edit = {"path": "a.txt", "content": "changed by the agent\n"}
    made = {"path": "new.txt", "content": "made\n"}
    marked = {"call": "call_1", "summary": "write a.txt", "source": "main"}
    calls = ["call_1", "call_2"]
    async with box_link(tmp_path, box) as link:
        wrote = await link.run_call("v/1", str(box), "write_file", edit, checkpoint=marked)
        also = {**marked, "call": "call_2"}
        await link.run_call("v/2", str(box), "write_file", made, checkpoint=also)
        read = await link.run_call("v/3", str(box), "read_file", {"path": "a.txt"})
        assert wrote["status"] == "ok" and read["status"] == "ok"
        assert (box / "a.txt").read_text() == "changed by the agent\n"
        planned = await link.restore_checkpoints(str(box), calls, plan_only=True)
        assert (box / "a.txt").read_text() == "changed by the agent\n"  # a plan only
        restored = await link.restore_checkpoints(str(box), calls)
    assert (box / "a.txt").read_text() == "first\n"
    assert not (box / "new.txt").exists()
    assert planned["files"] == restored["files"] == ["a.txt", "new.txt"]
    assert restored["conflicts"] == [] and isinstance(restored["restored"], int)
    # The checkpoints are the host's, in its data folder there.
    there = Checkpointer(str(box), data_folder=tmp_path / "data")
    try:
        records = there.records()
    finally:
        there.close()
    assert [(r.call_id, r.tool) for r in records] == [
        ("call_1", "write_file"), ("call_2", "write_file"), ("", "restore"),
    ]  # fmt: skip


async def test_a_call_without_a_checkpoint_takes_none_there(tmp_path: Path, box: Path) -> None:
    async with box_link(tmp_path, box) as link:
        await link.run_call("v/1", str(box), "write_file", {"path": "a.txt", "content": "x"})
        restored = await link.restore_checkpoints(str(box), ["v/1"])
    assert restored == {"restored": None, "files": [], "conflicts": [], "skipped": []}
    assert (box / "a.txt").read_text() == "x"


async def test_a_restore_in_a_folder_that_is_not_there_says_so(tmp_path: Path, box: Path) -> None:
    async with box_link(tmp_path, box) as link:
        with pytest.raises(LinkError, match="is not a folder on this host"):
            await link.restore_checkpoints(str(tmp_path / "gone"), ["call_1"])


def test_exec_on_a_remote_folder_checkpoints_its_writes_there(
    scripted_relay: ScriptedRelay, tmp_path: Path, box: Path
) -> None:
    runtime = tmp_path / "run"
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "a.txt", "content": "agent"}, id="w"),
                    tool_call("read_file", {"path": "a.txt"}, id="r"))],
        [text("Wrote."), done()],
    )  # fmt: skip
    with box_host(runtime):
        result = exec_in_box(scripted_relay.base_url, tmp_path, box, "--approve", "all", "write it")
    assert result.returncode == 0, result.stderr
    assert (box / "a.txt").read_text() == "agent"
    there = Checkpointer(str(box), data_folder=tmp_path / "data")
    try:
        records = there.records()
    finally:
        there.close()
    # The write has its checkpoint there, under the model's call id; the read has none.
    assert [(r.call_id, r.tool, r.source) for r in records] == [("w", "write_file", "main")]
    assert [(c.path, c.before is not None) for c in records[0].files] == [("a.txt", True)]


async def test_the_host_drops_checkpoints_there_older_than_kept_at_its_first_checkpoint(
    tmp_path: Path, box: Path
) -> None:
    there = tmp_path / "data"
    seeded = Checkpointer(str(box), data_folder=there)
    try:
        for call in ("old", "recent"):
            async with seeded.guard(call, "write_file", f"write {call}.txt", source="main"):
                (box / f"{call}.txt").write_text(call)
        old = seeded.for_calls(["old"])[0]
    finally:
        seeded.close()
    forty_days = 40 * 24 * 3600.0  # the host's settings keep 30 days, as the defaults do
    with sqlite3.connect(database_path(there)) as db:
        db.execute(
            "UPDATE checkpoints SET started_at = started_at - ? WHERE id = ?", (forty_days, old.id)
        )
    marked = {"call": "call_1", "summary": "write a.txt", "source": "main"}
    async with box_link(tmp_path, box) as link:
        edit = {"path": "a.txt", "content": "changed\n"}
        wrote = await link.run_call("v/1", str(box), "write_file", edit, checkpoint=marked)
    assert wrote["status"] == "ok"
    kept = Checkpointer(str(box), data_folder=there)
    try:
        records = kept.records()
    finally:
        kept.close()
    assert [r.call_id for r in records] == ["recent", "call_1"]


async def test_a_rewind_there_sends_conflicts_three_versions_and_honours_the_choices(
    tmp_path: Path, box: Path
) -> None:
    (box / "b.txt").write_text("b first\n")
    async with box_link(tmp_path, box) as link:
        for n, name in enumerate(("a.txt", "b.txt"), 1):
            edit = {"path": name, "content": f"{name} by the agent\n"}
            marked = {"call": f"call_{n}", "summary": f"write {name}", "source": "main"}
            await link.run_call(f"v/{n}", str(box), "write_file", edit, checkpoint=marked)
        (box / "a.txt").write_text("a by the person\n")  # changed there since: conflicts
        (box / "b.txt").write_text("b by the person\n")
        calls = ["call_1", "call_2"]
        planned = await link.restore_checkpoints(str(box), calls, plan_only=True)
        restored = await link.restore_checkpoints(str(box), calls, {"a.txt": "before"})
    assert planned["conflicts"] == ["a.txt", "b.txt"]
    assert planned["versions"]["a.txt"] == {
        "before": "first\n", "agent": "a.txt by the agent\n", "now": "a by the person\n",
    }  # fmt: skip
    assert (box / "a.txt").read_text() == "first\n"  # chosen: as before the calls
    assert (box / "b.txt").read_text() == "b by the person\n"  # not chosen: kept as it is
    assert restored["files"] == ["a.txt"]


async def test_a_long_lived_host_prunes_a_folders_checkpoints_again_after_so_many(
    box: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(host_calls, "TIDY_EVERY", 2)
    calls = ToolCalls(Settings)
    try:
        await calls.restore(str(box), [])  # the folder's first use: pruned (nothing yet)
        checkpoints = calls.checkpointer(str(box))
        async with checkpoints.guard("old", "write_file", "write old.txt", source="main"):
            (box / "old.txt").write_text("old")
        [old] = checkpoints.for_calls(["old"])
        with sqlite3.connect(database_path(data_dir())) as db:
            db.execute("UPDATE checkpoints SET started_at = ? WHERE id = ?", (0.0, old.id))
        await calls.restore(str(box), [])  # the second use: not due yet
        assert [r.call_id for r in checkpoints.records()] == ["old"]
        await calls.restore(str(box), [])  # the third: due again
        assert checkpoints.records() == []
    finally:
        await calls.aclose()


async def test_a_call_cards_links_read_diff_undo_and_redo_its_checkpoint_there(
    tmp_path: Path, box: Path
) -> None:
    marked = {"call": "call_1", "summary": "write a.txt", "source": "main"}
    edit = {"path": "a.txt", "content": "changed by the agent\n"}
    async with box_link(tmp_path, box) as link:
        await link.run_call("v/1", str(box), "write_file", edit, checkpoint=marked)
        await link.run_call("v/2", str(box), "read_file", {"path": "a.txt"})
        calls = ["call_1", "v/2", "never"]
        [sent] = (await link.about_folder("checkpoint/calls", str(box), calls=calls))["records"]
        record_id = sent["id"]
        diff = await link.about_folder("checkpoint/diff", str(box), record=record_id)
        (box / "a.txt").write_text("changed by the person\n")
        compared = await link.about_folder(
            "checkpoint/diff", str(box), record=record_id, compare=True
        )
        planned = await link.about_folder(
            "checkpoint/restore", str(box), records=[record_id], plan_only=True
        )
        undone = await link.about_folder(
            "checkpoint/restore", str(box), records=[record_id], choices={"a.txt": "before"}
        )
        after_undo = await link.about_folder("checkpoint/calls", str(box), calls=["call_1"])
        text_after_undo = (box / "a.txt").read_text()
        await link.about_folder("checkpoint/restore", str(box), records=[undone["restored"]])
        after_redo = await link.about_folder("checkpoint/calls", str(box), calls=["call_1"])
        with pytest.raises(LinkError, match="no checkpoint #999"):
            await link.about_folder("checkpoint/diff", str(box), record=999)
    record, undo = record_from_json(sent)
    assert (record.call_id, record.tool, record.summary, undo) == (
        "call_1", "write_file", "write a.txt", None,
    )  # fmt: skip
    assert [change.path for change in record.files] == ["a.txt"]
    assert "-first" in diff["text"] and "+changed by the agent" in diff["text"]
    assert "-changed by the agent" in compared["text"]
    assert "+changed by the person" in compared["text"]
    # The person's edit since is a conflict: its three versions come with the plan.
    assert planned["conflicts"] == ["a.txt"] and planned["versions"]["a.txt"]["now"] == (
        "changed by the person\n"
    )
    assert text_after_undo == "first\n"  # chosen: as before the call
    _, undo_record = record_from_json(after_undo["records"][0])
    assert undo_record is not None and undo_record.id == undone["restored"]
    # The redo undid the undo: the card says "Undo this call" again, and the file is as
    # it was before the undo (the person's version).
    assert record_from_json(after_redo["records"][0])[1] is None
    assert (box / "a.txt").read_text() == "changed by the person\n"


async def test_the_host_there_reads_a_folders_uncommitted_changes_for_its_changes_view(
    tmp_path: Path, box: Path
) -> None:
    git(box, "init", "-q")
    git(box, "add", "-A")
    git(box, "commit", "-q", "-m", "start")
    (box / "a.txt").write_text("first\nsecond\n")
    (box / "new.txt").write_text("made there\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    async with box_link(tmp_path, box) as link:
        answer = await link.about_folder("changes/uncommitted", str(box))
        none = await link.about_folder("changes/uncommitted", str(plain))
    changes = changes_from_json(answer["changes"])
    assert changes.worktree.path == box and changes.commits == ()
    assert [(f.path, f.status, f.added, f.removed) for f in changes.files] == [
        ("a.txt", "modified", 1, 0), ("new.txt", "added", 1, 0),
    ]  # fmt: skip
    assert changes.file("a.txt").hunks[0].lines == (" first", "+second")
    assert "is not a git repository" in none["problem"]


async def test_the_host_there_reads_a_folders_diff_of_its_last_commits_or_a_branch(
    tmp_path: Path, box: Path
) -> None:
    # `/review last N` and `/review BRANCH` of a remote folder: git diff runs there.
    git(box, "init", "-q")
    git(box, "add", "-A")
    git(box, "commit", "-q", "-m", "start")
    git(box, "checkout", "-q", "-b", "feature")
    (box / "b.txt").write_text("on the branch\n")
    git(box, "add", "b.txt")
    git(box, "commit", "-q", "-m", "feature")
    git(box, "checkout", "-q", "-")
    (box / "a.txt").write_text("first\nsecond\n")
    git(box, "commit", "-q", "-am", "second")
    plain = tmp_path / "plain"
    plain.mkdir()
    async with box_link(tmp_path, box) as link:
        last = await link.about_folder("changes/diff", str(box), target="last 1")
        branch = await link.about_folder("changes/diff", str(box), target="feature")
        too_far = await link.about_folder("changes/diff", str(box), target="last 5")
        no_branch = await link.about_folder("changes/diff", str(box), target="nosuch")
        no_git = await link.about_folder("changes/diff", str(plain), target="last 1")
        with pytest.raises(LinkError, match="needs a target"):
            await link.about_folder("changes/diff", str(box), target=" ")
    assert "+second" in last["text"] and "b.txt" not in last["text"]
    assert "+on the branch" in branch["text"] and "second" not in branch["text"]
    assert "HEAD~5" in too_far["problem"] and "text" not in too_far
    assert "nosuch" in no_branch["problem"]
    assert no_git["problem"]
