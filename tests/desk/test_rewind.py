"""Rewind to a user message through the Desk: files back as they were before it, the
conversation branched to before it (pairing intact), the model told plainly."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from melgui.core.protocol.loop_events import HistoryBranched, LoopEvent
from melgui.core.protocol.messages import Message
from melgui.desk.rewind import plan_rewind, rewind
from tests.desk.conftest import make_desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import fingerprint, make_project


async def test_rewind_restores_files_and_continues_from_there(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    git_before = fingerprint(project / ".git")
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "a.txt", "content": "one"}, id="c1"))],
        [text("wrote a"), done()],
        [
            tool_calls(
                tool_call("write_file", {"path": "a.txt", "content": "two"}, id="c2"),
                tool_call("run_command", {"command": "printf b > b.txt"}, id="c3"),
            )
        ],
        [text("changed a, wrote b"), done()],
        [text("fresh start"), done()],
    )
    desk = make_desk(project, scripted_relay)
    session = desk.session(model="m", role="assistant")
    events: list[LoopEvent] = []
    session.subscribe(events.append)
    try:
        for prompt in ("write a", "change a and write b"):
            session.submit(prompt)
            await asyncio.wait_for(session.wait_idle(), 30)
        messages = session.conversation.messages
        second = max(i for i, m in enumerate(messages) if m.role == "user")
        plan = await plan_rewind(desk.checkpoints, messages, second)
        assert [r.call_id for r in plan.records] == ["c2", "c3"]
        assert plan.restore.conflicts == ()

        restored = await rewind(desk.checkpoints, session, plan, continue_from_there=True)
        assert (project / "a.txt").read_text() == "one"
        assert not (project / "b.txt").exists()
        assert restored is not None and restored.restores == tuple(r.id for r in plan.records)
        assert fingerprint(project / ".git") == git_before

        [branched] = [e for e in events if isinstance(e, HistoryBranched)]
        assert branched.reason == "rewind" and "a.txt, b.txt" in branched.note
        assert session.conversation.messages == messages[:second]
        assert session.conversation.pending_call_ids() == []

        session.submit("something else")
        await asyncio.wait_for(session.wait_idle(), 30)
        last = scripted_relay.requests[-1].last_user_text
        assert last.startswith("[melgui] The person rewound") and last.endswith("something else")

        # The rewind is a checkpoint too: undoing it brings the discarded files back.
        await desk.checkpoints.restore([restored.id])
        assert (project / "a.txt").read_text() == "two"
        assert (project / "b.txt").read_text() == "b"
        await session.aclose()
    finally:
        await desk.aclose()


async def test_rewinding_to_a_non_user_message_is_refused(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=False)
    desk = make_desk(project, scripted_relay)
    try:
        with pytest.raises(ValueError, match="not a user message"):
            await plan_rewind(desk.checkpoints, [Message.assistant("hi")], 0)
    finally:
        await desk.aclose()
