"""A worker in its own worktree, through a real relay transport and the real tools: its
files, commands and cwd are the worktree's; the main folder is untouched; its project
memory is still the project's. Two workers editing one file at once each edit their own."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import Settings
from melgui.core.worktrees.risk import changed_files
from melgui.desk.kit import WorkspaceKit
from melgui.tools.commands.sandbox import sandbox_status
from tests.desk.conftest import make_desk
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.projects import make_project, tree


async def test_a_worker_in_a_worktree_edits_and_runs_there_only(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    before = tree(project)
    edit = {"path": "src/app.py", "old_string": "hello", "new_string": "from the worker"}
    scripted_relay.script(
        [
            tool_calls(
                tool_call("edit_file", edit, id="w1"),
                tool_call("run_command", {"command": "pwd; printf x > made.txt"}, id="w2"),
                tool_call("write_file", {"path": "../escape.txt", "content": "no"}, id="w4"),
            )
        ],
        [text("done"), done()],
    )
    desk = make_desk(project, scripted_relay)
    try:
        prepared = await asyncio.to_thread(desk.worktrees.create, 2, "edit app")
        worktree = prepared.worktree
        worker = desk.worker_session(model="m", source="pane 2", worktree=worktree)
        assert worker.loop.cwd == str(worktree.path.resolve())
        worker.submit("edit app.py")
        await asyncio.wait_for(worker.wait_idle(), 30)
        results = {
            m.tool_call_id: m.content for m in worker.conversation.messages if m.role == "tool"
        }
        assert str(worktree.path.resolve()) in results["w2"]
        assert "outside" in results["w4"].lower() or "refused" in results["w4"].lower()
        assert (worktree.path / "src" / "app.py").read_text() == "print('from the worker')\n"
        assert (worktree.path / "made.txt").read_text() == "x"
        assert tree(project) == before  # the main folder never saw any of it
        assert not (worktree.path.parent / "escape.txt").exists()
        assert [(c.status, c.path) for c in changed_files(worktree)] == [
            ("M", "src/app.py"),
            ("?", "made.txt"),
        ]
        assert desk.checkpoints.records() == []  # git versions the worktree
        await worker.aclose()
    finally:
        await desk.aclose()


async def test_a_worktree_kit_keeps_the_projects_memory(tmp_path: Path) -> None:
    project = make_project(tmp_path, with_git=True)
    elsewhere = tmp_path / "worktree"
    elsewhere.mkdir()
    settings = Settings(connection="local")
    worker_kit = WorkspaceKit(
        str(elsewhere), settings, None, lambda t, m: None, memory_project=str(project)
    )
    main_kit = WorkspaceKit(str(project), settings, None, lambda t, m: None)
    await worker_kit.registry().run("remember", {"note": "the parser lives in src"})
    recalled = await main_kit.registry().run("recall", {})
    assert "the parser lives in src" in recalled.content


@pytest.mark.skipif(not sandbox_status().available, reason="bubblewrap cannot run here")
async def test_with_the_sandbox_on_a_worktree_workers_commands_write_only_there(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    before = tree(project)
    scripted_relay.script(
        [
            tool_calls(
                tool_call(
                    "run_command",
                    {"command": f"printf x > inside.txt; printf y > {project}/escape.txt"},
                    id="s1",
                )
            )
        ],
        [text("done"), done()],
    )
    desk = make_desk(project, scripted_relay)
    desk.settings.sandbox_commands = True
    desk.apply_settings(desk.settings, "k")
    try:
        prepared = await asyncio.to_thread(desk.worktrees.create, 1, "sandboxed")
        worker = desk.worker_session(model="m", worktree=prepared.worktree)
        worker.submit("write")
        await asyncio.wait_for(worker.wait_idle(), 30)
        (result,) = [m.content for m in worker.conversation.messages if m.role == "tool"]
        # The escape failed; the shell's status for a failed redirection differs (bash 1,
        # dash 2), and the project under the sandbox's private /tmp may not exist at all.
        assert "sandboxed" in result and result.startswith("exit_code=")
        assert not result.startswith("exit_code=0\n")
        assert not (project / "escape.txt").exists()
        assert (prepared.worktree.path / "inside.txt").read_text() == "x"
        assert tree(project) == before
        await worker.aclose()
    finally:
        await desk.aclose()


async def test_two_workers_edit_the_same_file_at_once_each_in_its_own_worktree(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    before = tree(project)
    arrived: list[str] = []
    together = threading.Event()  # both first legs are in flight: neither streams before

    def leg(request: RecordedRequest) -> list[Any]:
        name = str(request.messages[-1].get("content", "")) if request.messages else ""
        if (request.last_message or {}).get("role") == "tool":
            return [text("edited"), done()]
        arrived.append(name)
        if len(arrived) == 2:
            together.set()
        edit = {"path": "src/app.py", "old_string": "hello", "new_string": f"from {name}"}
        return [hold(together, timeout=20), tool_calls(tool_call("edit_file", edit, id=name))]

    scripted_relay.on(lambda r: True, leg)
    desk = make_desk(project, scripted_relay)
    try:
        made = await asyncio.gather(
            asyncio.to_thread(desk.worktrees.create, 2, "worker a"),
            asyncio.to_thread(desk.worktrees.create, 3, "worker b"),
        )
        workers = [
            desk.worker_session(model="m", source=f"pane {n}", worktree=p.worktree)
            for n, p in zip((2, 3), made, strict=True)
        ]
        for worker, name in zip(workers, ("worker a", "worker b"), strict=True):
            worker.submit(name)
        await asyncio.wait_for(asyncio.gather(*(w.wait_idle() for w in workers)), 30)
        assert sorted(arrived) == ["worker a", "worker b"] and together.is_set()
        for worker, prepared, name in zip(workers, made, ("worker a", "worker b"), strict=True):
            (result,) = [m.content for m in worker.conversation.messages if m.role == "tool"]
            assert "error" not in result.lower(), result
            app = prepared.worktree.path / "src" / "app.py"
            assert app.read_text() == f"print('from {name}')\n"
            changed = [(c.status, c.path) for c in changed_files(prepared.worktree)]
            assert changed == [("M", "src/app.py")]
            await worker.aclose()
        assert tree(project) == before  # neither edit reached the main folder
    finally:
        await desk.aclose()
