"""Three workers in their own worktrees, on real git: two of them change the same lines,
and the board says so the moment the second edit lands; then the merge queue lands them
one at a time, rebased on what landed before, tested, and the one whose tests fail gets
its test output back as a new task."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.core.thread.entries import UserEntry
from melgui.core.worktrees.merge import abort_merge, merge_state
from melgui.core.worktrees.merge_queue.queue import MergeQueue, QueueHooks, QueueItem, QueueSettings
from melgui.desk.board.agents_board import AgentsBoard
from melgui.desk.board.overlap_watch import OverlapWatch
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.worktree_repos import (
    NUMBERED,
    add_worker,
    make_repo_with_worktree,
    run_git,
    use_test_identity,
)

CHECK = (
    "if grep -n BROKEN *.txt; then echo 'check: BROKEN found, 1 of 3 checks failed'; exit 1; fi\n"
    "echo 'check: 3 of 3 passed'\n"
)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    use_test_identity(monkeypatch)


def _numbers(line: int, words: str) -> str:
    lines = NUMBERED.splitlines(keepends=True)
    lines[line - 1] = words + "\n"
    return "".join(lines)


async def _until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met"
        await asyncio.sleep(0.01)


class Hooks(QueueHooks):
    def __init__(self, sessions: dict[str, AgentSession]) -> None:
        self.sessions = sessions

    def settings(self) -> QueueSettings:
        return QueueSettings("sh check.sh", 60.0, "send_back")

    def busy(self, key: str) -> bool:
        return self.sessions[key].busy

    def send_back(self, item: QueueItem) -> None:
        self.sessions[item.key].submit(item.task)


async def test_three_workers_two_overlapping_and_a_queue_that_sends_failed_tests_back(
    tmp_path: Path,
) -> None:
    first = make_repo_with_worktree(tmp_path, "1")
    main = first.main
    (main / "check.sh").write_text(CHECK)
    run_git(main, "add", "check.sh")
    run_git(main, "commit", "-q", "-m", "the project's check")
    FolderTrust().trust(main)  # its test command may run
    worktrees = {key: add_worker(main, key) for key in ("a", "b", "c")}
    legs = {
        "a": [[tool_calls(tool_call("write_file", {"path": "numbers.txt",
                                                    "content": _numbers(2, "two by A")}))],
              [text("A done."), done()]],
        "b": [[tool_calls(tool_call("write_file", {"path": "numbers.txt",
                                                    "content": _numbers(3, "three by B")}))],
              [text("B done."), done()]],
        "c": [[tool_calls(tool_call("write_file", {"path": "c.txt", "content": "BROKEN\n"}))],
              [text("C done."), done()],
              # its second task: the test output the queue sent back
              [tool_calls(tool_call("write_file", {"path": "c.txt", "content": "fixed\n"}))],
              [text("Fixed."), done()]],
    }  # fmt: skip
    with contextlib.ExitStack() as stack:
        sessions: dict[str, AgentSession] = {}
        relays: dict[str, ScriptedRelay] = {}
        desks: list[Desk] = []
        for key, wt in worktrees.items():
            relay = relays[key] = stack.enter_context(ScriptedRelay())
            relay.script(*legs[key])
            settings = Settings(
                connection="relay", relay_url=relay.url, model="relay-model",
                approval_modes={"write_file": "auto"},
            )  # fmt: skip
            desk = Desk(str(main), settings, api_key="k", plans=lambda title, md: None)
            desks.append(desk)
            sessions[key] = desk.worker_session(model="relay-model", source=key, worktree=wt)
        board = AgentsBoard(overlaps=OverlapWatch())
        for key, wt in worktrees.items():
            board.add(key, f"worker {key.upper()}", sessions[key], worktree=lambda w=wt: w)

        # A edits, then B edits the line beside A's: the board shows the overlap.
        sessions["a"].submit("change line 2")
        await sessions["a"].wait_idle()
        await _until(lambda: (r := board.row("a")) is not None and r.files_changed == 1)
        assert all((r.overlap, r.conflicts) == ("", 0) for r in board.rows())
        sessions["b"].submit("change line 3")
        await sessions["b"].wait_idle()
        await _until(lambda: (r := board.row("b")) is not None and r.conflicts == 1)
        a_row, b_row = board.row("a"), board.row("b")
        assert a_row is not None and b_row is not None
        assert a_row.overlap == "1 file shared with worker B (1 conflict to be)"
        assert b_row.overlaps == (
            "numbers.txt, also changed by worker A: 1 hunk clash likely to conflict "
            "(your line 3 against its line 2).",
        )
        sessions["c"].submit("add c.txt")
        await sessions["c"].wait_idle()
        await _until(lambda: (r := board.row("c")) is not None and r.files_changed == 1)
        c_row = board.row("c")
        assert c_row is not None and c_row.overlap == ""

        # Nothing lands until the queue is started.
        queue = MergeQueue(Hooks(sessions))
        for key in ("a", "c", "b"):
            queue.add(key, f"worker {key.upper()}", worktrees[key])
        head = run_git(main, "rev-parse", "HEAD")
        assert [item.state for item in queue.items] == ["waiting"] * 3
        assert run_git(main, "rev-parse", "HEAD") == head

        queue.start()
        await queue.wait()

        a, c, b = queue.items
        assert a.state == "merged", a.detail
        assert "its loose edits to 1 file committed first" in a.detail
        assert run_git(main, "show", "HEAD:numbers.txt") == _numbers(2, "two by A")
        landed_a = run_git(main, "rev-parse", "HEAD").strip()
        # C was rebased on A, its tests failed, and the worker got their output.
        assert c.state == "sent back", c.detail
        assert "failed (exit status 1)" in c.detail
        assert c.worktree.base == landed_a  # rebased on what landed before it
        assert run_git(c.worktree.path, "merge-base", "HEAD", landed_a).strip() == landed_a
        assert "check: BROKEN found" in c.output and "c.txt:1:BROKEN" in c.output
        assert not (main / "c.txt").exists()
        # B, rebased on A, meets A's line: the conflict is left for the person.
        assert b.state == "conflict", b.detail
        assert b.detail.startswith("It did not rebase cleanly on what landed before it.")
        assert "stopped with conflicts in 1 file" in b.detail
        state = await merge_state(main)
        assert state.merging and state.conflicts == ("numbers.txt",)
        assert not queue.running and queue.note.startswith("Stopped at worker B")

        # The worker read its failed tests as a new task and fixed them.
        await _until(lambda: len(relays["c"].legs_received) == 4)
        await sessions["c"].wait_idle()
        task = [e for e in sessions["c"].thread.entries if isinstance(e, UserEntry)][-1]
        assert "ran the project's test command `sh check.sh`" in task.text
        assert "c.txt:1:BROKEN" in task.text
        sent = relays["c"].legs_received[2].last_user_text
        assert "check: BROKEN found, 1 of 3 checks failed" in sent

        # The person aborts B's merge and sends C round again: it lands on top of A.
        await abort_merge(main)
        assert queue.remove("b")
        queue.add("c", "worker C", c.worktree)
        queue.start()
        await queue.wait()
        assert c.state == "merged", c.detail
        assert (main / "c.txt").read_text() == "fixed\n"
        log = run_git(main, "log", "--format=%s", "-3").splitlines()
        assert log[0].startswith("The worker's uncommitted edits to c.txt")
        assert (main / "numbers.txt").read_text() == _numbers(2, "two by A")
        assert run_git(main, "status", "--porcelain") == ""

        board.close()
        for session in sessions.values():
            await session.aclose()
        for desk in desks:
            await desk.aclose()
