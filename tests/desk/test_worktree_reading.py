"""A worker's worktree read where its session runs (the melgui host's reading for its
views' boards): once at the start, again after a call that may change files and after
each turn's end, never after a read-only tool's call; each new reading is told once."""

from __future__ import annotations

from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.touched import Touched, read_touched
from melgui.desk.board.worktree_reading import WorktreeReading
from melgui.desk.desk import Desk
from tests.desk.test_agents_board import _repository_with_worktree, _until
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls


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
