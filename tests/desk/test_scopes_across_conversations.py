""" "Always allow" lasts as long as the scope the person chose: for this conversation it
stays in that conversation, never in a new one, a reopened one, a worker or after a
restart; for the project and everywhere it holds in all of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import Approve, Remember
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.transports.connection import make_transport
from melgui.desk.desk import Desk

EDIT = ToolCall("e1", "edit_file", json.dumps({"path": "a.txt", "old": "a", "new": "b"}))


def make_desk(folder: Path, settings: Settings) -> Desk:
    transport = make_transport(Settings(connection="relay", relay_url="http://127.0.0.1:9"), "k")
    return Desk(
        str(folder),
        settings,
        api_key="k",
        plans=lambda title, markdown: None,
        transport=transport,
    )


def asks(session: AgentSession) -> bool:
    return session.loop.policy.judge_call(EDIT, EDIT.parsed).verdict == "ask"


def always_allow(session: AgentSession, remember: Remember) -> None:
    """A person answers the session's question about EDIT with "Always allow"."""
    policy = session.loop.policy
    judgement = policy.judge_call(EDIT, EDIT.parsed)
    assert judgement.verdict == "ask"
    policy.record(EDIT, judgement, Approve(remember))


@pytest.mark.parametrize(
    ("remember", "lasts"),
    [
        ("session", False),
        ("project", True),
        ("saved", True),
    ],
)
def test_each_scope_across_new_reopened_worker_and_restart(
    remember: Remember, lasts: bool, tmp_path: Path
) -> None:
    settings = Settings()
    desk = make_desk(tmp_path, settings)
    first = desk.session(model="m", role="assistant")
    always_allow(first, remember)
    assert not asks(first)  # the conversation the person chose it in
    new = desk.session(Conversation(), model="m", role="assistant")  # Ctrl+N
    earlier = Conversation()
    earlier.messages.append(Message.user("an earlier question"))
    reopened = desk.session(earlier, model="m", role="assistant")
    worker = desk.worker_session(model="m")
    restarted = make_desk(tmp_path, settings).session(model="m", role="assistant")
    for name, session in [
        ("new", new),
        ("reopened", reopened),
        ("worker", worker),
        ("restart", restarted),
    ]:
        assert asks(session) is not lasts, (remember, name)
