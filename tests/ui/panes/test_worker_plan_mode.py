"""A worker spawned in plan mode (`/plan ` before its task) plans with read-only tools
only, and the orchestrator approves its plan with send_agent `/plan off`."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.catalog import ORCHESTRATION_TOOLS, READ_ONLY_TOOLS
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.rules.policy import RulePolicy
from melgui.core.transports.relay import RelayTransport
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager, WorkerSpec
from melgui.ui.panes.orchestration import plan_switch, plan_word
from melgui.ui.panes.pane_area import PaneArea
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.ui.panes.pane_tools import register_orchestration

PLAN = {"title": "Tidy", "markdown": "1. Remove build/"}


def test_the_plan_words() -> None:
    assert plan_word("/plan tidy up") == (True, "tidy up")
    assert plan_word("tidy up /plan") == (False, "tidy up /plan")
    assert plan_switch("/plan off") == (
        False,
        "Your plan is approved. Plan mode is off: carry it out now.",
    )
    assert plan_switch("/plan off but keep the cache") == (False, "but keep the cache")
    assert plan_switch("/plan on") == (True, "") and plan_switch("plan off") is None


def test_a_worker_plans_first_and_the_orchestrator_approves(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    relay = scripted_relay
    planned = threading.Event()

    def worker_leg(request: RecordedRequest) -> list[Any]:
        last = request.last_message or {}
        if "approved" in request.last_user_text and last.get("role") == "user":
            return [tool_calls(tool_call("write_file", {"path": "done.txt", "content": "ok"}))]
        if last.get("role") == "tool" and "done.txt" not in str(request.messages):
            planned.set()
            return [text("Planned."), done()]
        if last.get("role") == "tool":
            return [text("Done."), done()]
        return [tool_calls(tool_call("write_plan", PLAN))]

    relay.on(lambda r: r.tool_role == "worker", worker_leg)
    spawn = {"layout": "tab", "task": "/plan tidy up the build"}
    relay.script(
        [tool_calls(tool_call("spawn_agent", spawn, id="c1"))],
        [
            hold(planned),
            tool_calls(tool_call("send_agent", {"pane": 1, "text": "/plan off"}, id="c2")),
        ],
        [text("Approved."), done()],
    )
    transport = RelayTransport(relay.base_url, "test-key")
    policy = RulePolicy()
    for name in [t.name for t in ORCHESTRATION_TOOLS] + ["write_file"]:
        policy.modes[name] = "auto"

    async def write_file(arguments: dict[str, Any]) -> ToolOutcome:
        (tmp_path / arguments["path"]).write_text(arguments["content"])
        return ToolOutcome("wrote")

    async def write_plan(arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome("shown")

    worker_tools = ToolRegistry({"write_file": write_file, "write_plan": write_plan})

    def worker_factory(spec: WorkerSpec) -> AgentSession:
        return AgentSession(
            transport,
            worker_tools,
            policy,
            model="m",
            role="worker",
            cwd=str(tmp_path),
            source=spec.source,
        )

    area = PaneArea()
    qtbot.addWidget(area)
    manager = PaneManager(area, tmp_path, worker_factory=worker_factory)
    tools = ToolRegistry()
    register_orchestration(tools, manager)
    lead = AgentSession(transport, tools, policy, model="m", role="orchestrator", cwd=str(tmp_path))

    async def run() -> None:
        lead.submit("Get the build tidied, with a plan first.")
        await lead.wait_idle()
        pane = manager.pane(1)
        assert isinstance(pane, AgentPane)
        while not (tmp_path / "done.txt").exists() or pane.session.busy:
            await asyncio.sleep(0.02)

    try:
        qloop.run_until_complete(asyncio.wait_for(run(), 60))
    finally:
        manager.shutdown()
        qloop.run_until_complete(transport.aclose())
    worker_legs = [r for r in relay.legs_received if r.tool_role == "worker"]
    planning, acting = worker_legs[:2], worker_legs[2:]
    assert planning[0].last_user_text == "tidy up the build"
    assert all(set(leg.tool_names) <= READ_ONLY_TOOLS for leg in planning)
    assert acting and "write_file" in acting[0].tool_names
    assert (tmp_path / "done.txt").read_text() == "ok"
    lead_legs = [r for r in relay.legs_received if r.tool_role == "orchestrator"]
    assert "It is in plan mode" in str(lead_legs[1].messages[-1]["content"])
