"""Plan mode: a leg offers only the tools that change nothing (write_plan among them), a
write asked for anyway is refused by its judgement with a reason, and approving the plan
turns the mode off and starts the work with the plan in the message."""

from __future__ import annotations

from pathlib import Path

from melgui.core.agent.plan_mode import SOURCE
from melgui.core.config.settings import Settings
from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL
from melgui.core.protocol.catalog import READ_ONLY_TOOLS
from melgui.core.protocol.loop_events import LoopEvent, ToolCallFinished
from melgui.core.protocol.tools.pins import PIN_FACT
from melgui.core.protocol.views.plan_prompts import approved_prompt
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls

PLAN = "1. Add greet() to app.py\n2. Call it from main()"

# the run-time read-only tool too, and pin_fact (it writes only the conversation)
READING = READ_ONLY_TOOLS | {DIAGNOSTICS_TOOL.name, PIN_FACT.name}


async def test_plan_mode_offers_only_read_tools_refuses_a_write_then_approving_starts(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    write = {"path": "app.py", "content": "print('hello')\n"}
    with ScriptedRelay() as relay:
        relay.script(
            [tool_calls(tool_call("write_file", write, id="w1"))],  # asked for anyway
            [tool_calls(tool_call("write_plan", {"title": "Greet", "markdown": PLAN}, id="p1"))],
            [text("The plan is in the Plans panel."), done()],
            [tool_calls(tool_call("write_file", write, id="w2"))],
            [text("Done."), done()],
        )
        plans: list[tuple[str, str]] = []
        settings = Settings(connection="relay", relay_url=relay.base_url)
        settings.approval_modes = {**settings.approval_modes, "write_file": "auto"}
        desk = Desk(str(tmp_path), settings, api_key="k", plans=lambda t, m: plans.append((t, m)))
        session = desk.session(model="relay-model", role="assistant")
        finished: list[ToolCallFinished] = []

        def observe(event: LoopEvent) -> None:
            if isinstance(event, ToolCallFinished):
                finished.append(event)

        session.subscribe(observe)
        session.loop.plan.on = True
        session.submit("greet people")
        await session.wait_idle()
        planning = relay.legs_received[:3]
        assert all(set(leg.tool_names) <= READING for leg in planning)
        assert "write_plan" in planning[0].tool_names
        assert "write_file" not in planning[0].tool_names
        refused = finished[0]
        assert refused.call.id == "w1" and refused.status == "denied"
        assert "plan mode is on" in refused.content and "write_plan" in refused.content
        assert (tmp_path / "app.py").read_text() == "print('hi')\n"
        assert plans == [("Greet", PLAN)]

        session.loop.plan.on = False  # Approve and start
        session.submit(approved_prompt(*plans[0]))
        await session.wait_idle()
        acting = relay.legs_received[3]
        assert "write_file" in acting.tool_names and "run_command" in acting.tool_names
        assert PLAN in acting.last_user_text and "approved" in acting.last_user_text
        assert finished[-1].call.id == "w2" and finished[-1].status == "ok"
        assert (tmp_path / "app.py").read_text() == "print('hello')\n"
        await session.aclose()
        await desk.aclose()


def test_the_refusal_names_its_source() -> None:
    from melgui.core.agent.plan_mode import PlanMode
    from melgui.core.protocol.catalog import ALL_TOOLS

    plan = PlanMode(on=True)
    refused = plan.refusal(ALL_TOOLS["run_command"])
    assert refused is not None and refused.verdict == "deny" and refused.source == SOURCE
    assert plan.refusal(ALL_TOOLS["read_file"]) is None
    assert plan.refusal(ALL_TOOLS["write_plan"]) is None
    assert plan.refusal(None) is not None  # an unknown tool is refused too
    assert PlanMode().refusal(ALL_TOOLS["run_command"]) is None
