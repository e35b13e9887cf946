"""A worker's worktree read where its session runs (the melgui host's reading for its
views' boards): once at the start, again after a call that may change files and after
each turn's end, never after a read-only tool's call; each new reading is told once.
The host reads every worktree in one thread, one at a time, and git checks the files
in its own main thread: eight workers' calls ending together ran eight gits of twenty
threads each, which took the cores from the window drawing them."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from melgui.core.config.settings import Settings
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.touched import Touched, read_touched
from melgui.desk.board.worktree_reading import WorktreeReading, niced_read
from melgui.desk.desk import Desk
from tests.desk.test_agents_board import _repository_with_worktree, _until
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.worktree_repos import add_worker, run_git, use_test_identity


async def test_a_worktree_is_read_after_calls_that_may_change_it_and_turns(
    tmp_path: Path,
) -> None:
    worktree = _repository_with_worktree(tmp_path)
    reads: list[Worktree] = []

    def read(wt: Worktree) -> Touched:
        reads.append(wt)
        return read_touched(wt)

    look = tool_call("read_file", {"path": "a.txt"}, id="r1")
    write = tool_call("write_file", {"path": "notes.txt", "content": "x\n"}, id="w1")
    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(look)], [text("Looked."), done()],
            [tool_calls(write)], [text("Written."), done()],
        )  # fmt: skip
        settings = Settings(connection="relay", relay_url=relay.url, model="relay-model",
                            approval_modes={"write_file": "auto"})  # fmt: skip
        desk = Desk(str(worktree.main), settings, api_key="k", plans=lambda title, md: None)
        session = desk.worker_session(model="relay-model", source="w", worktree=worktree)
        told: list[Touched | None] = []
        reading = WorktreeReading(session, worktree, told.append, read=read)
        await _until(lambda: len(reads) == 1 and not reading.reading)
        assert told == [Touched(worktree.base, {})]  # read once at the start: nothing yet
        session.submit("look at a.txt")
        await session.wait_idle()
        await _until(lambda: len(reads) >= 2 and not reading.reading)
        assert len(reads) == 2, "the turn's end reads it; the read-only call does not"
        assert len(told) == 1, "the same reading is not told again"
        session.submit("write notes")
        await session.wait_idle()
        await _until(lambda: told[-1] is not None and "notes.txt" in told[-1].files)
        last = told[-1]
        assert last is not None and last == reading.touched
        assert last.files["notes.txt"].status == "?"
        reading.close()
        await session.aclose()
        await desk.aclose()


async def test_the_hosts_readings_of_many_worktrees_run_one_at_a_time(tmp_path: Path) -> None:
    first = _repository_with_worktree(tmp_path)
    worktrees = [first, add_worker(first.main, "w3"), add_worker(first.main, "w4")]
    lock = threading.Lock()
    in_flight = [0]
    most = [0]
    company = threading.Event()  # set when a reading starts while another runs

    def read(wt: Worktree) -> Touched:
        with lock:
            in_flight[0] += 1
            most[0] = max(most[0], in_flight[0])
            if in_flight[0] > 1:
                company.set()
        try:
            # A reading lingers a moment, as git on a large worktree does: one run beside
            # it would start meanwhile (a wait cut short the moment it does).
            company.wait(0.5)
            return niced_read(wt)
        finally:
            with lock:
                in_flight[0] -= 1

    with ScriptedRelay() as relay:
        settings = Settings(connection="relay", relay_url=relay.url, model="relay-model")
        desk = Desk(str(first.main), settings, api_key="k", plans=lambda title, md: None)
        told: list[Touched | None] = []
        sessions = [
            desk.worker_session(model="relay-model", source=f"w{n}", worktree=worktree)
            for n, worktree in enumerate(worktrees)
        ]
        readings = [
            WorktreeReading(session, worktree, told.append, read=read)
            for session, worktree in zip(sessions, worktrees, strict=True)
        ]
        await _until(lambda: len(told) == 3 and not any(r.reading for r in readings))
        assert most[0] == 1, "two worktrees were read at once"
        assert told == [Touched(worktree.base, {}) for worktree in worktrees]
        for reading in readings:
            reading.close()
        for session in sessions:
            await session.aclose()
        await desk.aclose()


def test_git_checks_the_files_in_its_main_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's preload-index checks the files' stat in one thread per 500 files of the
    index (twenty for the benchmark's 10,000); the host's reading turns it off. git's
    trace tells whether it ran."""
    use_test_identity(monkeypatch)
    main = tmp_path / "main"
    main.mkdir()
    run_git(main, "init", "-q", "-b", "main")
    for n in range(1000):  # two preload threads' worth
        (main / f"f{n:04d}.txt").write_text(f"{n}\n")
    run_git(main, "add", "-A")
    run_git(main, "commit", "-q", "-m", "start")
    base = run_git(main, "rev-parse", "HEAD").strip()
    path = tmp_path / "worktrees" / "w1"
    run_git(main, "worktree", "add", "-q", "-b", "melgui/w1", str(path), base)
    (path / "f0001.txt").write_text("changed\n")
    real = shutil.which("git")
    assert real is not None
    trace = tmp_path / "trace.json"
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    (wrapper / "git").write_text(f'#!/bin/sh\nGIT_TRACE2_EVENT={trace} exec {real} "$@"\n')
    (wrapper / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper}{os.pathsep}{os.environ['PATH']}")
    touched = niced_read(Worktree(path=path, branch="melgui/w1", base=base, main=main))
    assert set(touched.files) == {"f0001.txt"}
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert any(e["event"] == "cmd_name" and e["name"] == "diff" for e in events)
    preloads = [e for e in events if e.get("label") == "preload"]
    assert preloads == [], "git checked the files in threads of their own"
