"""A window with agents in every state, for the agents board's test and its screenshot.

The main conversation answers once (finished); three workers on the scripted relay:
one asks to run a command and waits for approval, one writes two files and finishes,
one fails (the server says it is overloaded).
"""

from __future__ import annotations

from typing import Any

from melgui.core.terminal.panes import PaneInfo
from melgui.ui.window.main_window import MainWindow
from tests.fakes import (
    RecordedRequest,
    ScriptedRelay,
    done,
    error_event,
    text,
    tool_call,
    tool_calls,
)
from tests.fakes.window import wait_until

TASKS = ("run the parser tests", "fix the flaky test", "update the changelog")
USAGE = {"prompt_tokens": 1800, "completion_tokens": 240}


def _worker(request: RecordedRequest) -> list[Any]:
    task = next((m.get("content") for m in request.messages if m.get("role") == "user"), "")
    answered = (request.last_message or {}).get("role") == "tool"
    if task == TASKS[0]:
        return [
            text("Running them."),
            tool_calls(tool_call("run_command", {"command": "pytest -q"})),
        ]
    if task == TASKS[1] and not answered:
        writes = (
            tool_call("write_file", {"path": "tests/test_clock.py", "content": "# fixed\n"}),
            tool_call("write_file", {"path": "clock.py", "content": "# steady\n"}),
        )
        return [text("Two files to change."), tool_calls(*writes, usage=USAGE)]
    if task == TASKS[1]:
        return [text("The test no longer depends on the wall clock."), done(usage=USAGE)]
    return [error_event("The model is overloaded; try again later.", retryable=False)]


def script(relay: ScriptedRelay) -> None:
    relay.on(lambda r: r.tool_role == "worker", _worker)
    relay.script([text("Three workers are on it."), done(usage=USAGE)])


async def run_agents(window: MainWindow, *, worktrees: bool = False) -> list[PaneInfo]:
    """Start the main turn and the three workers; return once each is where it stays.
    With `worktrees` (in a git project), the first two work in their own worktrees."""
    manager = window.pane_manager
    window.bridge.submit("Split the work between three workers.")
    if worktrees:
        workers = [
            (await manager.start_worker(task, None, "tab", own_worktree=n < 2))[0]
            for n, task in enumerate(TASKS)
        ]
    else:
        workers = [manager.spawn_agent(task, None, "tab") for task in TASKS]
    board = window.signals.board

    def settled() -> bool:
        states = [row.state for row in board.rows()]
        return states == ["finished", "waiting", "finished", "failed"]

    await wait_until(settled, 20)
    return workers


def settings_overrides() -> dict[str, Any]:
    """write_file without asking (the second worker's files); commands still ask."""
    from melgui.core.protocol.catalog import DEFAULT_MODES

    return {"approval_modes": {**DEFAULT_MODES, "write_file": "auto"}}
