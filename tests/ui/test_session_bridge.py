"""The session bridge: views hear a session's thread changes and loop events once a frame,
in the order they happened, not on the agent's own path; an approval at once; a bridge
detached or deleted with changes queued drops them."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantText,
    LegStarted,
    LoopEvent,
    ToolCallFinished,
)
from melgui.core.rules.policy import RulePolicy
from melgui.core.thread.changes import Change, TextAppended
from melgui.core.transports.relay import RelayTransport
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.qt_loop import QtEventLoop
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.sessions import offline_session
from tests.fakes.tools import RecordingTools
from tests.fakes.window import Runner

Item = tuple[str, Any]


class Heard:
    """What a view connected to `bridge` heard, in order."""

    def __init__(self, bridge: SessionBridge) -> None:
        self.items: list[Item] = []
        bridge.threadChange.connect(lambda change: self.items.append(("change", change)))
        bridge.loopEvent.connect(lambda event: self.items.append(("event", event)))


def session_on(
    relay: ScriptedRelay, folder: Path, tools: RecordingTools, *, asks: bool = False
) -> AgentSession:
    policy = RulePolicy()
    policy.modes["write_file"] = "ask" if asks else "auto"
    return AgentSession(
        RelayTransport(relay.base_url, "k"),
        tools,
        policy,
        model="m",
        role="assistant",
        cwd=str(folder),
    )


async def turn(bridge: SessionBridge) -> None:
    """Ask for a.txt; returns when the views have heard the turn end."""
    bridge.submit("Write a.txt")
    while bridge.busy:
        await asyncio.sleep(0.01)
    await bridge.session.aclose()


def test_views_hear_a_turn_in_order_but_not_on_the_loops_path(
    qtbot: QtBot, run: Runner[None], tmp_path: Path
) -> None:
    with ScriptedRelay() as relay:
        call = tool_call("write_file", {"path": "a.txt", "content": "x"}, id="w1")
        relay.script(
            [text("Let me write it. "), tool_calls(call)],
            [text("Written, "), text("as asked."), done()],
        )
        session = session_on(relay, tmp_path, RecordingTools())
        bridge = SessionBridge(session)
        heard = Heard(bridge)
        happened: list[Item] = []
        heard_then: list[int] = []  # how much the views had heard when each item happened

        def change(item: Change) -> None:  # a core listener, after the bridge's own
            happened.append(("change", item))
            heard_then.append(len(heard.items))

        def event(item: LoopEvent) -> None:
            happened.append(("event", item))
            heard_then.append(len(heard.items))

        session.thread.subscribe(change)
        session.subscribe(event)
        run(turn(bridge))
    assert heard.items == happened  # the same sequence, changes and events interleaved
    streamed = [
        n
        for n, (_kind, item) in enumerate(happened)
        if isinstance(item, (TextAppended, AssistantText, LegStarted, ToolCallFinished))
    ]
    # Two legs' starts, the call's end and each leg's text at least (a socket read's
    # deltas come as one: how many texts there are follows how the reads fall).
    assert len(streamed) >= 5
    # None of these was heard by the views on the path that made it: they came later.
    assert all(heard_then[n] <= n for n in streamed)


def test_an_approval_is_heard_at_once_with_everything_before_it(
    qtbot: QtBot, run: Runner[None], tmp_path: Path
) -> None:
    with ScriptedRelay() as relay:
        call = tool_call("write_file", {"path": "a.txt", "content": "x"}, id="w1")
        relay.script([text("Asking. "), tool_calls(call)], [text("Done."), done()])
        tools = RecordingTools()
        session = session_on(relay, tmp_path, tools, asks=True)
        bridge = SessionBridge(session)
        heard = Heard(bridge)
        happened: list[Item] = []
        at_the_question: list[list[Item]] = []
        session.thread.subscribe(lambda item: happened.append(("change", item)))

        def event(item: LoopEvent) -> None:
            happened.append(("event", item))
            if isinstance(item, ApprovalNeeded):
                at_the_question.append(list(heard.items))
                item.request.approve("once")

        session.subscribe(event)
        run(turn(bridge))
    assert at_the_question == [happened[: len(at_the_question[0])]]
    assert isinstance(at_the_question[0][-1][1], ApprovalNeeded)
    assert [name for name, _arguments in tools.ran] == ["write_file"]  # approved, it ran
    qtbot.waitUntil(lambda: heard.items == happened)


def test_a_tick_delivers_within_its_budget_and_the_rest_follows_in_order(
    qtbot: QtBot, qloop: QtEventLoop
) -> None:
    session = offline_session()
    bridge = SessionBridge(session)
    heard = Heard(bridge)
    happened: list[Item] = []
    session.thread.subscribe(lambda item: happened.append(("change", item)))
    for piece in ("a", "b", "c"):
        session.reducer.apply(AssistantText(piece))
    assert len(happened) == 3 and heard.items == []  # queued for the next frame
    assert bridge.deliver(deadline=0.0)  # past its deadline: one heard, the rest left
    assert heard.items == happened[:1]
    qtbot.waitUntil(lambda: heard.items == happened)  # the rest on the next tick, in order
    assert not bridge.deliver(math.inf)  # nothing left


def test_a_detached_bridge_drops_what_it_had_queued(qtbot: QtBot, qloop: QtEventLoop) -> None:
    session = offline_session()
    gone, witness = SessionBridge(session), SessionBridge(session)
    heard_gone, heard_witness = Heard(gone), Heard(witness)
    happened: list[Item] = []
    session.thread.subscribe(lambda item: happened.append(("change", item)))
    session.reducer.apply(AssistantText("queued"))
    gone.detach()
    session.reducer.apply(AssistantText(" and after"))
    qtbot.waitUntil(lambda: heard_witness.items == happened)  # the frame came
    assert len(happened) == 2 and heard_gone.items == []


def test_a_bridge_deleted_with_changes_queued_fails_nothing(
    qtbot: QtBot, qloop: QtEventLoop
) -> None:
    session = offline_session()
    witness = SessionBridge(session)
    heard = Heard(witness)
    happened: list[Item] = []
    session.thread.subscribe(lambda item: happened.append(("change", item)))
    deleted = SessionBridge(session)
    session.reducer.apply(AssistantText("queued"))
    deleted.deleteLater()  # as a closed pane's bridge may go, never detached
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    session.reducer.apply(AssistantText(" more"))
    qtbot.waitUntil(lambda: heard.items == happened)  # the frame came: the gone one let go
    deleted.flush()  # what a late approval does to it: nothing
    session.reducer.apply(AssistantText(" and more"))
    qtbot.waitUntil(lambda: heard.items == happened)
    assert len(happened) == 3
