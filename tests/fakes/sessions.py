"""A real AgentSession and its bridge with no server behind them, for view tests."""

from __future__ import annotations

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.rules.policy import RulePolicy
from melgui.core.transports.connection import UnconfiguredTransport
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.wire_recorder import WireRecorder


def offline_session(conversation: Conversation | None = None, source: str = "main") -> AgentSession:
    """A session whose transport answers every leg with "offline" (nothing is sent)."""
    return AgentSession(
        UnconfiguredTransport("offline"),
        ToolRegistry(),
        RulePolicy(),
        conversation if conversation is not None else Conversation(),
        model="m",
        role="assistant",
        cwd="/",
        source=source,
    )


def offline_bridge(
    conversation: Conversation | None = None,
    recorder: WireRecorder | None = None,
    source: str = "main",
) -> SessionBridge:
    return SessionBridge(offline_session(conversation, source), recorder)
