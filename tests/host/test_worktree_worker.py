"""A worker in its own git worktree runs in the host too: its file tools work in the
worktree, the project folder is untouched, and the host keeps where it works."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.touched import FILES_MAX, touched_from_json
from melgui.host.records import worktree_to_json
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip


def worktree_of(tmp_path: Path) -> Worktree:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "README").write_text("hi\n")
    git(project, "add", "README")
    git(project, "commit", "-qm", "start")
    base = git(project, "rev-parse", "HEAD")
    path = tmp_path / "wt"
    git(project, "worktree", "add", "-q", "-b", "melgui/1-notes", str(path))
    return Worktree(path, "melgui/1-notes", base, project)


async def open_worker(client: Any, worktree: Worktree, relay: ScriptedRelay) -> str:
    """A worker session on the relay opened in the host in `worktree`; its id."""
    opened = await client.call(
        "session/open",
        folder=str(worktree.main),
        settings={"connection": "relay", "relay_url": relay.base_url},
        model="m1",
        role="worker",
        worktree=worktree_to_json(worktree),
    )
    return str(opened["id"])


async def test_a_worker_in_its_own_worktree_works_there(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    worktree = worktree_of(tmp_path)
    write = tool_call("write_file", {"path": "notes.txt", "content": "x"}, id="w1")
    scripted_relay.script([tool_calls(write)], [text("Written."), done()])
    client = await host.client()
    try:
        session = await open_worker(client, worktree, scripted_relay)
        await client.attach({session: None})
        await client.call("turn/prompt", session=session, text="write notes")
        while True:
            listed = {s["id"]: s for s in await client.call("session/list")}[session]
            if listed["approvals"]:
                await client.call("approval/answer", session=session, call="w1", decision="approve")
            elif not listed["busy"] and len(scripted_relay.legs_received) >= 2:
                break
            await asyncio.sleep(0.05)
        assert (worktree.path / "notes.txt").read_text() == "x"
        assert not (worktree.main / "notes.txt").exists()
        assert client.gaps == []
    finally:
        await client.aclose()


async def test_a_worktree_that_is_not_there_is_refused(host: HostProcess, tmp_path: Path) -> None:
    client = await host.client()
    try:
        gone = Worktree(tmp_path / "nowhere", "b", "0" * 40, tmp_path)
        try:
            await client.call("session/open", folder=str(tmp_path), worktree=worktree_to_json(gone))
        except Exception as exc:  # the host's error, in plain words
            assert "is not there" in str(exc)
        else:
            raise AssertionError("a missing worktree was accepted")
    finally:
        await client.aclose()


async def test_the_host_reads_a_workers_worktree_for_its_views(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """After the worker's write, the views hear which files its worktree changed (a
    `worktree_files` record), and a view attaching later has them in its snapshot."""
    worktree = worktree_of(tmp_path)
    write = tool_call("write_file", {"path": "notes.txt", "content": "x"}, id="w1")
    edit = tool_call("edit_file", {"path": "README", "old_string": "hi", "new_string": "yo"})
    scripted_relay.script([tool_calls(write, edit)], [text("Written."), done()])
    modes = {"write_file": "auto", "edit_file": "auto"}
    client, late = await host.client(), await host.client("late view")
    try:
        session = await open_worker(client, worktree, scripted_relay)
        await client.call("settings/update", session=session, approval={"modes": modes})
        heard: list[dict[str, Any]] = []
        client.sessions[session] = heard.extend
        await client.attach({session: None})
        await client.call("turn/prompt", session=session, text="write notes")

        def read() -> dict[str, Any] | None:
            said = [r["touched"] for r in heard if r.get("type") == "worktree_files"]
            return said[-1] if said else None

        while len((read() or {"files": []})["files"]) < 2:
            await asyncio.sleep(0.05)
        touched = touched_from_json(read())
        assert touched.base == worktree.base
        assert {p: f.status for p, f in touched.files.items()} == {"README": "M", "notes.txt": "?"}
        assert [(h.start, h.count) for h in touched.files["README"].hunks] == [(1, 1)]
        snapshot = (await late.attach({session: None}))[session]["snapshot"]
        assert touched_from_json(snapshot["worktree_files"]) == touched
        assert not [r for r in snapshot["tail"] if r.get("type") == "worktree_files"]
    finally:
        await late.aclose()
        await client.aclose()


async def test_a_huge_worktree_is_sent_as_a_bounded_reading(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """A worker's worktree that changed more files than a reading lists (FILES_MAX): the
    record and the snapshot list the first ones and count the rest."""
    worktree = worktree_of(tmp_path)
    (worktree.path / "gen").mkdir()
    for number in range(FILES_MAX + 30):
        (worktree.path / "gen" / f"{number:05}.txt").write_text("x\n")
    client = await host.client()
    try:
        session = await open_worker(client, worktree, scripted_relay)
        while True:  # read when it opens
            snapshot = (await client.attach({session: None}))[session]["snapshot"]
            if snapshot["worktree_files"] is not None:
                break
            await asyncio.sleep(0.05)
        sent = snapshot["worktree_files"]
        assert (len(sent["files"]), sent["more"]) == (FILES_MAX, 30)
        assert touched_from_json(sent).count == FILES_MAX + 30
    finally:
        await client.aclose()
