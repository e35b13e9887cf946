"""The Desk checkpoints every call that can change files, main and workers alike, through
a real relay transport and the real tools; read-only calls take none."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.rules.policy import FixedPolicy
from melgui.core.store.checkpoints.snapshot import read_head
from tests.desk.conftest import make_desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import fingerprint, make_project


async def test_main_and_worker_calls_are_checkpointed_and_attributed(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    git_before = fingerprint(project / ".git")
    scripted_relay.script(
        [
            tool_calls(
                tool_call("read_file", {"path": "README.md"}, id="m0"),
                tool_call(
                    "edit_file",
                    {
                        "path": "src/app.py",
                        "old_string": "hello",
                        "new_string": "bye",
                    },
                    id="m1",
                ),
            )
        ],
        [text("edited"), done()],
        [tool_calls(tool_call("run_command", {"command": "printf w > worker.txt"}, id="w1"))],
        [text("written"), done()],
    )
    desk = make_desk(project, scripted_relay)
    try:
        main = desk.session(model="m", role="assistant")
        main.submit("edit app.py")
        await asyncio.wait_for(main.wait_idle(), 30)
        worker = desk.worker_session(model="m", source="pane 2")
        worker.submit("write a file")
        await asyncio.wait_for(worker.wait_idle(), 30)
        records = desk.checkpoints.records()
        assert [(r.call_id, r.tool, r.source) for r in records] == [
            ("m1", "edit_file", "main"),
            ("w1", "run_command", "pane 2"),
        ]
        assert [c.path for c in records[0].files] == ["src/app.py"]
        assert [c.path for c in records[1].files] == ["worker.txt"]
        assert records[0].summary == "src/app.py"
        await desk.checkpoints.restore([records[0].id])
        assert (project / "src" / "app.py").read_text() == "print('hello')\n"
        assert (project / "worker.txt").exists()  # the worker's change is its own
        assert fingerprint(project / ".git") == git_before
        await main.aclose()
        await worker.aclose()
    finally:
        await desk.aclose()


async def test_checkpoints_off_in_settings_take_none(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=False)
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "x.txt", "content": "x"}, id="c1"))],
        [text("ok"), done()],
    )
    desk = make_desk(project, scripted_relay)
    desk.settings.checkpoints = False
    try:
        session = desk.session(model="m", role="assistant")
        session.submit("write")
        await asyncio.wait_for(session.wait_idle(), 30)
        assert (project / "x.txt").read_text() == "x"
        assert desk.checkpoints.records() == []
        await session.aclose()
    finally:
        await desk.aclose()


async def test_a_session_opening_takes_the_folders_snapshot_in_the_background(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """Before any call, as Cline does at a task's start; not when checkpoints are off, nor
    for `melgui exec --approve reads` (no call it allows changes files)."""
    project = make_project(tmp_path, with_git=True)
    desk = make_desk(project, scripted_relay)
    try:
        desk.settings.checkpoints = False
        sessions = [desk.session(model="m", role="assistant")]
        desk.settings.checkpoints = True
        sessions.append(desk.session(model="m", role="assistant", policy=FixedPolicy("reads")))
        assert desk.checkpoints.warming is None
        sessions.append(desk.session(model="m", role="assistant"))
        warming = desk.checkpoints.warming
        assert warming is not None
        await warming
        assert read_head(desk.checkpoints.repo.git_dir) is not None
        assert desk.checkpoints.records() == []  # a snapshot, not a checkpoint of a call
        for session in sessions:
            await session.aclose()
    finally:
        await desk.aclose()
