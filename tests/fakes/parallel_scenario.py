"""Three workers in their own worktrees of a real git project, for the overlap and merge
queue tests, their screenshots and the benchmark: two change the same line of
src/app.py (a conflict to be), the third writes NOTES.md with a TODO the project's test
command refuses; sent its failed tests back, it removes the TODO.
"""

from __future__ import annotations

from typing import Any

from melgui.core.config.settings import Settings
from melgui.core.terminal.panes import PaneInfo
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import wait_until

TASKS = ("Greet the world", "Greet the team", "Write the release notes")
TEST_COMMAND = "! grep -snH TODO NOTES.md"
_EDITS: dict[str, dict[str, Any]] = {
    TASKS[0]: {"path": "src/app.py", "old_string": "hello", "new_string": "hello, world"},
    TASKS[1]: {"path": "src/app.py", "old_string": "hello", "new_string": "hello, team"},
}


def _worker(request: RecordedRequest) -> list[Any]:
    task = next((m.get("content") for m in request.messages if m.get("role") == "user"), "")
    if (request.last_message or {}).get("role") == "tool":
        return [text(f"Done: {task.lower()}."), done()]
    if request.last_user_text.startswith("The merge queue"):
        fixed = tool_call("write_file", {"path": "NOTES.md", "content": "# Notes\n\nAll done.\n"})
        return [text("Removing the TODO."), tool_calls(fixed)]
    if task in _EDITS:
        return [tool_calls(tool_call("edit_file", _EDITS[task]))]
    notes = {"path": "NOTES.md", "content": "# Notes\n\nTODO: say what changed.\n"}
    return [tool_calls(tool_call("write_file", notes))]


def script(relay: ScriptedRelay) -> None:
    relay.on(lambda r: r.tool_role == "worker", _worker)


def settings_overrides(project: str) -> dict[str, Any]:
    return {
        "approval_modes": {**Settings().approval_modes, "edit_file": "auto", "write_file": "auto"},
        "merge_test_command": {project: TEST_COMMAND},
    }


async def start_workers(
    window: MainWindow, layouts: tuple[str, str, str] = ("tab", "tab", "tab")
) -> list[PaneInfo]:
    """The three workers, each in its own worktree; return once each has finished."""
    manager = window.pane_manager
    infos = [
        (await manager.start_worker(task, None, layout, own_worktree=True))[0]
        for task, layout in zip(TASKS, layouts, strict=True)
    ]

    def finished() -> bool:
        panes = [manager.pane(info.id) for info in infos]
        return all(
            isinstance(p, AgentPane) and p.latest_reply().startswith("Done") and not p.bridge.busy
            for p in panes
        )

    await wait_until(finished, 30)
    return infos
