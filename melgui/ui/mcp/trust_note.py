"""A line in the chat while the project's MCP servers wait for trust, with a button that
trusts the file and starts them (the servers panel says it too, but behind a tab)."""

from __future__ import annotations

import weakref
from typing import Protocol

from melgui.tools.mcp.manager import McpManager
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.mcp.servers_panel import ServersPanel
from melgui.ui.runtime.theme import Colors

TRUST_LINK = ("act:trust-mcp/", "Trust and start")


def waiting_text(manager: McpManager) -> str | None:
    """What to say in the chat, or None when nothing waits for trust."""
    if manager.untrusted is None:
        return None
    names = sorted(n for n, s in manager.servers.items() if s.state.status == "untrusted")
    listed = ", ".join(names) if names else "its servers"
    return (
        f"MCP servers from {manager.untrusted} are waiting for trust and have not started: "
        f"{listed}. Trust the file as it is now to start them (View → MCP servers shows them)."
    )


class ChatHost(Protocol):
    """What the note uses of the window: its current chat view and colours."""

    chat: ChatView
    colors: Colors


class TrustNote:
    """Says it once in each chat view of `window` and answers the line's button."""

    def __init__(self, window: ChatHost, panel: ServersPanel) -> None:
        self._window = window
        self._panel = panel
        self._said: weakref.WeakSet[ChatView] = weakref.WeakSet()

    def mention(self) -> None:
        chat, colors = self._window.chat, self._window.colors
        text = waiting_text(self._panel.manager)
        if text is None or chat in self._said:
            return
        self._said.add(chat)
        chat.transcript.add_notice(text, colors.warn, link=TRUST_LINK)
        chat.actionRequested.connect(self._on_action)

    def _on_action(self, verb: str, _argument: str) -> None:
        if verb != "trust-mcp" or self._panel.manager.untrusted is None:
            return
        self._panel.trust_project()
        done = "Trusted: the project's MCP servers are starting."
        self._window.chat.transcript.add_notice(done, self._window.colors.muted)
