"""The Desk: one connection every session uses, swapped in place; what closing would lose."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent
from melgui.core.protocol.views.losses import Loss, LossRegistry, session_losses
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls


def relay_settings(relay: ScriptedRelay) -> Settings:
    return Settings(connection="relay", relay_url=relay.url, model="relay-model")


def make_desk(folder: Path, settings: Settings) -> Desk:
    return Desk(str(folder), settings, api_key="k", plans=lambda title, markdown: None)


async def test_a_settings_change_reaches_workers_made_before_it(tmp_path: Path) -> None:
    with ScriptedRelay() as first, ScriptedRelay() as second:
        first.script([text("from the first"), done()])
        second.script([text("from the second"), done()])
        desk = make_desk(tmp_path, relay_settings(first))
        worker = desk.worker_session(model="relay-model", source="pane 2")
        worker.submit("hello")
        await worker.wait_idle()

        previous = desk.apply_settings(relay_settings(second), "k")
        assert previous is not None
        await previous.aclose()  # the old client is closed, as the window does
        worker.submit("again")
        await worker.wait_idle()

        assert worker.last_result is not None and worker.last_result.outcome == "done"
        assert [m.content for m in worker.conversation.messages if m.role == "assistant"] == [
            "from the first",
            "from the second",
        ]
        assert [leg.last_user_text for leg in second.legs_received] == ["again"]
        await worker.aclose()
        await desk.aclose()
        first.check()
        second.check()


async def test_settings_without_a_connection_change_keep_the_transport(tmp_path: Path) -> None:
    with ScriptedRelay() as relay:
        settings = relay_settings(relay)
        desk = make_desk(tmp_path, settings)
        before = desk.connection.current
        assert desk.apply_settings(settings.model_copy(update={"theme": "dark"}), "k") is None
        assert desk.connection.current is before and desk.connection.generation == 0
        assert desk.apply_settings(settings, "another-key") is not None
        assert desk.connection.generation == 1
        await desk.aclose()


async def test_the_coordinator_names_waiting_approvals_and_turns(tmp_path: Path) -> None:
    with ScriptedRelay() as relay:
        call = tool_call("write_file", {"path": "a.txt", "content": "x"}, id="w1")
        relay.script([tool_calls(call)], [text("written"), done()])
        desk = make_desk(tmp_path, relay_settings(relay))
        session = desk.session(model="relay-model", role="assistant")
        unregister = desk.loss_registry.register(session_losses(session, "main conversation"))
        asked: list[ApprovalRequest] = []

        def observe(event: LoopEvent) -> None:
            if isinstance(event, ApprovalNeeded):
                asked.append(event.request)

        session.subscribe(observe)
        assert desk.loss_registry.losses() == []
        session.submit("write a.txt")
        while not asked:
            await asyncio.sleep(0.01)
        assert desk.loss_registry.losses() == [
            Loss("approval", "main conversation", "write_file waits for your approval")
        ]
        asked[0].approve()
        await session.wait_idle()
        assert desk.loss_registry.losses() == []
        unregister()
        assert desk.loss_registry.losses() == []
        await session.aclose()
        await desk.aclose()


def test_sources_come_and_go() -> None:
    loss_registry = LossRegistry()
    loss = Loss("process", "pane 1 (bash)", "sleep 300 is running")
    remove = loss_registry.register(lambda: [loss])
    loss_registry.register(lambda: [])
    assert [item.describe() for item in loss_registry.losses()] == [
        "pane 1 (bash): sleep 300 is running"
    ]
    remove()
    assert loss_registry.losses() == []
