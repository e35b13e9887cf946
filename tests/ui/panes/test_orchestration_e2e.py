"""End to end: the scripted relay, as orchestrator, drives a terminal and a worker pane."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter
from pytestqt.qtbot import QtBot

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.catalog import ORCHESTRATION_TOOLS
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.rules.policy import RulePolicy
from melgui.core.terminal.pty_session import process_alive
from melgui.core.transports.relay import RelayTransport
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager, WorkerSpec
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.terminal.pane import TerminalPane
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.ui.panes.pane_tools import register_orchestration

ORCHESTRATION = {tool.name for tool in ORCHESTRATION_TOOLS}


def _worker_leg(request: RecordedRequest) -> list[Any]:
    last = request.last_message or {}
    if last.get("role") == "tool":
        return [text("Wrote notes.txt."), done()]
    if "count the files" in request.last_user_text:
        return [
            text("Writing notes."),
            tool_calls(tool_call("write_file", {"path": "notes.txt", "content": "3 files"})),
        ]
    return [text(f"done: {request.last_user_text}"), done()]


def _result(request: RecordedRequest, call_id: str) -> str:
    for message in request.messages:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message.get("content"))
    raise AssertionError(f"no result for {call_id}")


def test_orchestrator_opens_a_terminal_and_a_worker_and_reads_both(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    scripted_relay: ScriptedRelay,
    tmp_path: Path,
) -> None:
    relay = scripted_relay
    worker_answered = threading.Event()
    relay.on(lambda r: r.tool_role == "worker", _worker_leg)
    relay.script(
        [
            text("Opening a terminal."),
            tool_calls(
                tool_call(
                    "open_pane",
                    {"layout": "right", "command": "bash --norc --noprofile -i"},
                    id="c1",
                )
            ),
        ],
        [
            tool_calls(
                tool_call("spawn_agent", {"layout": "down", "task": "count the files"}, id="c2")
            )
        ],
        [
            tool_calls(
                tool_call("send_keys", {"pane": 1, "text": "echo hi-$((40+2))\n"}, id="c3"),
                tool_call("send_agent", {"pane": 2, "text": "and then say done"}, id="c4"),
            )
        ],
        [
            hold(worker_answered),
            tool_calls(
                tool_call("read_pane", {"pane": 1}, id="c5"),
                tool_call("read_agent", {"pane": 2}, id="c6"),
                tool_call("list_panes", {}, id="c7"),
                tool_call("read_pane", {"pane": 99}, id="c8"),
                tool_call("send_keys", {"pane": 2, "text": "ls\n"}, id="c9"),
            ),
        ],
        [text("Both are working."), done()],
    )

    transport = RelayTransport(relay.base_url, "test-key")
    policy = RulePolicy()
    for name in ORCHESTRATION:
        policy.modes[name] = "auto"  # the person approved these; write_file still asks
    approvals: list[ApprovalRequest] = []

    def on_approval(request: ApprovalRequest) -> None:
        approvals.append(request)
        qloop.call_soon(request.approve)  # the person clicks Approve

    async def write_file(arguments: dict[str, Any]) -> ToolOutcome:
        (tmp_path / arguments["path"]).write_text(arguments["content"])
        return ToolOutcome("wrote")

    worker_tools = ToolRegistry({"write_file": write_file})

    def worker_factory(spec: WorkerSpec) -> AgentSession:
        return AgentSession(
            transport,
            worker_tools,
            policy,
            model=spec.model or "mel-default",
            role="worker",
            cwd=str(tmp_path),
            source=spec.source,
        )

    area = PaneArea()
    qtbot.addWidget(area)
    area.resize(900, 700)
    area.show()
    manager = PaneManager(
        area,
        tmp_path,
        worker_factory=worker_factory,
        on_approval=on_approval,
        terminal_env={"PATH": "/usr/bin:/bin", "PS1": "$ ", "HOME": str(tmp_path)},
    )

    def check_worker() -> None:
        pane = manager.pane(2)
        if (
            isinstance(pane, AgentPane)
            and pane.state.name == "idle"
            and "say done" in pane.latest_reply()
        ):
            worker_answered.set()

    manager.panesChanged.connect(check_worker)
    tools = ToolRegistry()
    register_orchestration(tools, manager)
    orchestrator = AgentSession(
        transport,
        tools,
        policy,
        model="mel-default",
        role="orchestrator",
        cwd=str(tmp_path),
    )

    async def run() -> None:
        orchestrator.submit("Set up a terminal and a worker.")
        await orchestrator.wait_idle()

    try:
        qloop.run_until_complete(asyncio.wait_for(run(), 60))
        assert orchestrator.last_result is not None
        assert orchestrator.last_result.outcome == "done", orchestrator.last_result

        orchestrator_legs = [r for r in relay.legs_received if r.tool_role == "orchestrator"]
        worker_legs = [r for r in relay.legs_received if r.tool_role == "worker"]
        assert len(orchestrator_legs) == 5
        assert len(worker_legs) == 3
        for leg in worker_legs:
            assert not ORCHESTRATION & set(leg.tool_names)
            assert "write_file" in leg.tool_names
        assert set(orchestrator_legs[0].tool_names) >= ORCHESTRATION
        assert worker_legs[0].messages[0] == {"role": "user", "content": "count the files"}

        last = orchestrator_legs[-1]
        assert "Opened terminal pane 1 to the right" in _result(orchestrator_legs[1], "c1")
        assert "pane 2 below" in _result(orchestrator_legs[2], "c2")
        assert "Sent 18 characters to pane 1" in _result(orchestrator_legs[3], "c3")
        screen = _result(last, "c5")
        assert "hi-42" in screen and "running" in screen
        agent = _result(last, "c6")
        assert "idle" in agent and "done: and then say done" in agent
        listing = _result(last, "c7")
        assert "1\tterminal\tbash --norc --noprofile -i\trunning" in listing
        assert "2\tagent\tworker 2: count the files\tidle" in listing
        assert "There is no pane 99" in _result(last, "c8")
        assert "worker agent" in _result(last, "c9")

        # The worker's write_file asked, was named after its pane, and ran.
        assert [r.call.name for r in approvals] == ["write_file"]
        assert approvals[0].source == "worker 2: count the files"
        assert (tmp_path / "notes.txt").read_text() == "3 files"

        # The terminal is to the right of nothing yet (first pane), the worker below it.
        terminal_frame, worker_frame = area.frame(1), area.frame(2)
        assert terminal_frame is not None and worker_frame is not None
        split = worker_frame.parentWidget()
        assert isinstance(split, QSplitter) and split.orientation() == Qt.Orientation.Vertical
        assert split.indexOf(terminal_frame) == 0 and split.indexOf(worker_frame) == 1

        terminal = manager.pane(1)
        assert isinstance(terminal, TerminalPane) and terminal.pty is not None
        pids = terminal.pty.session_pids()
        assert pids
    finally:
        manager.shutdown()
        qloop.run_until_complete(transport.aclose())
    assert not [pid for pid in pids if process_alive(pid)]
