"""The agents board's model: states with their times, files changed, tokens, moments."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent
from melgui.core.protocol.views.board_rows import Moment
from melgui.core.thread.thread import Thread
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.touched import FILES_MAX
from melgui.desk.board.agents_board import AgentsBoard
from melgui.desk.board.branch_files import changed_files
from melgui.desk.board.overlap_watch import OverlapWatch
from melgui.desk.desk import Desk
from melgui.host.view_events import LoopFacts
from melgui.ui.board.cells import files_text
from tests.fakes import ScriptedRelay, done, error_event, text, tool_call, tool_calls


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_desk(folder: Path, relay: ScriptedRelay) -> Desk:
    settings = Settings(connection="relay", relay_url=relay.url, model="relay-model")
    return Desk(str(folder), settings, api_key="k", plans=lambda title, markdown: None)


async def test_states_times_files_tokens_and_moments(tmp_path: Path) -> None:
    with ScriptedRelay() as relay:
        write = tool_call("write_file", {"path": "sub/../notes.txt", "content": "x"}, id="w1")
        read = tool_call("read_file", {"path": "notes.txt"}, id="r1")
        relay.script(
            [tool_calls(write, usage={"prompt_tokens": 100, "completion_tokens": 20})],
            [tool_calls(read, usage={"prompt_tokens": 130, "completion_tokens": 5})],
            [text("Written."), done(usage={"prompt_tokens": 150, "completion_tokens": 7})],
            [error_event("the model is overloaded", retryable=False)],
        )
        desk = make_desk(tmp_path, relay)
        session = desk.worker_session(model="relay-model", source="worker 2: notes")
        clock = Clock()
        board = AgentsBoard(clock=clock)
        moments: list[Moment] = []
        changes: list[int] = []
        board.on_moment(moments.append)
        board.on_change(lambda: changes.append(1))
        board.add("pane-2", "Pane 2 · worker 2: notes", session)
        asked: list[ApprovalRequest] = []

        def observe(event: LoopEvent) -> None:
            if isinstance(event, ApprovalNeeded):
                asked.append(event.request)

        session.subscribe(observe)
        first = board.row("pane-2")
        assert first is not None and first.state == "idle" and first.tokens == 0

        clock.now = 1010.0
        session.submit("write notes")
        while not asked:
            await asyncio.sleep(0.01)
        waiting = board.row("pane-2")
        assert waiting is not None
        assert (waiting.state, waiting.since, waiting.waiting) == ("waiting", 1010.0, 1)
        assert moments[0] == Moment(
            "pane-2", "Pane 2 · worker 2: notes", "approval", "write_file", "worker 2: notes", "w1"
        )
        assert board.pending("pane-2") == asked

        clock.now = 1100.0
        asked[0].approve()
        await session.wait_idle()
        row = board.row("pane-2")
        assert row is not None
        assert (row.state, row.since, row.waiting) == ("finished", 1100.0, 0)
        assert row.files_changed == 1  # notes.txt, once; reading it changes nothing
        assert row.tokens == 120 + 135 + 157
        assert row.branch == ""
        assert [m.kind for m in moments] == ["approval", "finished"]
        assert moments[1].detail == "Written."

        session.submit("again")
        await session.wait_idle()
        failed = board.row("pane-2")
        assert failed is not None and failed.state == "failed"
        assert "overloaded" in failed.detail and moments[-1].kind == "failed"
        assert changes, "listeners hear every change"

        board.remove("pane-2")
        assert board.rows() == []
        session.submit("after removal")  # no longer followed: no moment, no error
        await session.wait_idle()
        assert len(moments) == 3
        await session.aclose()
        await desk.aclose()


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _repository_with_worktree(tmp_path: Path) -> Worktree:
    main = tmp_path / "project"
    main.mkdir()
    _git(main, "init", "-q", "-b", "main")
    _git(main, "config", "user.email", "t@example.org")
    _git(main, "config", "user.name", "T")
    (main / "a.txt").write_text("a\n")
    (main / "b.txt").write_text("b\n")
    (main / ".gitignore").write_text("*.log\n")
    _git(main, "add", ".")
    _git(main, "commit", "-qm", "start")
    base = _git(main, "rev-parse", "HEAD")
    path = tmp_path / "worktrees" / "w2"
    _git(main, "worktree", "add", "-q", "-b", "melgui/2-notes", str(path), base)
    return Worktree(path=path, branch="melgui/2-notes", base=base, main=main)


def test_files_changed_in_a_worktree_are_commits_edits_and_new_files(tmp_path: Path) -> None:
    worktree = _repository_with_worktree(tmp_path)
    (worktree.path / "a.txt").write_text("changed and committed\n")
    _git(worktree.path, "commit", "-qam", "change a")
    (worktree.path / "b.txt").write_text("changed, not committed\n")
    (worktree.path / "c.txt").write_text("new\n")
    (worktree.path / "debug.log").write_text("ignored\n")
    assert changed_files(worktree) == ["a.txt", "b.txt", "c.txt"]
    gone = Worktree(tmp_path / "nowhere", "x", worktree.base, worktree.main)
    assert changed_files(gone) is None


async def test_a_worker_in_a_worktree_shows_its_branch_and_git_count(tmp_path: Path) -> None:
    worktree = _repository_with_worktree(tmp_path)
    with ScriptedRelay() as relay:
        relay.script([text("Looked."), done()])
        desk = make_desk(tmp_path / "project", relay)
        session = desk.worker_session(model="relay-model", source="worker 2")
        board = AgentsBoard()
        holder: list[Worktree] = []  # the worktree is set on the pane after it exists
        board.add("pane-2", "Pane 2", session, worktree=lambda: holder[0] if holder else None)
        row = board.row("pane-2")
        assert row is not None and (row.branch, row.files_changed) == ("", 0)
        holder.append(worktree)
        (worktree.path / "c.txt").write_text("new\n")
        session.submit("look")
        await session.wait_idle()
        row = board.row("pane-2")  # asks git in a thread; the count arrives as a change
        assert row is not None and row.branch == "melgui/2-notes"
        await _until(lambda: (r := board.row("pane-2")) is not None and r.files_changed == 1)
        await session.aclose()
        await desk.aclose()


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        await asyncio.sleep(0.01)


async def test_git_counts_run_in_a_thread_one_at_a_time_and_once_more_after_changes(
    tmp_path: Path,
) -> None:
    worktree = _repository_with_worktree(tmp_path)
    release = threading.Event()
    readers: list[int] = []  # the thread of each git count

    def count(wt: Worktree) -> list[str] | None:
        readers.append(threading.get_ident())
        release.wait(10)  # the first count is slow: the worker goes on meanwhile
        return changed_files(wt)

    writes = [tool_call("write_file", {"path": name, "content": "x\n"}, id=name) for name in "cde"]
    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(writes[0], writes[1])], [tool_calls(writes[2])], [text("ok"), done()]
        )
        modes = {"write_file": "auto"}
        settings = Settings(
            connection="relay", relay_url=relay.url, model="relay-model", approval_modes=modes
        )
        desk = Desk(str(worktree.main), settings, api_key="k", plans=lambda title, md: None)
        session = desk.worker_session(model="relay-model", source="w", worktree=worktree)
        board = AgentsBoard(count_files=count)
        board.add("pane-2", "Pane 2", session, worktree=lambda: worktree)
        board.on_change(board.rows)  # as the board's view redraws on every change
        board.row("pane-2")  # shown: the first count starts, in a thread
        await _until(lambda: len(readers) == 1)
        session.submit("write three files")
        await asyncio.wait_for(session.wait_idle(), 10)  # the loop ran on while git counted
        assert len(readers) == 1, "one count in flight at a time"
        assert (worktree.path / "e").exists()
        counted: list[int] = []
        board.on_change(lambda: counted.append(1))  # the session is idle: only counts change
        release.set()
        await _until(lambda: bool(counted))  # the counting has ended, and says so once
        assert len(readers) == 2, "three tool calls meanwhile: one more count, not three"
        row = board.row("pane-2")
        assert row is not None and row.files_changed == 3
        assert len(readers) == 2 and counted == [1]
        assert threading.get_ident() not in readers
        await session.aclose()
        await desk.aclose()


@dataclass
class _HostWorker:
    """A session the melgui host runs as the board sees it: a thread model and the
    host's loop facts (a RemoteSession's parts, without the host)."""

    thread: Thread = field(default_factory=Thread)
    loop: LoopFacts = field(default_factory=lambda: LoopFacts("m", "/w"))
    busy: bool = False
    source: str = "w"


def test_a_host_reading_that_lists_only_some_files_is_counted_whole_and_said_so() -> None:
    shared = ["NOTES.md", "?", [], []]
    board = AgentsBoard(overlaps=OverlapWatch())
    big, small = _HostWorker(), _HostWorker()
    board.add("pane-1", "worker 1", big)
    board.add("pane-2", "worker 2", small)
    listed = [[f"gen/f{n}.txt", "?", [], []] for n in range(FILES_MAX - 1)]
    big.loop.read_there({"base": "b", "files": [shared, *listed], "more": 4000})
    small.loop.read_there({"base": "b", "files": [shared]})
    one, two = board.row("pane-1"), board.row("pane-2")
    assert one is not None and two is not None
    assert (one.files_changed, one.files_unlisted) == (FILES_MAX + 4000, 4000)
    assert files_text(one) == f"{FILES_MAX + 4000} ({FILES_MAX} listed)"
    assert (two.files_changed, files_text(two)) == (1, "1")
    note = "Not compared: 4000 changed files of worker 1 the host did not list."
    assert one.overlaps[-1] == note and two.overlaps[-1] == note
    assert "NOTES.md, also changed by worker 1" in two.overlaps[0]
    board.close()
